"""The real window over a chat database whose search index was damaged at rest (garbage in the
FTS5 shadow table of a real SQLite file, closed cleanly, so the start-up quick check cannot see
it): the first search rebuilds the index and is answered; nothing of the chats is lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from drive import DB_NAME, assert_plain, faulty_window, saved
from window_helpers import find_in

from flarechat.emulator import EmulatorServer
from support.conversations import stored_chain
from support.damage import damage_search_index

pytestmark = pytest.mark.asyncio

TEXTS = [f"Where do herons nest? (note {index})" for index in range(30)]


async def _damaged_history(profile: Path, table: str = "messages_fts") -> tuple[str, list[str]]:
    path = profile / DB_NAME
    await asyncio.to_thread(profile.mkdir, parents=True, exist_ok=True)
    stored = await asyncio.to_thread(stored_chain, path, TEXTS, title="Heron notes")
    await asyncio.to_thread(damage_search_index, path, table)
    return stored


@pytest.mark.parametrize("table", ["messages_fts", "titles_fts"])
async def test_searching_a_damaged_index_rebuilds_it_and_shows_the_hits(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture, table: str
) -> None:
    conversation_id, ids = await _damaged_history(isolated_profile, table)
    async with faulty_window(emulator, isolated_profile, logged) as run:
        run.main.sidebar.search_field.setText("herons")
        (hits,) = await run.seen.wait("search_results")
        assert [h.message_id for h in hits] == list(reversed(ids))
        assert run.main.sidebar.results.count() == len(ids)
        assert not run.main.pane.notice_banner.isVisible()  # no "the database is damaged"
        mark = run.seen.mark()
        run.main.sidebar.search_field.setText("Heron notes")  # the titles answer too
        (hits,) = await run.seen.wait("search_results", after=mark)
        assert hits[0].message_id is None
        assert hits[0].conversation_id == conversation_id
    assert [content for _, content, _ in saved(isolated_profile / DB_NAME)] == TEXTS


async def test_find_in_a_conversation_over_a_damaged_index_finds_every_match(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    conversation_id, ids = await _damaged_history(isolated_profile)
    async with faulty_window(emulator, isolated_profile, logged) as run:
        _transcript, bar = await find_in(run.env, run.main, conversation_id)
        bar.field.setText("nest")
        _query, matches = await run.seen.wait("find_results", lambda q, _m: q == "nest")
        assert len(matches) == len(ids)
        assert not run.main.pane.notice_banner.isVisible()
    assert [content for _, content, _ in saved(isolated_profile / DB_NAME)] == TEXTS


async def test_a_read_only_database_with_a_damaged_index_says_so_plainly(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    await _damaged_history(isolated_profile)
    before = (isolated_profile / DB_NAME).read_bytes()
    async with faulty_window(emulator, isolated_profile, logged, read_only=True) as run:
        run.main.sidebar.search_field.setText("herons")
        await run.env.recorder.wait("store_problem")
        _title, text = run.banner()
        assert "search index" in text
        assert "No message was lost" in text
        assert "is damaged (" not in text  # not "the chat database is damaged"
        assert_plain(text)
    assert (isolated_profile / DB_NAME).read_bytes() == before

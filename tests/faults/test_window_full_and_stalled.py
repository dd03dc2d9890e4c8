"""The window with a full database (SQLite's max_page_count as the full disk) and against
a reply that stalls past the user's idle timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from drive import assert_plain, faulty_window

from flarechat.core.store import ChatStore
from flarechat.emulator import EmulatorServer

pytestmark = pytest.mark.asyncio

PROMPT = ("Is anything lost when the disk is full? " * 400).strip()  # needs new pages
#: SQLite's own ceiling: "space returns".
NO_CAP = 1_073_741_823


def _cap_at_current_size(store: ChatStore) -> None:
    """Every page the file has now is all it may have: writes that grow it fail SQLITE_FULL."""
    conn = store._conn
    pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
    conn.execute(f"PRAGMA max_page_count = {pages:d}")


def _uncap(store: ChatStore) -> None:
    store._conn.execute(f"PRAGMA max_page_count = {NO_CAP:d}")


@pytest.mark.slow
async def test_a_full_database_keeps_the_chat_in_memory_and_writes_it_when_space_returns(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        await run.env.store.run(_cap_at_current_size)
        outcome = await run.ask(PROMPT)
        assert outcome.data.status == "done"  # the chat goes on
        problem = await run.env.recorder.wait("store_problem")
        assert_plain(problem[0])
        assert "full" in problem[0]
        assert ("user", PROMPT, "done") in run.shown()
        mark = run.env.recorder.mark()
        await run.env.store.run(_uncap)
        # The recovery loop writes what was kept (the conversation row may have been written
        # before the disk filled up, so it is the store's recovery that is awaited, not the row).
        await run.env.recorder.wait("store_recovered", after=mark)
        second = await run.ask("And once there is room again?")
        assert second.data.status == "done"
        rows = await run.settle()
        assert ("user", PROMPT, "done") in rows  # kept in memory, written on recovery
        assert ("assistant", outcome.data.content, "done") in rows
        assert ("assistant", second.data.content, "done") in rows


@pytest.mark.slow
async def test_a_reply_that_stops_meets_the_saved_idle_timeout_and_keeps_its_text(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged, idle_timeout=5.0) as run:
        reply_id = await run.send("Give me a long answer")
        await run.env.recorder.wait("turn_text_appended", lambda m, _t: m == reply_id)
        emulator.state.set_tokens_per_second(0.05)  # the model stalls mid-reply
        outcome = await run.outcome(reply_id)
        assert outcome.data.status == "interrupted"
        assert "nothing came for 5 s" in outcome.message
        assert_plain(outcome.message)
        rows = await run.settle()
        role, content, status = rows[-1]
        assert (role, status) == ("assistant", "interrupted")
        assert content  # the text before the stall is kept

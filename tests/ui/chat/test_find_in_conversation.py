"""Find in conversation (Ctrl+F) over a long history: every match of the open conversation,
in order, reachable with next and previous; nothing from other conversations. The count is of
matches, not messages, every match is marked, and the bar sits above the transcript."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from window_helpers import find_in, settled_at, until, window

from flarechat.core.conversation import (
    Conversation,
    ConversationTree,
    new_id,
)
from flarechat.emulator import EmulatorServer
from support.conversations import chain, save, stored_chain

pytestmark = pytest.mark.asyncio

MESSAGES = 3000
#: Messages whose index modulo PERIOD is below HITS_PER_PERIOD mention the word: 700 of 3000.
PERIOD = 30
HITS_PER_PERIOD = 7
MATCHES = MESSAGES // PERIOD * HITS_PER_PERIOD
WORD = "kingfisher"
#: Every this many steps the test lets the page fill in and checks the match is on screen.
SETTLE_EVERY = 100


def _text(index: int) -> str:
    if index % PERIOD < HITS_PER_PERIOD:
        return f"A {WORD} dived here (message {index})."
    return f"Message {index}: nothing to see."


def seed(path: Path) -> tuple[str, list[str]]:
    """The 3,000-message conversation (its 700 matching ids, in order) and another one that
    mentions the word in its title and messages."""
    start = time.time() - 2 * MESSAGES
    long_haul = Conversation(id=new_id(), title="Long haul")
    messages = chain(long_haul, [_text(i) for i in range(MESSAGES)], start=start)
    other = Conversation(id=new_id(), title=f"More {WORD} sightings")
    others = chain(other, [f"A {WORD} again", f"and a {WORD} there"], start=start + MESSAGES)
    save(path, [ConversationTree(long_haul, messages), ConversationTree(other, others)])
    return long_haul.id, [m.id for i, m in enumerate(messages) if i % PERIOD < HITS_PER_PERIOD]


async def test_all_700_matches_are_reachable_with_next_and_previous(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conversation_id, wanted = await asyncio.to_thread(seed, tmp_path / "chat.sqlite3")
    assert len(wanted) == MATCHES == 700
    async with window(emulator, tmp_path) as (env, main, seen):
        transcript, bar = await find_in(env, main, conversation_id)
        shown: list[str] = []
        bar.match_selected.connect(lambda message_id, _query, _number: shown.append(message_id))
        bar.field.setText(WORD)
        query, matches = await seen.wait("find_results")
        assert (query, matches) == (WORD, wanted)  # all of them, in order, none from elsewhere
        assert bar.count.text() == f"{MATCHES} of {MATCHES}"
        await settled_at(transcript, wanted[-1])
        for step in range(MATCHES):  # next: wraps to the first, then walks to the last
            bar.next.click()
            assert transcript.marked(wanted[step]), f"match {step} not marked"
            if step % SETTLE_EVERY == 0:
                await settled_at(transcript, wanted[step])
                assert bar.count.text() == f"{step + 1} of {MATCHES}"
        assert shown[1:] == wanted
        for step in reversed(range(MATCHES - 1)):  # previous: back to the first
            bar.previous.click()
            assert transcript.marked(wanted[step]), f"match {step} not marked"
            if step % SETTLE_EVERY == 0:
                await settled_at(transcript, wanted[step])
        await settled_at(transcript, wanted[0])
        assert bar.count.text() == f"1 of {MATCHES}"
        assert shown[1 + MATCHES :] == wanted[-2::-1]


async def test_the_match_itself_is_marked_and_the_marks_go_with_the_query(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conversation_id, wanted = await asyncio.to_thread(seed, tmp_path / "chat.sqlite3")
    async with window(emulator, tmp_path) as (env, main, seen):
        transcript, bar = await find_in(env, main, conversation_id)
        bar.field.setText(WORD.upper())  # case does not matter
        await seen.wait("find_results")
        await settled_at(transcript, wanted[-1])
        view = transcript.view_for(wanted[-1])
        assert view is not None
        text = view.body.plain_text() if view.data.role == "assistant" else view.data.content
        start = text.index(WORD)
        assert transcript.marked(wanted[-1]) == [(start, start + len(WORD))]
        assert transcript.findChildren(QWidget, "flashFrame") == []  # not the whole message
        bar.field.setText(WORD + "s")  # the query changes: the old marks go at once
        assert transcript.marked(wanted[-1]) == []
        mark = seen.mark()
        bar.field.setText(WORD)
        await seen.wait("find_results", after=mark)
        await settled_at(transcript, wanted[-1])
        bar.close_bar()  # closing find clears them too
        assert transcript.marked(wanted[-1]) == []


#: Four matches in three replies: the first reply holds two.
OTTERS = ["question one", "the otter and the otter", "question two", "an otter once", "q", "otter"]


async def test_the_count_is_of_matches_and_every_match_is_marked(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    path = tmp_path / "chat.sqlite3"
    conversation_id, ids = await asyncio.to_thread(stored_chain, path, OTTERS, title="Otters")
    first, second, last = ids[1], ids[3], ids[5]
    async with window(emulator, tmp_path) as (env, main, seen):
        transcript, bar = await find_in(env, main, conversation_id)
        bar.field.setText("otter")
        await seen.wait("find_results")
        assert bar.count.text() == "4 of 4"  # not "3 of 3": the first reply holds two
        await settled_at(transcript, last)
        await until(lambda: len(transcript.marked(first)) == 2, "the other replies' marks")
        assert transcript.marked(second) == [(3, 8)]  # not the current one, marked all the same
        assert transcript.current_mark(last) == (0, 5)
        assert transcript.current_mark(first) is None
        bar.next.click()  # wraps to the first match: the first reply's first "otter"
        assert bar.count.text() == "1 of 4"
        assert transcript.current_mark(first) == (4, 9)
        assert transcript.current_mark(last) is None
        assert transcript.marked(last) == [(0, 5)]  # still marked, no longer the current one
        bar.next.click()  # the same reply's second "otter"
        assert bar.count.text() == "2 of 4"
        assert transcript.current_mark(first) == (18, 23)
        bar.next.click()
        assert (bar.count.text(), transcript.current_mark(second)) == ("3 of 4", (3, 8))
        assert transcript.current_mark(first) is None


async def test_the_find_bar_does_not_cover_the_transcript(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    path = tmp_path / "chat.sqlite3"
    conversation_id, ids = await asyncio.to_thread(stored_chain, path, OTTERS, title="Otters")
    async with window(emulator, tmp_path) as (env, main, seen):
        transcript, bar = await find_in(env, main, conversation_id)
        bar.field.setText("question")
        await seen.wait("find_results")
        await settled_at(transcript, ids[2])
        bar.previous.click()  # the first message, at the very top of the transcript
        await settled_at(transcript, ids[0])
        viewport = transcript.scroll_area.viewport()
        bar_bottom = bar.mapTo(main, bar.rect().bottomLeft()).y()
        view = transcript.view_for(ids[0])
        assert view is not None
        assert bar_bottom < viewport.mapTo(main, viewport.rect().topLeft()).y()
        assert bar_bottom < view.mapTo(main, view.rect().topLeft()).y()

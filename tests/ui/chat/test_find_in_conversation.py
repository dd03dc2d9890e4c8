"""Find in conversation (Ctrl+F) over a long history: every match of the open conversation,
in order, reachable with next and previous; nothing from other conversations."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from window_helpers import find_in, settled_at, window

from flarechat.core.conversation import (
    Conversation,
    ConversationTree,
    new_id,
)
from flarechat.emulator import EmulatorServer
from support.conversations import chain, save

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
        bar.match_selected.connect(lambda message_id, _query: shown.append(message_id))
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

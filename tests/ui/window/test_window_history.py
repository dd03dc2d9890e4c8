"""The window over a long history (real SQLite, emulator): search hits and Ctrl+F open the
conversation at the message however far back it is; "neurons today" survives a restart."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from window_helpers import find_in, settled_at, window

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    Conversation,
    Message,
    new_id,
)
from flarechat.core.figures import neurons_text
from flarechat.core.store import ChatStore, utc_day_start
from flarechat.emulator import EmulatorServer
from flarechat.ui.shared.theme import LIGHT
from flarechat.ui.sidebar.hits import hit_html
from support.conversations import stored_chain

pytestmark = pytest.mark.asyncio

HISTORY = 5000
#: 3,000 messages back from the newest.
FAR_BACK = HISTORY - 3000
#: Find-in-conversation matches spread over pages far apart.
FIND_AT = (120, 2600, 4950)


def _text(index: int) -> str:
    if index == FAR_BACK:
        return "Where do pelicans nest in winter?"
    if index in FIND_AT:
        return f"A grey heron stood here (message {index})."
    return f"Question {index}" if index % 2 == 0 else f"Answer {index}: nothing special."


def long_conversation(path: Path, *, title: str = "Long haul") -> tuple[str, list[str]]:
    """A stored HISTORY-message conversation (one transaction); its id and message ids."""
    return stored_chain(
        path,
        [_text(index) for index in range(HISTORY)],
        title=title,
        start=time.time() - HISTORY,
        message_id=_message_id,
    )


def _message_id(index: int) -> str:
    """Ids that say where a message stands, for readable failures."""
    return f"m{index:04d}-{new_id()[:8]}"


async def test_a_search_hit_3000_messages_back_opens_the_conversation_there(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conversation_id, ids = await asyncio.to_thread(long_conversation, tmp_path / "chat.sqlite3")
    async with window(emulator, tmp_path) as (_env, main, seen):
        sidebar = main.sidebar
        sidebar.search_field.setText("pelicans")
        hits = (await seen.wait("search_results"))[0]
        assert [(h.conversation_id, h.message_id) for h in hits] == [
            (conversation_id, ids[FAR_BACK])
        ]
        shown = hit_html(sidebar.results.model().index(0, 0))  # what the row paints
        assert "\x02" not in shown
        assert "\x03" not in shown
        highlight = LIGHT.match_bg
        assert f"background-color:{highlight}; color:{LIGHT.match_text};" in shown
        assert _has_pixels(sidebar.results.viewport(), QColor(highlight)), (
            "the matched word is not drawn highlighted"
        )
        assert "pelicans</span>" in shown
        sidebar.results.itemClicked.emit(sidebar.results.item(0))
        await seen.wait("focus_requested")
        transcript = main.pane.transcript
        assert transcript.message_count() == HISTORY
        await settled_at(transcript, ids[FAR_BACK])
        assert transcript.view_for(ids[-1]) is None  # the newest page was let go


def _has_pixels(widget: QWidget, color: QColor) -> bool:
    image = widget.grab().toImage()
    wanted = color.rgb()
    return any(
        image.pixel(x, y) == wanted
        for y in range(0, image.height(), 2)
        for x in range(0, image.width(), 2)
    )


async def test_find_next_and_previous_walk_across_pages(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conversation_id, ids = await asyncio.to_thread(long_conversation, tmp_path / "chat.sqlite3")
    async with window(emulator, tmp_path) as (env, main, seen):
        transcript, bar = await find_in(env, main, conversation_id)
        assert bar.isVisible()
        bar.field.setText("heron")
        query, matches = await seen.wait("find_results")
        assert (query, matches) == ("heron", [ids[i] for i in FIND_AT])
        await settled_at(transcript, ids[FIND_AT[-1]])  # the newest match first
        assert bar.count.text() == "3 of 3"
        bar.previous.click()
        await settled_at(transcript, ids[FIND_AT[1]])
        bar.previous.click()
        await settled_at(transcript, ids[FIND_AT[0]])
        assert bar.count.text() == "1 of 3"
        QTest.keyClick(bar.field, Qt.Key.Key_Return)  # Enter: next
        await settled_at(transcript, ids[FIND_AT[1]])
        assert bar.count.text() == "2 of 3"


def _stored_reply(conversation: Conversation, *, at: float, neurons: float) -> Message:
    return Message(
        id=new_id(),
        conversation_id=conversation.id,
        parent_id=None,
        role=ROLE_ASSISTANT,
        content="earlier reply",
        created_at=at,
        usage={"completion_tokens": 5, "neurons": neurons},
    )


def seed_usage(path: Path) -> None:
    """Replies from before today's 00:00 UTC (not counted) and from today (counted)."""
    now = time.time()
    midnight = utc_day_start(now)
    with ChatStore(path) as store:
        conversation = store.create_conversation(Conversation(id=new_id(), title="Spent"))
        store.add_message(_stored_reply(conversation, at=midnight - 1, neurons=100.0))
        store.add_message(_stored_reply(conversation, at=max(midnight, now - 60), neurons=12.5))


async def test_neurons_today_survive_a_restart_and_grow_with_each_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    database = tmp_path / "chat.sqlite3"
    await asyncio.to_thread(seed_usage, database)
    async with window(emulator, tmp_path) as (env, main, _seen):
        await env.recorder.wait("metrics_changed", lambda text: "neurons today" in text)
        assert main.metrics_label.text().endswith("12.50 neurons today")
        reply = env.chat.send("Count my neurons")
        assert reply is not None
        await env.finished(reply)
        await env.chat.drain()
        total = await env.store.neurons_today()
        assert total > 12.5  # the emulator bills every reply
        assert main.metrics_label.text().endswith(neurons_text(total, suffix=" today"))
    async with window(emulator, tmp_path) as (env, main, _seen):  # a restart
        await env.recorder.wait("metrics_changed", lambda text: "neurons today" in text)
        assert main.metrics_label.text().endswith(neurons_text(total, suffix=" today"))

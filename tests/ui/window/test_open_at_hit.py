"""A search hit far back opens its conversation there: the newest page is never built first
and then thrown away (issue #12: jumping 4,000 messages back)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from window_helpers import until, window

from flarechat.emulator import EmulatorServer
from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.message_list import PAGE_SIZE
from flarechat.ui.transcript.message_view import MessageView
from support.conversations import stored_chain

pytestmark = pytest.mark.asyncio(loop_scope="function")
HISTORY = 3000
HIT = 400


def stored(path: Path) -> tuple[str, list[str]]:
    texts = [f"m{index}" for index in range(HISTORY)]
    return stored_chain(path, texts, title="Far back", start=time.time() - HISTORY)


async def test_a_hit_far_back_opens_there_without_building_the_newest_page(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conversation_id, ids = await asyncio.to_thread(stored, tmp_path / "chat.sqlite3")
    async with window(emulator, tmp_path) as (env, main, seen):
        opened: list[PathView] = []
        env.chat.conversation_opened.connect(lambda _id, path: opened.append(path))
        transcript = main.pane.transcript
        column = transcript._list
        built: list[str] = []
        make = column._make_view_for

        def counted(data: MessageData, parent: QWidget) -> MessageView:
            built.append(data.id)
            return make(data, parent)

        column._make_view_for = counted
        env.workspace.open_hit(conversation_id, ids[HIT])
        await seen.wait("focus_requested")
        await until(lambda: not transcript.is_loading(), "the page around the hit")
        assert transcript.view_for(ids[HIT]) is not None
        assert opened[-1].focus == ids[HIT]
        assert ids[-1] not in built  # no widget of the newest page was made (and dropped)
        assert {ids.index(m) for m in built} <= set(range(HIT - PAGE_SIZE, HIT + PAGE_SIZE))


async def test_opening_without_a_hit_still_shows_the_newest_page(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conversation_id, ids = await asyncio.to_thread(stored, tmp_path / "chat.sqlite3")
    async with window(emulator, tmp_path) as (env, main, _seen):
        assert await env.chat.open_conversation(conversation_id)
        transcript = main.pane.transcript
        await until(lambda: not transcript.is_loading(), "the newest page")
        assert transcript.view_for(ids[-1]) is not None
        assert transcript.view_for(ids[HIT]) is None

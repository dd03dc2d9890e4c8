"""Helpers for tests of the whole window: a MainWindow on a chat environment, and waiting
until the transcript shows a message."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication
from shell_helpers import WAIT, ChatEnv, Recorder, chat_env

from flarechat.emulator import EmulatorServer
from flarechat.ui.chat.panels import FindBar
from flarechat.ui.transcript.transcript import MAX_LIVE_MESSAGES, TranscriptView
from flarechat.ui.window.main_window import MainWindow

WORKSPACE_SIGNALS = ("conversations_changed", "search_results", "find_results", "focus_requested")
POLL_S = 0.02


@asynccontextmanager
async def window(
    emulator: EmulatorServer, profile: Path, **options: Any
) -> AsyncIterator[tuple[ChatEnv, MainWindow, Recorder]]:
    """A shown MainWindow over ``chat_env`` (``options`` go to it: policy, read_only, settings),
    a draft conversation open, the list loaded."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    async with chat_env(emulator, profile, **options) as env:
        main = MainWindow(chat=env.chat, workspace=env.workspace)
        seen = Recorder(env.workspace, WORKSPACE_SIGNALS)
        main.show()
        env.chat.new_conversation()
        env.workspace.start()
        await seen.wait("conversations_changed")
        try:
            yield env, main, seen
        finally:
            main.close()
            main.deleteLater()


def next_emit(signal: object) -> asyncio.Future[tuple[object, ...]]:
    """A future set to the arguments of ``signal``'s next emission."""
    future: asyncio.Future[tuple[object, ...]] = asyncio.get_running_loop().create_future()

    def on_emit(*args: object) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(on_emit)  # type: ignore[attr-defined]
    return future


async def until(condition: Callable[[], bool], what: str) -> None:
    """Let the Qt loop run (pages fill in on its timers) until ``condition`` holds."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(POLL_S)


def on_screen(transcript: TranscriptView, message_id: str) -> bool:
    """The message has a widget and its top is inside the viewport."""
    view = transcript.view_for(message_id)
    if view is None or not view.isVisible():
        return False
    viewport = transcript.scroll_area.viewport()
    top = view.mapTo(viewport, view.rect().topLeft()).y()
    return 0 <= top < viewport.height()


async def settled_at(transcript: TranscriptView, message_id: str) -> None:
    """The transcript finished loading with the message on screen and the query marked in it."""
    await until(lambda: not transcript.is_loading(), "the page to fill in")
    assert on_screen(transcript, message_id), f"{message_id} is not on screen"
    assert transcript.marked(message_id), "the match is not marked in the message"
    assert transcript.live_count <= MAX_LIVE_MESSAGES


async def find_in(
    env: ChatEnv, main: MainWindow, conversation_id: str
) -> tuple[TranscriptView, FindBar]:
    """Open the conversation, then show the find bar as Ctrl+F does (the window's Find action)."""
    env.workspace.open(conversation_id)
    await env.recorder.wait("conversation_opened", lambda c, _m: c == conversation_id)
    wanted = QKeySequence.keyBindings(QKeySequence.StandardKey.Find)
    find: QAction = next(a for a in main.actions() if a.shortcuts() and a.shortcuts() == wanted)
    find.trigger()
    return main.pane.transcript, main.pane.find_bar

"""Whole-window states: the first-run welcome's Open settings, and a read-only database."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QWidget
from shell_helpers import ChatEnv
from window_helpers import window

from flarechat.emulator import EmulatorServer
from flarechat.ui.settings.dialog import SettingsDialog
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

FindButton = Callable[[QWidget, str], QAbstractButton]


async def test_welcome_open_settings_opens_the_settings_dialog(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with window(emulator, tmp_path, token=None, account_id="") as (_env, main, _seen):
        assert main.stack.currentWidget() is main.welcome
        unopened = main.settings_dialog
        find_button(main.welcome, "Open settings").click()
        dialog = main.settings_dialog
        assert unopened is None  # made on first use
        assert isinstance(dialog, SettingsDialog)
        assert dialog.isVisible()
        assert dialog.isModal()  # open(): window-modal, no nested exec() loop
        assert dialog.parentWidget() is main
        dialog.reject()
        assert not dialog.isVisible()


async def _send(env: ChatEnv, main: MainWindow, text: str) -> str:
    """Type into the composer and press Enter, as a user would; the reply's message id."""
    main.pane.composer.set_text(text)
    mark = env.recorder.mark()
    QTest.keyClick(main.pane.composer.editor, Qt.Key.Key_Return)
    started = await env.recorder.wait("turn_started", after=mark)
    return str(started[1])


async def test_a_read_only_database_shows_a_banner_and_the_window_keeps_working(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with window(emulator, tmp_path, read_only=True) as (env, main, _seen):
        first = await _send(env, main, "Still there?")
        problem = await env.recorder.wait("store_problem")
        banner = main.pane.notice_banner
        assert banner.isVisible()
        assert banner.kind == "error"
        assert banner.title == "Can't save to the chat database"
        assert banner.text == problem[0]
        assert "read-only" in banner.text
        assert (await env.finished(first)).status == "done"
        second = await _send(env, main, "And again?")  # the composer still sends
        data = await env.finished(second)
        await env.chat.drain()
        assert data.status == "done"
        shown = main.pane.transcript.messages()
        assert [(m.role, m.status) for m in shown] == [
            ("user", "done"),
            ("assistant", "done"),
            ("user", "done"),
            ("assistant", "done"),
        ]
        assert shown[-1].content == data.content
        assert not main.pane.composer.is_busy()
        assert banner.isVisible()  # left up across replies: nothing is being saved
        assert len(env.recorder.args("store_problem")) == 1
        assert await env.store.list_conversations() == []
        find_button(banner, "Dismiss").click()  # the user read it: it goes for good
        assert not banner.isVisible()
        env.chat.new_conversation()
        assert not banner.isVisible()

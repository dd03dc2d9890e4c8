"""Every interactive control of the main window has an accessible name (screen readers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)
from shell_helpers import MODEL, slow_policy
from window_helpers import window

from flarechat.emulator import EmulatorServer
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QComboBox,
    QAbstractItemView,
    QAbstractSpinBox,
)
CODE_REPLY = "Show me some code:\n\n```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"


def _describe(widget: QWidget) -> str:
    chain = []
    current: QWidget | None = widget
    while current is not None:
        chain.append(f"{type(current).__name__}({current.objectName()})")
        current = current.parentWidget()
    return " < ".join(chain)


def _unnamed(main: MainWindow) -> list[str]:
    widgets = [w for w in main.findChildren(QWidget) if isinstance(w, INTERACTIVE)]
    assert len(widgets) > 20  # the walk really covers the window
    return [_describe(w) for w in widgets if not w.accessibleName().strip()]


async def test_every_control_has_an_accessible_name(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as (
        env,
        main,
        seen,
    ):
        done = env.chat.send(CODE_REPLY)
        assert done is not None
        await env.finished(done)
        await seen.wait("conversations_changed", lambda items: bool(items))
        emulator.state.hold_slots(MODEL, 600)
        env.chat.new_conversation()
        busy = env.chat.send("Busy?")
        assert busy is not None
        await env.recorder.wait("retry_scheduled")
        main.pane.notice_banner.show("warning", "A notice", "With actions", [("retry", "Retry")])
        main.pane.find_bar.open_bar()
        main.picker.open_popup()
        main.sidebar.search_field.setText("code")
        await seen.wait("search_results")
        assert main.pane.retry_banner.isVisible()
        missing = _unnamed(main)
        assert not missing, "\n".join(missing)
        env.chat.cancel_retry()
        await env.chat.drain()


async def test_qt_made_buttons_get_meaningful_names(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        main.picker.open_popup()  # the model list is made when first opened
        names = {b.accessibleName() for b in main.findChildren(QAbstractButton)}
        assert {
            "Clear search all conversations",
            "Clear find in this conversation",
            "Clear search models",
            "Search",
            "New chat",
            "Settings",
            "More toolbar items",
        } <= names

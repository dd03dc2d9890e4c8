"""Start-up builds and shows the window while the database is still being opened and checked
on its worker thread (a large history's check no longer delays the first paint, issue #12); the
sidebar fills once the check has passed, and nothing is read before it has."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from window_helpers import until

from flarechat.core.conversation import Conversation, new_id
from flarechat.core.store import ChatStore, default_path
from flarechat.ui import app as gui_app
from flarechat.ui.window.main_window import MainWindow

WAIT_S = 15.0
POLL_S = 0.01
NO_KEYCHAIN = "keyring.backends.fail.Keyring"


@pytest.fixture
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as run_gui has it: _run decides when it ends
    monkeypatch.setenv("FLARECHAT_HOME", str(tmp_path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", NO_KEYCHAIN)
    path = default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


async def _first_shown(*kinds: type[QWidget]) -> QWidget:
    """The first visible top-level widget of one of these kinds."""
    async with asyncio.timeout(WAIT_S):
        while True:
            for widget in QApplication.topLevelWidgets():
                if isinstance(widget, kinds) and widget.isVisible():
                    return widget
            await asyncio.sleep(POLL_S)


@pytest.mark.asyncio
async def test_the_window_is_shown_while_the_database_is_held_then_the_list_fills(
    profile: Path,
) -> None:
    with ChatStore(profile) as chat:
        chat.create_conversation(Conversation(id=new_id(), title="Kept"))
    # Another connection's write transaction holds the open (its write waits for the lock).
    lock = sqlite3.connect(profile, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    run = asyncio.ensure_future(gui_app._run(gui_app.GuiOptions()))
    try:
        shown = await _first_shown(MainWindow, QMessageBox)
        held = isinstance(shown, MainWindow) and shown.sidebar.conversations.count() == 0
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert isinstance(shown, MainWindow)  # not a "database is busy" box after the timeout
    assert held  # the list is read only once the open has passed
    await until(lambda: shown.sidebar.conversations.count() > 0, "the conversations listed")
    titles = [
        shown.sidebar.conversations.item(row).text()
        for row in range(shown.sidebar.conversations.count())
    ]
    shown.close()
    assert await run == 0
    assert "Kept" in titles


@pytest.mark.asyncio
async def test_a_database_that_cannot_open_closes_the_window_and_explains_in_a_box(
    profile: Path,
) -> None:
    await asyncio.to_thread(profile.mkdir)  # a folder where the database file should be
    run = asyncio.ensure_future(gui_app._run(gui_app.GuiOptions()))
    box = await _first_shown(QMessageBox)
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    assert isinstance(box, QMessageBox)
    assert box.icon() == QMessageBox.Icon.Critical
    assert "folder" in box.text()
    assert not any(window.isVisible() for window in windows)
    box.done(0)
    assert await run == 1
    box.deleteLater()

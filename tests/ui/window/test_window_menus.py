"""The window's menus: File/Edit/View/Help, standard shortcuts, and the Edit text commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from window_helpers import until, window

from flarechat.emulator import EmulatorServer
from flarechat.ui.shared import text_commands
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

Keys = QKeySequence.StandardKey


def _menus(main: MainWindow) -> dict[str, QMenu]:
    menus = {}
    for action in main.menuBar().actions():
        menu = action.menu()
        assert isinstance(menu, QMenu)
        menus[action.text().replace("&", "")] = menu
    return menus


def _item(menu: QMenu, text: str) -> QAction:
    found = [a for a in menu.actions() if a.text() == text]
    assert len(found) == 1, f"{text!r} is not in the {menu.title()} menu"
    return found[0]


def _bound(action: QAction, key: QKeySequence.StandardKey) -> bool:
    """The action answers every key sequence the platform gives this standard key."""
    wanted = QKeySequence.keyBindings(key)
    return bool(wanted) and all(k in action.shortcuts() for k in wanted)


async def _focus(main: MainWindow, widget: QWidget) -> None:
    main.activateWindow()
    widget.setFocus()
    await until(lambda: QApplication.focusWidget() is widget, "the focus to move")


async def test_menus_and_standard_shortcuts(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        menus = _menus(main)
        assert list(menus) == ["File", "Edit", "View", "Help"]
        new_chat = _item(menus["File"], "New chat")
        assert _bound(new_chat, Keys.New)
        assert QKeySequence("Ctrl+N") in new_chat.shortcuts()
        quit_keys = QKeySequence.keyBindings(Keys.Quit) or [QKeySequence("Ctrl+Q")]
        assert _item(menus["File"], "Quit").shortcuts() == quit_keys
        edit = menus["Edit"]
        for label, key in (
            ("Undo", Keys.Undo),
            ("Redo", Keys.Redo),
            ("Cut", Keys.Cut),
            ("Copy", Keys.Copy),
            ("Paste", Keys.Paste),
            ("Select all", Keys.SelectAll),
            ("Find in conversation…", Keys.Find),
        ):
            assert _bound(_item(edit, label), key), label
        assert _item(edit, "Settings…") is main.settings_action
        assert _bound(_item(menus["View"], "Zoom in"), Keys.ZoomIn)
        assert _item(menus["Help"], "About Flarechat").isEnabled()


async def test_new_chat_opens_an_empty_conversation(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        reply = env.chat.send("Fill the first chat")
        assert reply is not None
        await env.finished(reply)
        first = env.chat.current_id
        assert len(main.pane.transcript.messages()) == 2
        mark = env.recorder.mark()
        _item(_menus(main)["File"], "New chat").trigger()
        opened = await env.recorder.wait("conversation_opened", after=mark)
        assert opened == (env.chat.current_id, [])
        assert env.chat.current_id != first
        assert main.pane.transcript.messages() == []
        assert main.pane.composer.text() == ""


def _choose(main: MainWindow, command: str) -> None:
    """Open the Edit menu (its items update), check the item is enabled, choose it."""
    menu = _menus(main)["Edit"]
    menu.aboutToShow.emit()
    action = main.text_actions.actions[command]
    assert action.isEnabled(), f"{command} is disabled"
    action.trigger()
    menu.aboutToHide.emit()


def _enabled(main: MainWindow) -> set[str]:
    menu = _menus(main)["Edit"]
    menu.aboutToShow.emit()
    enabled = {c for c, a in main.text_actions.actions.items() if a.isEnabled()}
    menu.aboutToHide.emit()
    return enabled


async def _edit_round_trip(main: MainWindow) -> None:
    composer = main.pane.composer.editor
    await _focus(main, composer)
    composer.setPlainText("")
    assert _enabled(main) == {"paste"}  # empty: nothing to copy, select or undo
    composer.insertPlainText("hello pelicans")
    assert _enabled(main) == {"paste", "selectAll", "undo"}
    _choose(main, "selectAll")
    assert composer.textCursor().selectedText() == "hello pelicans"
    _choose(main, "copy")
    assert QApplication.clipboard().text() == "hello pelicans"
    _choose(main, "cut")
    assert composer.toPlainText() == ""
    _choose(main, "undo")
    assert composer.toPlainText() == "hello pelicans"
    search = main.sidebar.search_field
    await _focus(main, search)
    _choose(main, "paste")
    assert search.text() == "hello pelicans"
    _choose(main, "undo")
    assert search.text() == ""
    _choose(main, "redo")
    assert search.text() == "hello pelicans"


async def test_edit_commands_act_on_the_focused_field(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _edit_round_trip(main)
        await _focus(main, main.sidebar.conversations)  # not a text field: nothing applies
        assert _enabled(main) == set()
        assert all(a.isEnabled() for a in main.text_actions.actions.values())  # keys stay live
        text_commands.run_focused("paste")  # a no-op, not an error
        await env.chat.drain()

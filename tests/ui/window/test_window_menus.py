"""The window's menus: File/Edit/Chat/View/Help, shortcuts, access keys, the Edit text commands."""

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
    """The menus the menu bar shows (Simulate is there in demo mode only)."""
    menus = {}
    for action in main.menuBar().actions():
        if not action.isVisible():
            continue
        menu = action.menu()
        assert isinstance(menu, QMenu)
        menus[action.text().replace("&", "")] = menu
    return menus


def _item(menu: QMenu, text: str) -> QAction:
    found = [a for a in menu.actions() if a.text().replace("&", "").split("\t")[0] == text]
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
        assert list(menus) == ["File", "Edit", "Chat", "View", "Lab", "Help"]
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
        await _focus(main, main.sidebar.new_button)  # not a text field: nothing applies
        assert _enabled(main) == set()
        assert all(a.isEnabled() for a in main.text_actions.actions.values())  # keys stay live
        text_commands.run_focused("paste")  # a no-op, not an error
        await env.chat.drain()


async def test_every_menu_item_has_an_access_key_and_the_chat_menu_lists_the_keys(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    """Issue 11 #7: access keys everywhere; regenerate, copy reply, branches, model picker,
    and the keys the transcript and composer handle themselves, all listed."""
    async with window(emulator, tmp_path) as (_env, main, _seen):
        for action in main.menuBar().actions():
            assert "&" in action.text(), action.text()
        chat = _menus(main)["Chat"]
        keys = {
            "Choose model…": "Ctrl+Shift+M",
            "Regenerate reply": "Ctrl+R",
            "Copy reply": "Ctrl+Shift+C",
            "Previous version": "Alt+Left",
            "Next version": "Alt+Right",
        }
        for label, sequence in keys.items():
            assert _item(chat, label).shortcut() == QKeySequence(sequence), label
        listed = {a.text().replace("&", "") for a in chat.actions()}
        for label in ("Stop reply\tEsc", "Edit last message\tUp", "Jump to latest\tCtrl+End"):
            assert label in listed
        for menu in _menus(main).values():
            for action in menu.actions():
                if not action.isSeparator() and action.menu() is None:
                    assert "&" in action.text() or action in main.text_actions.actions.values(), (
                        action.text()
                    )


async def test_regenerate_copy_and_branch_keys_act_on_the_latest_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        first = env.chat.send("Name a bird")
        assert first is not None
        data = await env.finished(first)
        main.copy_reply_action.trigger()
        assert QApplication.clipboard().text() == data.content
        mark = env.recorder.mark()
        main.regenerate_action.trigger()
        started = await env.recorder.wait("turn_started", after=mark)
        await env.finished(started[1])
        assert env.chat.path_view(env.chat.current_id or "")[-1].sibling_count == 2
        mark = env.recorder.mark()
        main.previous_branch_action.trigger()
        await env.recorder.wait("path_changed", after=mark)
        shown = env.chat.path_view(env.chat.current_id or "")[-1]
        assert (shown.id, shown.sibling_index) == (first, 0)
        await env.chat.drain()


async def test_export_is_disabled_until_there_is_something_to_export(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    """Issue 11 #6: no more "Nothing to export yet" after choosing an enabled item."""
    async with window(emulator, tmp_path) as (env, main, _seen):
        file_menu = _menus(main)["File"]
        export = _item(file_menu, "Export conversation as Markdown…")
        assert not export.isEnabled()
        assert not _item(file_menu, "Export all conversations…").isEnabled()
        reply = env.chat.send("Keep this")
        assert reply is not None
        await env.finished(reply)
        await until(export.isEnabled, "export to be enabled")
        await until(_item(file_menu, "Export all conversations…").isEnabled, "export all")
        await env.chat.drain()

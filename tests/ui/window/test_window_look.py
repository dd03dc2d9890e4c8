"""The window without dead ends (issue 11 #6, #8, #10 and the look): what New chat and the
picker say with no account, About's honesty, demo mode and the look remembered, the layout at
800 and 1920 px."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from shell_helpers import Recorder
from window_helpers import until, window

from flarechat.emulator import EmulatorServer
from flarechat.settings.schema import Settings
from flarechat.ui.chat.chat_pane import COLUMN_MAX_PX
from flarechat.ui.models.picker import NO_ACCOUNT_STATUS
from flarechat.ui.shared.theme import DARK, LIGHT, apply_theme, current_palette
from flarechat.ui.window.main_window import NO_ACCOUNT_TITLE, MainWindow
from flarechat.ui.window.window_dialogs import ABOUT_NO_KEYCHAIN, show_about

pytestmark = pytest.mark.asyncio


async def test_new_chat_without_an_account_says_what_is_missing(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, token=None, account_id="") as (_env, main, _seen):
        main.new_action.trigger()
        notice = main.pane.notice_banner
        # With no chats yet the welcome page says it; with some, the chat pane shows this.
        assert notice.isVisibleTo(main.pane)
        assert notice.title == NO_ACCOUNT_TITLE
        labels = {b.text() for b in notice.findChildren(type(main.undo_button))}
        assert {"Open settings…", "Try demo mode"} <= labels


async def test_the_picker_says_why_refresh_cannot_load_models(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, token=None, account_id="") as (env, main, _seen):
        main.picker.refresh_requested.emit()
        await env.workspace.drain()
        assert main.picker.status_text() == NO_ACCOUNT_STATUS


async def test_about_does_not_claim_a_keychain_there_is_none(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        box = show_about(main, keychain=False)
        assert "stays in the system keychain" not in box.informativeText()
        assert ABOUT_NO_KEYCHAIN in box.informativeText()
        box.close()
        env.prefs.keychain_problem = "No keychain."
        main.show_about()
        shown = [w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not main]
        assert any(ABOUT_NO_KEYCHAIN in getattr(w, "informativeText", str)() for w in shown)
        for widget in shown:
            widget.close()


async def test_demo_mode_is_remembered_for_the_next_launch(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, token=None, account_id="") as (env, main, _seen):
        demo = Recorder(env.workspace, ("demo_changed",))
        main.restore(Settings(demo_mode=True))
        await demo.wait("demo_changed")
        assert main.pane.demo_strip.isVisible()
        assert env.demo_starts == [1]


async def test_theme_and_text_size_apply_live(
    emulator: EmulatorServer, tmp_path: Path, qapp: QApplication
) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        before = qapp.font().pointSize()
        try:
            main.apply_appearance(Settings(theme="dark", font_size=before + 3))
            assert current_palette() is DARK
            assert qapp.font().pointSize() == before + 3
            main.apply_appearance(Settings(theme="light", font_size=0))
            assert current_palette() is LIGHT
            assert qapp.font().pointSize() == before
        finally:
            apply_theme(qapp, "light")


async def _sized(main: MainWindow, width: int, height: int) -> None:
    main.resize(width, height)
    await asyncio.sleep(0.05)
    QApplication.processEvents()


async def test_at_800_px_the_sidebar_narrows_and_at_1920_the_composer_is_a_column(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        await _sized(main, 800, 500)
        await until(lambda: main.sidebar.width() <= 210, "the sidebar to narrow")
        composer = main.pane.composer
        hint = composer.editor.placeholderText()
        assert composer.editor.fontMetrics().horizontalAdvance(hint) <= composer.editor.width()
        await _sized(main, 1920, 1080)
        await until(lambda: composer.width() <= COLUMN_MAX_PX, "the composer column")
        pane_centre = main.pane.width() // 2
        centre = composer.mapTo(main.pane, composer.rect().center()).x()
        assert abs(centre - pane_centre) <= 2

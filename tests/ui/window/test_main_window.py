"""The main window wired to real controllers and the emulator: welcome, banners, sidebar, state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget
from shell_helpers import (
    MODEL,
    TOKEN,
    WAIT,
    ChatEnv,
    Recorder,
    chat_env,
    make_settings,
    slow_policy,
)

from flarechat.emulator import EmulatorServer
from flarechat.settings.secrets import API_TOKEN
from flarechat.ui.control.workspace import WorkspaceController
from flarechat.ui.settings.conversation_dialog import ConversationDialog
from flarechat.ui.window.main_window import MainWindow

FindButton = Callable[[QWidget, str], QAbstractButton]

WORKSPACE_SIGNALS = (
    "conversations_changed",
    "search_results",
    "find_results",
    "conversation_deleted",
    "focus_requested",
    "models_loaded",
    "configured_changed",
    "demo_changed",
    "notice",
)


class Shell:
    def __init__(self, env: ChatEnv, window: MainWindow, *, workspace: Recorder) -> None:
        self.env, self.window, self.workspace = env, window, workspace

    async def send(self, text: str) -> str:
        """Type into the composer and press Enter; returns the reply's message id."""
        self.window.pane.composer.set_text(text)
        self.window.pane.composer.editor.setFocus()
        before = len(self.env.recorder.args("turn_started"))
        QTest.keyClick(self.window.pane.composer.editor, Qt.Key.Key_Return)
        started = self.env.recorder.args("turn_started")  # emitted synchronously by send()
        assert len(started) == before + 1, "the composer did not send"
        return str(started[-1][1])

    async def listed(self, predicate: Callable[[list[Any]], bool], *, after: int = 0) -> list[Any]:
        args = await self.workspace.wait("conversations_changed", predicate, after=after)
        return list(args[0])


@asynccontextmanager
async def shell(emulator: EmulatorServer, profile: Path, **options: Any) -> AsyncIterator[Shell]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as in the app: closing must not stop the loop
    async with chat_env(emulator, profile, **options) as env:
        window = MainWindow(chat=env.chat, workspace=env.workspace)
        recorder = Recorder(env.workspace, WORKSPACE_SIGNALS)
        window.show()
        env.chat.new_conversation()
        env.workspace.start()
        await recorder.wait("conversations_changed")
        try:
            yield Shell(env, window, workspace=recorder)
        finally:
            window.close()
            window.deleteLater()


pytestmark_async = pytest.mark.asyncio  # the sync tests below stay sync


@pytestmark_async
async def test_first_run_shows_the_welcome_and_demo_mode_replaces_it(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with shell(emulator, tmp_path, token=None, account_id="") as ui:
        window = ui.window
        assert window.stack.currentWidget() is window.welcome
        assert not window.sidebar.isVisible()
        find_button(window.welcome, "Try demo mode").click()
        await ui.workspace.wait("demo_changed")
        assert ui.env.demo_starts == [1]
        assert window.stack.currentWidget() is window.pane
        assert window.pane.demo_strip.isVisible()
        # Issue 11 #10: the strip is the one place that says so (not the title or status bar).
        assert window.windowTitle() == "Flarechat"
        assert ui.env.prefs.settings.demo_mode  # remembered for the next launch (#6)
        reply = await ui.send("Hello from the demo")
        data = await ui.env.finished(reply)
        assert data.status == "done"
        assert "cache" in data.meta_line  # through the demo gateway
        # Setting up a real account ends demo mode.
        ui.env.workspace.set_tokens({API_TOKEN: TOKEN})
        ui.env.workspace.apply_settings(make_settings(emulator))
        await ui.workspace.wait("demo_changed", lambda on: not on)
        assert not window.pane.demo_strip.isVisible()
        applied = ui.env.prefs.settings  # the new object apply_settings installed
        assert not applied.demo_mode
        assert window.route_label.text() == "Direct"


@pytestmark_async
async def test_a_reply_streams_into_the_window_and_the_sidebar_lists_it(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with shell(emulator, tmp_path) as ui:
        reply = await ui.send("What is Workers AI?")
        assert ui.window.pane.composer.is_busy()
        listed = await ui.listed(lambda items: bool(items) and items[0].title != "New chat")
        data = await ui.env.finished(reply)
        await ui.env.chat.drain()
        transcript = ui.window.pane.transcript
        shown = transcript.messages()
        assert [m.role for m in shown] == ["user", "assistant"]
        assert shown[-1].content == data.content
        assert shown[-1].status == "done"
        assert not ui.window.pane.composer.is_busy()
        assert listed[0].title == "What is Workers AI?"
        assert ui.window.windowTitle().startswith("What is Workers AI?")
        assert TOKEN not in ui.window.metrics_label.text()
        assert ui.window.metrics_label.text().startswith("llama-3.1-8b-instruct-fast")


@pytestmark_async
async def test_capacity_banner_and_cancel(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with shell(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as ui:
        emulator.state.hold_slots(MODEL, 600)
        reply = await ui.send("Busy?")
        await ui.env.recorder.wait("retry_scheduled")
        banner = ui.window.pane.retry_banner
        assert banner.isVisible()
        assert banner.countdown_running
        assert banner.title == "Workers AI is at capacity for llama-3.1-8b-instruct-fast"
        assert banner.text.startswith("Attempt 1 of 4")
        find_button(banner, "Cancel").click()
        data = await ui.env.finished(reply)
        assert not banner.isVisible()
        assert data.status == "failed"
        assert ui.window.pane.transcript.messages()[-1].status == "failed"


@pytestmark_async
async def test_capacity_banner_stays_after_the_budget_and_retry_now_succeeds(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with shell(emulator, tmp_path, reject_if_busy=True) as ui:
        emulator.state.hold_slots(MODEL, 600)
        reply = await ui.send("Busy again?")
        await ui.env.recorder.wait("turn_failed")
        banner = ui.window.pane.retry_banner
        assert banner.isVisible()
        assert not banner.countdown_running
        assert "Gave up after 4 attempts" in banner.text
        emulator.state.advance_time(601)
        find_button(banner, "Retry now").click()
        args = await ui.env.recorder.wait(
            "turn_finished", lambda m, d: m == reply and d.status == "done"
        )
        assert args[1].content
        assert not banner.isVisible()


@pytestmark_async
async def test_daily_limit_banner_names_the_reset_time(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with shell(emulator, tmp_path) as ui:
        emulator.state.fail_next(1, code=3036, status=429)
        await ui.send("Anything left today?")
        await ui.env.recorder.wait("turn_failed")
        notice = ui.window.pane.notice_banner
        assert notice.isVisible()
        assert notice.kind == "warning"
        assert notice.title.startswith("Daily free allocation used up \N{EM DASH} resets at ")
        assert notice.title.endswith(" UTC)")
        assert not ui.window.pane.retry_banner.isVisible()


@pytestmark_async
async def test_auth_banner_opens_settings(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with shell(emulator, tmp_path, token="invalid" + "y" * 33) as ui:
        await ui.send("Who am I?")
        await ui.env.recorder.wait("turn_failed")
        notice = ui.window.pane.notice_banner
        assert notice.title == "Authentication failed"
        assert notice.kind == "error"
        find_button(notice, "Open settings").click()
        dialog = ui.window.settings_dialog
        assert dialog is not None
        assert dialog.isVisible()
        dialog.reject()


@pytestmark_async
async def test_rate_limit_banner_counts_down_from_retry_after(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with shell(emulator, tmp_path) as ui:
        emulator.state.fail_next(1, code=3021, status=429, retry_after=120)  # > 60 s: no retry
        await ui.send("Too fast?")
        failed = await ui.env.recorder.wait("turn_failed")
        assert failed[1] == "rate_limit"
        assert failed[3]["retry_after"] == 120
        notice = ui.window.pane.notice_banner
        assert notice.title == "Rate limited"
        assert notice.countdown_running
        assert 100 < notice.seconds_left() <= 120


@pytestmark_async
async def test_network_failure_offers_retry(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    closed_port = "http://127.0.0.1:9/client/v4"  # discard port: nothing listens
    async with shell(emulator, tmp_path, api_base=closed_port) as ui:
        reply = await ui.send("Anyone there?")
        failed = await ui.env.recorder.wait("turn_failed")
        assert failed[:2] == (reply, "network")
        assert failed[3]["attempts"] == 4  # retried before giving up
        notice = ui.window.pane.notice_banner
        assert notice.title == "Can't reach Workers AI"
        ui.env.prefs.settings.api_base = emulator.api_base  # the network is back
        find_button(notice, "Retry").click()
        args = await ui.env.recorder.wait(
            "turn_finished", lambda m, d: m == reply and d.status == "done"
        )
        assert args[1].content


@pytestmark_async
async def test_search_delete_undo_and_pin_from_the_sidebar(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with shell(emulator, tmp_path) as ui:
        for text in ("Tell me about pelicans", "Something else entirely"):
            ui.env.chat.new_conversation()
            await ui.env.finished(await ui.send(text))
        await ui.env.chat.drain()
        summaries = await ui.listed(lambda items: len(items) == 2)
        pelicans = next(s for s in summaries if "pelicans" in s.title)
        sidebar = ui.window.sidebar
        sidebar.search_field.setText("pelicans")
        hits = (await ui.workspace.wait("search_results"))[0]
        assert {h.conversation_id for h in hits} == {pelicans.id}
        assert sidebar.results.count() == len(hits)
        sidebar.results.itemClicked.emit(sidebar.results.item(0))
        await ui.env.recorder.wait("conversation_opened", lambda c, _m: c == pelicans.id)
        sidebar.search_field.clear()
        ui.env.workspace.set_pinned(pelicans.id, True)
        pinned = await ui.listed(lambda items: any(s.pinned for s in items))
        assert pinned[0].id == pelicans.id
        assert sidebar.conversations.item(0).text() == "PINNED"
        mark = ui.workspace.mark()
        ui.env.workspace.delete(pelicans.id)
        deleted = await ui.workspace.wait("conversation_deleted")
        assert deleted[0] == pelicans.id
        assert ui.window.undo_button.isVisible()
        remaining = await ui.listed(lambda items: len(items) == 1, after=mark)
        assert pelicans.id not in {s.id for s in remaining}
        mark = ui.workspace.mark()
        ui.window.undo_button.click()
        back = await ui.listed(lambda items: len(items) == 2, after=mark)
        assert pelicans.id in {s.id for s in back}


@pytestmark_async
async def test_conversation_settings_dialog_saves_the_options(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with shell(emulator, tmp_path) as ui:
        await ui.env.finished(await ui.send("Set me up"))
        await ui.env.chat.drain()
        ui.window.open_conversation_options()
        dialog = next(
            w for w in QApplication.topLevelWidgets() if isinstance(w, ConversationDialog)
        )
        assert dialog.max_tokens.text() == "Default (2048)"
        dialog.system_prompt.setPlainText("Be brief.")
        dialog.max_tokens.setValue(300)
        find_button(dialog, "OK").click()
        await ui.env.chat.drain()
        stored = await ui.env.store.get_conversation(str(ui.env.chat.current_id))
        assert (stored.system_prompt, stored.params) == ("Be brief.", {"max_tokens": 300})


@pytestmark_async
async def test_geometry_splitter_and_zoom_survive_a_restart(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with shell(emulator, tmp_path) as ui:
        window = ui.window
        window.resize(760, 540)  # inside the offscreen screen (800x600)
        window.splitter.setSizes([300, 460])
        window.zoom(1.1)
        state = window.ui_state()
        sizes = window.splitter.sizes()
        again = MainWindow(chat=ui.env.chat, workspace=ui.env.workspace)
        try:
            again.restore_ui_state(state)
            again.show()
            assert (again.width(), again.height()) == (760, 540)
            assert again.splitter.sizes() == sizes
            assert again.ui_state()["zoom"] == state["zoom"] == "1.100"
        finally:
            again.close()
            again.deleteLater()


@pytestmark_async
async def test_ui_state_changes_are_saved_debounced(
    emulator: EmulatorServer, tmp_path: Path, signal_future: Callable[[Any], Any]
) -> None:
    async with shell(emulator, tmp_path) as ui:
        saved: list[dict[str, str]] = []
        ui.window.ui_state_changed.connect(saved.append)
        emitted = signal_future(ui.window.ui_state_changed)
        ui.window.splitter.setSizes([300, 700])
        ui.window.splitter.splitterMoved.emit(300, 1)
        ui.window.splitter.splitterMoved.emit(301, 1)
        await asyncio.wait_for(emitted, WAIT)
        assert len(saved) == 1
        assert set(saved[0]) == {"geometry", "splitter", "zoom"}


@pytestmark_async
async def test_export_contains_the_chat_and_no_token(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with shell(emulator, tmp_path) as ui:
        await ui.env.finished(await ui.send("Export me"))
        target = tmp_path / "chat.md"
        workspace: WorkspaceController = ui.env.workspace
        workspace.export_conversation(str(ui.env.chat.current_id), path=target, fmt="markdown")
        notice = await ui.workspace.wait("notice")
        assert notice[1] == "Conversation exported"
        text = target.read_text(encoding="utf-8")
        assert "Export me" in text
        assert TOKEN not in text

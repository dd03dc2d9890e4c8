"""The real composition root (run_gui / flarechat.main) driving the window against the emulator."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from flarechat import main as entry
from flarechat.core.store import ChatStore, default_path
from flarechat.emulator import DEMO_ACCOUNT_ID, EmulatorServer
from flarechat.ui.app import GuiOptions, run_gui
from flarechat.ui.window.main_window import MainWindow

TOKEN = "tok-window-3f9d0c1b7e66"
WAIT = 20.0

Driver = Callable[[MainWindow], Awaitable[None]]


@pytest.fixture
def configured(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, qapp: QApplication
) -> EmulatorServer:
    """The account comes from the environment (the keychain is the fail backend in tests)."""
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", DEMO_ACCOUNT_ID)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", TOKEN)
    monkeypatch.setenv("FLARECHAT_API_BASE", emulator.api_base)
    return emulator


async def _window() -> MainWindow:
    while True:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, MainWindow) and widget.isVisible():
                return widget
        await asyncio.sleep(0.02)


def _drive(driver: Driver, run: Callable[[], int]) -> int:
    """Start ``run`` (which runs the app's loop) with ``driver`` as a task inside that loop."""
    kept: list[asyncio.Task[None]] = []
    errors: list[BaseException] = []

    async def guarded() -> None:
        try:
            window = await asyncio.wait_for(_window(), WAIT)
            await asyncio.wait_for(driver(window), WAIT)
        except BaseException as error:
            errors.append(error)
            for widget in QApplication.topLevelWidgets():
                if isinstance(widget, MainWindow):
                    widget.close()  # never leave the app running on a failure
            raise

    QTimer.singleShot(0, lambda: kept.append(asyncio.ensure_future(guarded())))
    code = run()
    if errors:
        raise errors[0]
    return code


def _future(signal: Any, predicate: Callable[..., bool]) -> asyncio.Future[tuple[Any, ...]]:
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def resolve(*args: Any) -> None:
        if not future.done() and predicate(*args):
            future.set_result(args)

    signal.connect(resolve)
    return future


def _type_and_send(window: MainWindow, text: str) -> None:
    window.pane.composer.set_text(text)
    QTest.keyClick(window.pane.composer.editor, Qt.Key.Key_Return)


def test_a_chat_in_the_real_app_is_saved_and_quit_is_clean(
    configured: EmulatorServer, isolated_profile: Path
) -> None:
    async def driver(window: MainWindow) -> None:
        done = _future(window.chat.turn_finished, lambda _m, data: data.status == "done")
        _type_and_send(window, "Hello, real window")
        await done
        window.close()

    assert _drive(driver, lambda: run_gui(GuiOptions())) == 0
    store = ChatStore(default_path())
    try:
        (summary,) = store.list_conversations()
        assert summary.title == "Hello, real window"
        _user, reply = store.load_tree(summary.id).path()
        assert reply.status == "done"
        assert reply.content
    finally:
        store.close()
    settings = json.loads((isolated_profile / "config" / "settings.json").read_text("utf-8"))
    assert {"geometry", "splitter", "zoom"} <= set(settings["ui_state"])
    assert (isolated_profile / "cache" / "models.json").is_file()  # the live catalogue, cached
    everything = b"".join(p.read_bytes() for p in isolated_profile.rglob("*") if p.is_file())
    assert TOKEN.encode() not in everything


def test_quitting_while_a_reply_streams_saves_it_as_stopped(
    configured: EmulatorServer, isolated_profile: Path
) -> None:
    configured.state.tokens_per_second = 5

    async def driver(window: MainWindow) -> None:
        first_text = _future(window.chat.turn_text_appended, lambda _m, _t: True)
        _type_and_send(window, "Stream slowly please")
        await first_text
        window.close()  # mid-reply

    assert _drive(driver, lambda: run_gui(GuiOptions())) == 0
    store = ChatStore(default_path())
    try:
        (summary,) = store.list_conversations()
        reply = store.load_tree(summary.id).path()[-1]
        assert reply.status == "stopped"
        assert reply.content
    finally:
        store.close()


def test_flarechat_demo_opens_a_labelled_window(qapp: QApplication, isolated_profile: Path) -> None:
    seen: dict[str, Any] = {}

    async def driver(window: MainWindow) -> None:
        if window.workspace.prefs.demo is None:
            await _future(window.workspace.demo_changed, lambda on: on)
        seen["title"] = window.windowTitle()
        seen["strip"] = window.pane.demo_strip.isVisible()
        done = _future(window.chat.turn_finished, lambda _m, data: data.status == "done")
        _type_and_send(window, "Hello demo")
        seen["reply"] = (await done)[1]
        window.close()

    assert _drive(driver, lambda: entry.main(["--demo"])) == 0
    # Demo mode is said once, by the strip above the chat (not again in the title).
    assert seen["strip"]
    assert "Demo" not in seen["title"]
    assert seen["title"].count("Flarechat") == 1
    assert seen["reply"].content
    assert "cache" in seen["reply"].meta_line


def _flarechat(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flarechat", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_version_and_self_check_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite forces keyring's "fail" backend (tests/conftest.py): no keychain here.
    monkeypatch.delenv("FLARECHAT_REQUIRE_KEYRING", raising=False)
    version = _flarechat("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("flarechat ")
    check = _flarechat("--self-check")
    lines = check.stdout.splitlines()
    assert check.returncode == 0, check.stdout + check.stderr
    # No keychain is reported, not a failure: the app then offers session-only tokens.
    assert [line.split()[0] for line in lines] == ["ok", "ok", "WARN", "ok"]
    assert any("Qt platform plugin" in line for line in lines)


def test_self_check_fails_without_a_keychain_when_one_is_required() -> None:
    env = {**os.environ, "FLARECHAT_REQUIRE_KEYRING": "1"}
    check = _flarechat("--self-check", env=env)
    assert check.returncode == 1
    assert [line.split()[0] for line in check.stdout.splitlines()] == ["ok", "ok", "FAIL", "ok"]


def test_subcommands_go_to_the_cli() -> None:
    answer = _flarechat("ask", "--demo", "hello")
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip()


#: The store opens and checks on its thread while the window paints (issue #12): its notice
#: comes a moment after the window, within this many short waits.
BANNER_WAIT_TURNS, BANNER_WAIT_S = 400, 0.025


def test_a_corrupt_database_is_moved_aside_and_reported_in_the_window(
    configured: EmulatorServer, isolated_profile: Path
) -> None:
    db = default_path()
    db.parent.mkdir(parents=True, exist_ok=True)
    garbage = b"this is not a database" * 100
    db.write_bytes(garbage)
    seen: dict[str, str] = {}

    async def driver(window: MainWindow) -> None:
        banner = window.pane.notice_banner  # joins the window once the store's check is done
        for _ in range(BANNER_WAIT_TURNS):
            if banner.isVisible():
                break
            await asyncio.sleep(BANNER_WAIT_S)
        assert banner.isVisible()
        seen["title"], seen["text"] = banner.title, banner.text
        window.close()

    assert _drive(driver, lambda: run_gui(GuiOptions())) == 0
    assert "corrupt" in seen["text"].lower()
    (kept,) = db.parent.glob(f"{db.name}.corrupt-*")
    assert kept.read_bytes() == garbage  # moved aside intact, never overwritten
    fresh = ChatStore(db)  # and the app went on with a new, healthy database
    try:
        assert fresh.check_integrity() == []
        assert len(fresh.list_conversations()) <= 1
    finally:
        fresh.close()

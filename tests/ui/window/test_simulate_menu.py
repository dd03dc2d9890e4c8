"""Demo mode's Simulate menu (issue 23 #14): each entry, chosen in the window, makes the
in-process demo emulator (through its control endpoint) give the next request the failure
whose banner a new user wants to see; the menu exists only in demo mode; Help says how."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QAbstractButton, QMenu, QMessageBox, QWidget
from shell_helpers import TOKEN, ChatEnv, slow_policy
from window_helpers import next_emit, until, window

from flarechat.core import meters
from flarechat.emulator import EmulatorServer
from flarechat.settings.secrets import API_TOKEN
from flarechat.ui.chat.composer import WAITING_TEXT
from flarechat.ui.control.simulations import CAPACITY_COUNTS, HELP_TEXT
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio(loop_scope="function")

FindButton = Callable[[QWidget, str], QAbstractButton]


@asynccontextmanager
async def demo_window(
    emulator: EmulatorServer, profile: Path, **options: Any
) -> AsyncIterator[tuple[ChatEnv, MainWindow]]:
    """The window in demo mode (no account of its own), on the test's emulator."""
    async with window(emulator, profile, token=None, **options) as (env, main, _seen):
        await env.workspace.use_demo()
        assert env.prefs.demo is not None
        yield env, main


async def simulate(env: ChatEnv, main: MainWindow, key: str) -> str:
    """Choose a Simulate entry as the user does; what the status bar then says."""
    done = next_emit(env.workspace.simulated)
    main.simulate_menu.action(key).trigger()
    (text,) = await done
    assert main.statusBar().currentMessage() == text
    return str(text)


def send(env: ChatEnv, text: str) -> str:
    reply = env.chat.send(text)
    assert reply is not None
    return reply


async def test_the_menu_is_there_only_in_demo_mode(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, token=None) as (env, main, _seen):
        assert not main.simulate_menu.available
        await env.workspace.use_demo()
        assert main.simulate_menu.menu.menuAction().isVisible()  # (.available, re-read)
        titles = [a.text().replace("&", "") for a in main.menuBar().actions()]
        assert titles.index("Simulate") == titles.index("Help") - 1
        env.workspace.set_tokens({API_TOKEN: TOKEN})  # an account: demo mode ends, the menu too
        await until(lambda: env.prefs.demo is None, "demo mode to end")
        assert not main.simulate_menu.available


async def test_capacity_for_the_next_requests_shows_the_retry_banner(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with demo_window(emulator, tmp_path, policy=slow_policy()) as (env, main):
        assert 1 in CAPACITY_COUNTS
        said = await simulate(env, main, "capacity-1")
        assert said.startswith("Busy for the next request:")
        reply = send(env, "Are you busy?")
        await env.recorder.wait("retry_scheduled", lambda m, *_: m == reply)
        banner = main.pane.retry_banner
        await until(banner.isVisible, "the retry banner")
        assert "capacity" in banner.title.lower()
        env.chat.retry_now()  # the one busy request is over: the retry is answered
        data = await env.finished(reply)
        assert data.status == "done"
        await until(lambda: not banner.isVisible(), "the banner to go")


async def test_a_slow_first_byte_shows_the_wait(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with demo_window(emulator, tmp_path) as (env, main):
        await simulate(env, main, "slow-first-byte")
        reply = send(env, "Take your time")
        label = main.pane.composer.queued_label
        await until(label.isVisible, "the wait label")
        assert label.text().startswith(WAITING_TEXT.split("{", 1)[0])
        data = await env.finished(reply)
        assert data.status == "done"


async def test_the_daily_allocation_used_up_shows_its_banner_and_a_full_gauge(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with demo_window(emulator, tmp_path) as (env, main):
        main.lab_hooks.lab.set_usage_source(env.store)
        await simulate(env, main, "daily-allocation")
        reply = send(env, "Anything left today?")
        await env.recorder.wait("turn_failed", lambda m, *_: m == reply)
        notice = main.pane.notice_banner
        await until(notice.isVisible, "the daily-limit banner")
        assert notice.title.startswith("Daily free allocation used up")
        gauge = main.lab_hooks.gauge
        await until(lambda: gauge.bar.value() == meters.FREE_DAILY_NEURONS, "a full gauge")
        # demo mode's day only: the real account's is untouched
        assert await env.store.neurons_today() == 0.0


async def test_a_licence_to_accept_shows_its_banner_and_agreeing_sends(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with demo_window(emulator, tmp_path) as (env, main):
        await simulate(env, main, "licence")
        reply = send(env, "May I?")
        await env.recorder.wait("turn_failed", lambda m, *_: m == reply)
        notice = main.pane.notice_banner
        await until(notice.isVisible, "the licence banner")
        assert notice.title.startswith("Accept the licence of ")
        mark = env.recorder.mark()
        find_button(notice, "Agree and continue").click()
        args = await env.recorder.wait(
            "turn_finished", lambda _m, d: d.status == "done", after=mark
        )
        assert args[1].content


async def test_clearing_the_simulations_lets_the_next_request_through(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with demo_window(emulator, tmp_path, policy=slow_policy()) as (env, main):
        await simulate(env, main, "capacity-3")
        await simulate(env, main, "reset")
        data = await env.finished(send(env, "All well again?"))
        assert data.status == "done"
        assert not env.recorder.args("retry_scheduled")


async def test_help_says_how_to_see_every_banner(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        help_menu = next(
            a.menu() for a in main.menuBar().actions() if a.text().replace("&", "") == "Help"
        )
        assert isinstance(help_menu, QMenu)
        entry = next(a for a in help_menu.actions() if "Simulate" in a.text())
        entry.trigger()  # as the user chooses it, outside demo mode too
        await until(lambda: _help_box(main) is not None, "the Help box")
        box = _help_box(main)
        assert box is not None
        assert box.text() == HELP_TEXT
        assert "Simulate" in box.text()
        assert "--demo" in box.text()
        box.close()


def _help_box(main: MainWindow) -> QMessageBox | None:
    boxes = [b for b in main.findChildren(QMessageBox) if b.isVisible()]
    return boxes[0] if boxes else None

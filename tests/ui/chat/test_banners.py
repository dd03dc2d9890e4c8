"""RetryBanner and NoticeBanner: texts, live countdowns (fake clock), actions, dismissal."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QAbstractButton, QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.chat.banners import (
    ACTION_OPEN_SETTINGS,
    NoticeBanner,
    RetryBanner,
    daily_reset_text,
)

FindButton = Callable[[QWidget, str], QAbstractButton]
SignalFuture = Callable[[SignalInstance], "asyncio.Future[tuple[Any, ...]]"]
#: Bound on waiting for a real timer to fire: generous, since a busy machine delays timers
#: (never reached when the timer works).
PATIENCE_S = 30


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def retry_banner(qtbot: QtBot, clock: FakeClock) -> RetryBanner:
    banner = RetryBanner(clock=clock)
    qtbot.addWidget(banner)
    return banner


@pytest.fixture
def notice(qtbot: QtBot, clock: FakeClock) -> NoticeBanner:
    banner = NoticeBanner(clock=clock)
    qtbot.addWidget(banner)
    return banner


@pytest.fixture
def utc_plus_one(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "CET-1")  # POSIX form: UTC+1 all year, no tz database needed
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_capacity_banner_counts_down_each_second(
    retry_banner: RetryBanner, clock: FakeClock
) -> None:
    retry_banner.show_capacity(
        model="@cf/meta/llama-3.3-70b-instruct-fp8-fast", attempt=2, max_attempts=4, seconds=6.2
    )
    assert retry_banner.isVisibleTo(retry_banner.parentWidget() or retry_banner)
    assert retry_banner.title == (
        "Workers AI is at capacity for @cf/meta/llama-3.3-70b-instruct-fp8-fast"
    )
    assert retry_banner.text == "Attempt 2 of 4 · retrying in 7 s"
    clock.now += 3
    retry_banner.refresh()
    assert retry_banner.text == "Attempt 2 of 4 · retrying in 4 s"
    clock.now += 10
    retry_banner.refresh()
    assert retry_banner.text == "Attempt 2 of 4 · retrying now…"


def test_capacity_banner_ticks_on_its_own(qtbot: QtBot) -> None:
    banner = RetryBanner()  # real clock and the real 1 s timer
    qtbot.addWidget(banner)
    banner.show_capacity(model="m", attempt=1, max_attempts=4, seconds=3)
    assert banner.text.endswith("retrying in 3 s")
    # The countdown is to a deadline: on a busy machine a tick can come late and skip a second,
    # so wait for any tick rather than for "2 s" exactly.
    qtbot.waitUntil(lambda: not banner.text.endswith("in 3 s"), timeout=PATIENCE_S * 1000)
    assert re.search(r"retrying (in [0-2] s|now…)$", banner.text), banner.text


def test_the_retry_banner_closes_with_cancel_only(
    retry_banner: RetryBanner, find_button: FindButton
) -> None:
    """Issue 11 #10: Cancel or a close button, not both; Cancel works before and after giving up."""
    retry_banner.show_capacity(model="m", attempt=1, max_attempts=4, seconds=5)
    with pytest.raises(AssertionError):
        find_button(retry_banner, "Dismiss")
    retry_banner.show_exhausted(model="m", attempts=4)
    assert not retry_banner.countdown_running
    assert "Gave up after 4 attempts" in retry_banner.text
    with pytest.raises(AssertionError):
        find_button(retry_banner, "Dismiss")
    find_button(retry_banner, "Cancel").click()
    assert retry_banner.isHidden()


@pytest.mark.parametrize(
    ("label", "signal_name"),
    [
        ("Retry now", "retry_now_requested"),
        ("Wait in queue", "wait_in_queue_requested"),
        ("Switch model", "switch_model_requested"),
        ("Cancel", "cancel_requested"),
    ],
)
def test_retry_banner_actions_emit_their_signals(
    qtbot: QtBot,
    retry_banner: RetryBanner,
    find_button: FindButton,
    label: str,
    signal_name: str,
) -> None:
    retry_banner.show_capacity(model="m", attempt=1, max_attempts=4, seconds=5)
    with qtbot.waitSignal(getattr(retry_banner, signal_name)):
        find_button(retry_banner, label).click()


def test_cancel_hides_the_banner_and_stops_the_countdown(
    retry_banner: RetryBanner, find_button: FindButton
) -> None:
    retry_banner.show_capacity(model="m", attempt=1, max_attempts=4, seconds=5)
    find_button(retry_banner, "Cancel").click()
    assert retry_banner.isHidden()
    assert not retry_banner.countdown_running


def test_notice_shows_kind_title_text_and_action_buttons(
    qtbot: QtBot, notice: NoticeBanner, find_button: FindButton
) -> None:
    notice.show(
        "error",
        "Authentication failed",
        "Cloudflare rejected the API token (code 10000).",
        [(ACTION_OPEN_SETTINGS, "Open settings")],
    )
    assert notice.kind == "error"
    assert notice.title == "Authentication failed"
    assert "code 10000" in notice.text
    with qtbot.waitSignal(notice.action_triggered) as blocker:
        find_button(notice, "Open settings").click()
    assert blocker.args == [ACTION_OPEN_SETTINGS]
    notice.show("info", "Back online", "", [])
    with pytest.raises(AssertionError):
        find_button(notice, "Open settings")  # the old actions are gone
    with qtbot.waitSignal(notice.dismissed):
        find_button(notice, "Dismiss").click()


def test_notice_show_without_arguments_is_plain_show(notice: NoticeBanner) -> None:
    notice.show()
    assert not notice.isHidden()


def test_rate_limit_countdown_finishes_and_becomes_dismissable(
    qtbot: QtBot, notice: NoticeBanner, clock: FakeClock, find_button: FindButton
) -> None:
    notice.show("warning", "Rate limited", "Too many requests this minute.", [])
    notice.show_countdown(12)
    assert notice.text == "Too many requests this minute.\nRetrying in 12 s"
    with pytest.raises(AssertionError):
        find_button(notice, "Dismiss")
    clock.now += 12
    with qtbot.waitSignal(notice.countdown_finished):
        notice.refresh()
    assert notice.text.endswith("Retrying in 0 s")
    find_button(notice, "Dismiss")


@pytest.mark.usefixtures("utc_plus_one")
def test_daily_allocation_banner_says_when_it_resets_in_local_time(notice: NoticeBanner) -> None:
    assert daily_reset_text(now=datetime(2026, 1, 5, 15, 30, tzinfo=UTC)) == (
        "resets at 01:00 (00:00 UTC)"
    )
    notice.show_daily_allocation(now=datetime(2026, 1, 5, 23, 59, tzinfo=UTC))
    assert notice.title == "Daily free allocation used up — resets at 01:00 (00:00 UTC)"
    assert notice.kind == "warning"
    assert not notice.countdown_running


@pytest.mark.asyncio
async def test_countdown_signal_on_the_qasync_loop(signal_future: SignalFuture) -> None:
    banner = NoticeBanner()
    try:
        finished = signal_future(banner.countdown_finished)
        banner.show("warning", "Rate limited", "", [])
        banner.show_countdown(1)
        await asyncio.wait_for(finished, timeout=PATIENCE_S)
        assert banner.text == "Retrying in 0 s"
    finally:
        banner.deleteLater()

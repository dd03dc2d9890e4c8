"""The composer's Reject-if-busy switch and queue time, its placeholder, and the retry banner's
single way out (issue 11 #5 widget side, #10)."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QApplication
from pytestqt.qtbot import QtBot

from flarechat.ui.chat.banners import RetryBanner
from flarechat.ui.chat.composer import PLACEHOLDER, SHORT_PLACEHOLDER, ComposerWidget

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_reject_if_busy_is_a_visible_switch(qtbot: QtBot) -> None:
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.show()
    assert composer.reject_toggle.isVisible()
    with qtbot.assertNotEmitted(composer.reject_if_busy_toggled):
        composer.set_reject_if_busy(True)
    assert composer.reject_toggle.isChecked()
    with qtbot.waitSignal(composer.reject_if_busy_toggled) as toggled:
        composer.reject_toggle.click()
    assert toggled.args == [False]


def test_queued_time_counts_up_until_cleared(qtbot: QtBot) -> None:
    clock = Clock()
    composer = ComposerWidget(clock=clock)
    qtbot.addWidget(composer)
    composer.show()
    composer.show_queued()
    assert composer.queued_label.isVisible()
    clock.now += 7.4
    composer._show_queued_time()  # what the 1 s tick does
    assert composer.queued_label.text() == "Waiting in Cloudflare's queue \N{MIDDLE DOT} 7 s"
    assert composer.queued_seconds() == 7
    composer.clear_queued()
    assert not composer.queued_label.isVisible()
    assert composer.queued_seconds() is None


def test_the_placeholder_is_shortened_rather_than_clipped(qtbot: QtBot) -> None:
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.set_model(MODEL)
    composer.resize(1000, composer.sizeHint().height())
    composer.show()
    QApplication.processEvents()
    assert composer.editor.placeholderText() == PLACEHOLDER.format(model=MODEL.rsplit("/")[-1])
    composer.resize(420, composer.height())
    QApplication.processEvents()
    short = SHORT_PLACEHOLDER.format(model=MODEL.rsplit("/")[-1])
    assert composer.editor.placeholderText() == short
    metrics = composer.editor.fontMetrics()
    assert metrics.horizontalAdvance(short) <= composer.editor.viewport().width()


def test_a_given_up_retry_banner_offers_cancel_not_also_a_close_button(qtbot: QtBot) -> None:
    banner = RetryBanner()
    qtbot.addWidget(banner)
    banner.show_exhausted(model="llama", attempts=4)
    assert not banner._close.isVisibleTo(banner)
    cancel = [b for b in banner.findChildren(QAbstractButton) if b.text() == "Cancel"]
    assert cancel
    assert cancel[0].isVisibleTo(banner)

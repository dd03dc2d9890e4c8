"""Banners above the composer: the capacity retry banner and a generic notice banner."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.icons import IconRole, icon, icon_pixmap
from flarechat.ui.shared.theme import current_palette, fill_rounded, named

__all__ = [
    "ACTION_OPEN_SETTINGS",
    "ACTION_RETRY",
    "NoticeBanner",
    "RetryBanner",
    "daily_reset_text",
]

#: The countdown label refreshes this often.
COUNTDOWN_TICK_MS = 1000
BANNER_ICON_PX = 20
CLOSE_ICON_PX = 14
BUTTON_GAP_PX = 4
#: Action ids NoticeBanner users commonly need (any string works).
ACTION_RETRY = "retry"
ACTION_OPEN_SETTINGS = "open-settings"
_KIND_ICONS: dict[str, tuple[str, IconRole]] = {
    "warning": ("warning", "accent"),
    "error": ("error", "danger"),
    "info": ("info", "text"),
}

Clock = Callable[[], float]


def daily_reset_text(*, now: datetime | None = None) -> str:
    """'resets at 01:00 (00:00 UTC)': the next UTC midnight in the user's local time."""
    current = now or datetime.now(UTC)
    midnight = (current.astimezone(UTC) + timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    return f"resets at {midnight.astimezone().strftime('%H:%M')} (00:00 UTC)"


class _Countdown:
    """Seconds left until a deadline on an injectable monotonic clock, ticking once a second."""

    def __init__(self, owner: QWidget, *, clock: Clock, on_tick: Callable[[], None]) -> None:
        self._clock = clock
        self._deadline: float | None = None
        self.timer = QTimer(owner)
        self.timer.setObjectName("bannerCountdownTimer")
        self.timer.setInterval(COUNTDOWN_TICK_MS)
        self.timer.timeout.connect(on_tick)

    def start(self, seconds: float) -> None:
        self._deadline = self._clock() + max(0.0, seconds)
        self.timer.start()

    def stop(self) -> None:
        self._deadline = None
        self.timer.stop()

    @property
    def running(self) -> bool:
        return self._deadline is not None

    def remaining(self) -> int:
        """Whole seconds left, rounded up (a 6.2 s wait reads "7 s"); 0 when over."""
        if self._deadline is None:
            return 0
        return max(0, math.ceil(self._deadline - self._clock() - 1e-6))


class _BannerBase(QFrame):
    """Icon, title, text, a row of buttons and a close button; styled by kind via QSS."""

    dismissed = Signal()

    def __init__(self, clock: Clock, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self._kind = "info"
        self._icon = named(QLabel(), "bannerIcon")
        self._title = named(QLabel(), "bannerTitle")
        self._text = named(QLabel(), "bannerText")
        for label in (self._title, self._text):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bold = QFont(self._title.font())
        bold.setBold(True)
        self._title.setFont(bold)
        self._close = named(QToolButton(), "actionButton")
        self._close.setAutoRaise(True)
        self._close.setIcon(icon("close", role="muted"))
        self._close.setIconSize(QSize(CLOSE_ICON_PX, CLOSE_ICON_PX))
        self._close.setAccessibleName("Dismiss")
        self._close.setToolTip("Dismiss")
        self._close.clicked.connect(self.dismiss)
        self._button_row = QWidget()
        self._buttons = QHBoxLayout(self._button_row)
        self._buttons.setContentsMargins(0, BUTTON_GAP_PX, 0, 0)
        self._buttons.setSpacing(6)
        self._countdown = _Countdown(self, clock=clock, on_tick=self.refresh)
        self._layout_banner()
        self.setAccessibleName("Notice")
        self.hide()

    def _layout_banner(self) -> None:
        texts = QVBoxLayout()
        texts.setSpacing(2)
        texts.addWidget(self._title)
        texts.addWidget(self._text)
        texts.addWidget(self._button_row)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 10, 8, 10)
        row.setSpacing(10)
        row.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        row.addLayout(texts, 1)
        row.addWidget(self._close, 0, Qt.AlignmentFlag.AlignTop)

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def title(self) -> str:
        return self._title.text()

    @property
    def text(self) -> str:
        return self._text.text()

    @property
    def countdown_running(self) -> bool:
        return self._countdown.running

    def seconds_left(self) -> int:
        return self._countdown.remaining()

    def dismiss(self) -> None:
        """Hide the banner (the close button does this; not offered while a countdown runs)."""
        self._countdown.stop()
        was_visible = not self.isHidden()
        self.hide()
        if was_visible:
            self.dismissed.emit()

    def refresh(self) -> None:
        """Recompute the countdown text (the 1 s timer calls this)."""

    def _set_kind(self, kind: str) -> None:
        self._kind = kind if kind in _KIND_ICONS else "info"
        self._update_icon()
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        fill, border = current_palette().banner_colors(self._kind)
        painter = QPainter(self)
        fill_rounded(painter, QRectF(self.rect()), fill=fill, border=border)
        painter.end()
        super().paintEvent(event)

    def _update_icon(self) -> None:
        name, role = _KIND_ICONS[self._kind]
        self._icon.setPixmap(
            icon_pixmap(name, BANNER_ICON_PX, dpr=self.devicePixelRatioF(), role=role)
        )

    def _set_buttons(self, actions: Sequence[tuple[str, str, Callable[[], object]]]) -> None:
        while self._buttons.count():
            item = self._buttons.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.deleteLater()
        for label, tip, slot in actions:
            button = QPushButton(label)
            button.setAccessibleName(label.rstrip("…"))
            button.setToolTip(tip)
            button.clicked.connect(slot)
            self._buttons.addWidget(button)
        self._buttons.addStretch(1)
        self._button_row.setVisible(bool(actions))

    def _reveal(self) -> None:
        self._close.setVisible(not self._countdown.running)
        self.setVisible(True)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self._update_icon()


class RetryBanner(_BannerBase):
    """Workers AI is at capacity: a live countdown to the automatic retry, and what to do instead.

    Signals: retry_now_requested(), wait_in_queue_requested() (resend once with Reject if busy
    off), switch_model_requested(), cancel_requested(), dismissed().
    """

    retry_now_requested = Signal()
    wait_in_queue_requested = Signal()
    switch_model_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None, *, clock: Clock = time.monotonic) -> None:
        super().__init__(clock, parent)
        self.setAccessibleName("Capacity notice")
        self._attempt = 0
        self._max_attempts = 0
        self._set_kind("warning")
        self._set_buttons(
            [
                ("Retry now", "Retry immediately", self._on_retry_now),
                (
                    "Wait in queue",
                    "Send once more and let Workers AI queue the request (Reject if busy off)",
                    self._on_wait_in_queue,
                ),
                ("Switch model…", "Pick another model", self._on_switch_model),
                ("Cancel", "Stop retrying", self._on_cancel),
            ]
        )

    def _reveal(self) -> None:
        """Cancel is the way out here, so no close button beside it."""
        super()._reveal()
        self._close.hide()

    def show_capacity(self, *, model: str, attempt: int, max_attempts: int, seconds: float) -> None:
        """Attempt ``attempt`` of ``max_attempts`` failed; the next one starts in ``seconds``."""
        self._title.setText(f"Workers AI is at capacity for {model}")
        self._attempt, self._max_attempts = attempt, max_attempts
        self._countdown.start(seconds)
        self.refresh()
        self._reveal()

    def show_exhausted(self, *, model: str, attempts: int) -> None:
        """Every automatic retry failed: no countdown, the same actions."""
        self._countdown.stop()
        self._title.setText(f"Workers AI is at capacity for {model}")
        self._text.setText(
            f"Gave up after {attempts} attempts. Retry now, wait in the queue, "
            "or switch to another model."
        )
        self._reveal()

    def refresh(self) -> None:
        if not self._countdown.running:
            return
        left = self._countdown.remaining()
        when = f"retrying in {left} s" if left > 0 else "retrying now…"
        self._text.setText(f"Attempt {self._attempt} of {self._max_attempts} · {when}")
        if left == 0:
            self._countdown.timer.stop()

    def _on_retry_now(self) -> None:
        self.retry_now_requested.emit()

    def _on_wait_in_queue(self) -> None:
        self.wait_in_queue_requested.emit()

    def _on_switch_model(self) -> None:
        self.switch_model_requested.emit()

    def _on_cancel(self) -> None:
        self._countdown.stop()
        self.hide()
        self.cancel_requested.emit()


class NoticeBanner(_BannerBase):
    """A generic banner: daily allocation, rate limit, authentication, network, interrupted…

    Signals: action_triggered(str action_id), countdown_finished(), dismissed().
    """

    action_triggered = Signal(str)
    countdown_finished = Signal()

    def __init__(self, parent: QWidget | None = None, *, clock: Clock = time.monotonic) -> None:
        super().__init__(clock, parent)
        self._body = ""
        self._countdown_label = ""

    def show(
        self,
        kind: str | None = None,
        title: str = "",
        text: str = "",
        actions: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Show a notice of ``kind`` (warning/error/info) with (action_id, label) buttons.

        Called with no arguments it is plain QWidget.show().
        """
        if kind is None:
            super().show()
            return
        self._countdown.stop()
        self._set_kind(kind)
        self._title.setText(title)
        self._body = text
        self._text.setText(text)
        self._text.setVisible(bool(text))
        self._set_buttons(
            [(label, label, partial(self._trigger, action_id)) for action_id, label in actions]
        )
        self._reveal()

    def _trigger(self, action_id: str) -> None:
        self.action_triggered.emit(action_id)

    def show_countdown(self, seconds: float, *, label: str = "Retrying in") -> None:
        """Add a live "<label> N s" line (e.g. Retry-After of a rate limit) to the notice."""
        self._countdown_label = label
        self._countdown.start(seconds)
        self.refresh()
        self._reveal()

    def show_daily_allocation(self, *, now: datetime | None = None) -> None:
        """The daily free allocation is used up: no retry, when it comes back."""
        self.show(
            "warning",
            f"Daily free allocation used up — {daily_reset_text(now=now)}",
            "Workers AI's free neurons for today are spent. Requests work again after the "
            "reset, or at once on the Workers Paid plan.",
        )

    def refresh(self) -> None:
        if not self._countdown.running:
            return
        left = self._countdown.remaining()
        line = f"{self._countdown_label} {left} s"
        self._text.setText(f"{self._body}\n{line}" if self._body else line)
        self._text.setVisible(True)
        if left == 0:
            self._countdown.stop()
            self._close.setVisible(True)
            self.countdown_finished.emit()

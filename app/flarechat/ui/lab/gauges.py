"""The meters: the free daily allocation's gauge (status bar), the conversation's usage, and
how full the model's context window is (next to the composer)."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from flarechat.core import figures, meters
from flarechat.core.ledger import DayUsage
from flarechat.core.meters import ContextLevel, ContextUse, GaugeLevel, UsageTotal
from flarechat.ui.shared.theme import current_palette, mute

__all__ = ["AllocationGauge", "ContextMeter", "UsageLabel"]

GAUGE_WIDTH_PX = 90
GAUGE_HEIGHT_PX = 10
#: Qt timers take int milliseconds; wake at least this often to re-check the UTC day.
MAX_TIMER_MS = 3_600_000
_MS = 1000
#: Said after the count when a send would not fit: the colour alone is easy to miss.
CONTEXT_WARNINGS = {
    ContextLevel.TIGHT: "little room for the reply",
    ContextLevel.OVER: "too long for this model",
}
CONTEXT_TIPS = {
    ContextLevel.UNKNOWN: "The catalogue does not say how large this model's context is.",
    ContextLevel.OK: "",
    ContextLevel.NEAR: "The conversation is filling the model's context window.",
    ContextLevel.TIGHT: (
        "Sending this leaves less room than Max tokens for the reply: it may be cut short. "
        "Start a new chat or shorten the conversation."
    ),
    ContextLevel.OVER: (
        "This message would exceed the model's context window: the request will fail. "
        "Start a new chat, shorten the message, or pick a model with a larger context."
    ),
}
USED_UP_TEXT = "Free neurons used up today"
USED_UP_TIP = (
    "Workers AI said today's free allocation is used up: requests are refused until it resets."
)
ESTIMATE_TIP = (
    "~ means estimated (about 4 characters a token) until the server reports the tokens of a "
    "reply; after that the count is the server's own, plus an estimate of what you type."
)


def _level_colour(level: str) -> str:
    palette = current_palette()
    if level in (GaugeLevel.RED, ContextLevel.OVER):
        return palette.danger
    if level in (GaugeLevel.AMBER, ContextLevel.TIGHT, ContextLevel.NEAR):
        return palette.banner_warning_border
    return palette.accent


class AllocationGauge(QWidget):
    """Today's neurons against the free 10,000 (UTC day): amber from 80 %, red from 95 %.

    Signals:
        day_ended(): 00:00 UTC passed (re-read today's usage).
    """

    day_ended = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("allocationGauge")
        self.setAccessibleName("Free daily allocation")
        self.bar = QProgressBar(self)
        self.bar.setRange(0, meters.FREE_DAILY_NEURONS)
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(GAUGE_WIDTH_PX, GAUGE_HEIGHT_PX)
        self.label = mute(QLabel(self))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addWidget(self.bar)
        row.addWidget(self.label)
        self.level = GaugeLevel.OK
        self._restyle()
        self._reset_timer = QTimer(self, singleShot=True)
        self._reset_timer.setObjectName("allocation-reset")
        self._reset_timer.timeout.connect(self.day_ended)

    def show_usage(self, day: DayUsage, *, now: datetime) -> None:
        """Today's usage as the ledger counts it; full once Workers AI said the allocation is
        used up (a 4006), whatever was counted here, until the reset at 00:00 UTC."""
        neurons = meters.FREE_DAILY_NEURONS if day.used_up else day.neurons
        self.level = meters.allocation_level(neurons)
        self.bar.setValue(min(meters.FREE_DAILY_NEURONS, round(neurons)))
        self._restyle()
        share = neurons / meters.FREE_DAILY_NEURONS
        text = USED_UP_TEXT if day.used_up else f"{share:.0%} of free neurons today"
        if day.priced:
            text += f" \N{MIDDLE DOT} {meters.cost_text(day.cost)}"
        self.label.setText(text)
        tip = meters.allocation_tooltip(day.neurons, now=now)  # what was counted here
        if day.used_up:
            tip = f"{USED_UP_TIP}\n{tip}"
        if day.priced:
            cost = meters.cost_text(day.cost)
            tip += f"\nToday's replies: {cost} (an estimate from the catalogue's prices)."
        self.setToolTip(tip)
        self.setAccessibleDescription(tip)
        wait = (meters.next_reset(now) - now).total_seconds()
        self._reset_timer.start(max(_MS, min(MAX_TIMER_MS, round(wait * _MS))))

    def _restyle(self) -> None:
        """The level's colour on the theme's groove: a style sheet that set only the chunk
        left the groove Qt's default white, a glaring bar in the dark theme."""
        palette = current_palette()
        self.bar.setStyleSheet(
            f"QProgressBar {{ background: {palette.alt_base}; border: 1px solid "
            f"{palette.border}; border-radius: 2px; }} "
            f"QProgressBar::chunk {{ background: {_level_colour(self.level)}; }}"
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()  # the theme changed
        super().changeEvent(event)


class UsageLabel(QLabel):
    """The conversation's neurons and estimated cost: "This chat: 3.50 neurons · ≈ $0.0003"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        mute(self)
        self.setAccessibleName("Conversation usage")

    def show_usage(self, total: UsageTotal) -> None:
        if not total.replies:
            self.setText("")
            return
        self.setText(f"This chat: {meters.usage_text(total)}")
        tip = [
            f"{total.replies} billed repl{'y' if total.replies == 1 else 'ies'} on every branch.",
            "Cost is an estimate from the catalogue's per-token prices.",
        ]
        if total.unpriced:
            tip.append(f"{total.unpriced} repl(ies) had no price in the catalogue.")
        self.setToolTip("\n".join(tip))


class ContextMeter(QLabel):
    """ "~1.2k / 128k tokens (1%)" near the composer, amber or red before a send would not fit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.setAccessibleName("Context window")
        self.level = ContextLevel.UNKNOWN
        #: The model whose window is counted (short name, as the picker shows it).
        self.model = ""

    def show_use(self, use: ContextUse, level: ContextLevel, *, model: str = "") -> None:
        self.level = level
        self.model = model.rsplit("/", 1)[-1]
        warning = CONTEXT_WARNINGS.get(level)
        text = meters.context_text(use)
        self.setText(f"{text}{figures.SEPARATOR}{warning}" if warning else text)
        colour = (
            current_palette().muted
            if level in (ContextLevel.OK, ContextLevel.UNKNOWN)
            else _level_colour(level)
        )
        self.setStyleSheet(f"color: {colour};")
        parts = [p for p in (CONTEXT_TIPS[level], ESTIMATE_TIP) if p]
        if self.model:
            window = f"{use.window:,}-token" if use.window else "an unknown"
            parts.insert(0, f"{self.model} has {window} context window.")
        if use.draft:
            parts.insert(0, f"This message: about {figures.format_count(use.draft)} tokens.")
        self.setToolTip("\n\n".join(parts))

"""The free-allocation gauge's empty groove follows the theme (it was Qt's default white in
the dark theme: its style sheet set only the filled part)."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from flarechat.core.ledger import DayUsage
from flarechat.ui.lab.gauges import AllocationGauge
from flarechat.ui.shared.theme import apply_theme
from support.widgets import shown

#: A colour's lightness (0-255) below this reads as dark.
DARK_BELOW = 128
NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _groove_lightness(gauge: AllocationGauge) -> int:
    """The lightness of the bar's empty end (no neurons used: all of it is groove)."""
    image = gauge.bar.grab().toImage()
    return image.pixelColor(image.width() - 4, image.height() // 2).lightness()


def test_the_gauges_groove_is_dark_in_the_dark_theme_and_light_in_the_light(
    qtbot: QtBot, themed_app: QApplication
) -> None:
    gauge = shown(qtbot, AllocationGauge(), size=(300, 30))
    gauge.show_usage(DayUsage(neurons=0, cost=0.0, replies=0, priced=0), now=NOW)
    try:
        apply_theme(themed_app, "dark")
        qtbot.waitUntil(lambda: _groove_lightness(gauge) < DARK_BELOW)
        apply_theme(themed_app, "light")
        qtbot.waitUntil(lambda: _groove_lightness(gauge) >= DARK_BELOW)
    finally:
        apply_theme(themed_app, "light")

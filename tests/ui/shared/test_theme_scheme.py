"""The window follows the system light/dark scheme (QStyleHints.colorSchemeChanged)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from flarechat.ui.shared.theme import (
    DARK,
    LIGHT,
    Palette,
    apply_theme,
    current_palette,
    follow_system_scheme,
    system_scheme,
)


def _window_colour(app: QApplication) -> str:
    return QColor(app.palette().color(QPalette.ColorRole.Window)).name()


@pytest.fixture
def following(themed_app: QApplication) -> Iterator[QApplication]:
    """The app following the system scheme; the suite's fixed light theme comes back after."""
    apply_theme(themed_app, None)
    try:
        yield themed_app
    finally:
        apply_theme(themed_app, "light")


def test_system_scheme_maps_qt_color_schemes(themed_app: QApplication) -> None:
    assert system_scheme(Qt.ColorScheme.Dark) == "dark"
    assert system_scheme(Qt.ColorScheme.Light) == "light"
    # Unknown: judged by the palette on screen (the suite's light one).
    assert _window_colour(themed_app) == LIGHT.window
    assert system_scheme(Qt.ColorScheme.Unknown) == "light"


def _expect(app: QApplication, palette: Palette) -> None:
    assert current_palette() is palette
    assert _window_colour(app) == palette.window


def test_the_palette_follows_the_scheme_change_signal(following: QApplication) -> None:
    hints = following.styleHints()
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # what the platform does on a switch
    _expect(following, DARK)
    assert system_scheme(Qt.ColorScheme.Unknown) == "dark"
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Unknown)  # no preference: nothing changes
    _expect(following, DARK)
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    _expect(following, LIGHT)
    assert follow_system_scheme(Qt.ColorScheme.Dark) is DARK  # the slot the signal calls


def test_a_chosen_scheme_ignores_the_system(themed_app: QApplication) -> None:
    apply_theme(themed_app, "light")
    themed_app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    _expect(themed_app, LIGHT)
    assert follow_system_scheme(Qt.ColorScheme.Dark) is None

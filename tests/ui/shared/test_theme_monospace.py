"""The code font family is asked of Qt once, not on every code block of a streaming reply."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication

from flarechat.ui.shared.theme import apply_font_size, apply_theme, monospace_family


def _system_mono() -> str:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family() or "monospace"


def test_monospace_family_is_the_system_fixed_font(themed_app: QApplication) -> None:
    assert monospace_family() == _system_mono()


def test_monospace_family_is_remembered_between_calls(themed_app: QApplication) -> None:
    first = monospace_family()
    assert monospace_family() is first  # the same object: Qt was not asked again


def test_monospace_family_is_asked_again_after_a_theme_or_font_size(
    themed_app: QApplication,
) -> None:
    first = monospace_family()
    apply_theme(themed_app, "light")
    after_theme = monospace_family()
    assert after_theme == _system_mono()
    assert after_theme is not first
    apply_font_size(themed_app, 0)
    after_size = monospace_family()
    assert after_size == _system_mono()
    assert after_size is not after_theme

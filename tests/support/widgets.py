"""A widget under test shown on the offscreen screen at a set size, closed with the test."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

__all__ = ["shown"]

W = TypeVar("W", bound=QWidget)


def shown(qtbot: QtBot, widget: W, *, size: tuple[int, int], active: bool = False) -> W:
    """``widget`` resized, shown and exposed (``active``: also the active window, for tests of
    keyboard focus), handed to ``qtbot`` so it is closed after the test."""
    qtbot.addWidget(widget)
    widget.resize(*size)
    widget.show()
    if active:
        widget.activateWindow()
        qtbot.waitActive(widget)
    else:
        qtbot.waitExposed(widget)
    return widget

"""Widgets Qt made, reached without PySide6 first making a Python class for every QWidget kind.

The first time PySide6 hands Python a widget Qt created, through a function typed to return
``QWidget *`` (``QAbstractScrollArea.viewport()``), it finds the widget's best Python type by
making the classes of every QWidget subclass not yet used (tab widgets, wizards, file dialogs,
...) with their ~80 enums: ~25 ms. The first paint needs none of that (issue #12), so the
window's scroll areas reach their viewport by name (``findChild`` types it from the widget's
own meta-object), and :func:`load_widget_types` pays the cost once the window is up.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractScrollArea, QScrollArea, QWidget

__all__ = ["VIEWPORT_NAME", "load_widget_types", "viewport_of"]

#: The object name QAbstractScrollArea gives the viewport it makes.
VIEWPORT_NAME = "qt_scrollarea_viewport"


def viewport_of(area: QAbstractScrollArea) -> QWidget:
    """``area.viewport()``, without the type search when it is Qt's own viewport."""
    found = area.findChild(QWidget, VIEWPORT_NAME, Qt.FindChildOption.FindDirectChildrenOnly)
    return found if found is not None else area.viewport()


def load_widget_types() -> None:
    """Make PySide6's QWidget subclasses now (after the first paint), not at a user's click."""
    QScrollArea().viewport()

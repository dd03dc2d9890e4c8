"""Accessible names for the buttons Qt creates itself (line-edit, toolbar and menu-bar buttons)."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit, QToolButton, QWidget

__all__ = ["name_internal_buttons"]

#: Qt's object names for the "more items" buttons of a toolbar or menu bar that don't fit.
EXTENSION_NAMES = {
    "qt_toolbar_ext_button": "More toolbar items",
    "qt_menubar_ext_button": "More menus",
}

#: Qt's object name for the action behind a line edit's clear button.
CLEAR_ACTION = "_q_qlineeditclearaction"


def _label(button: QToolButton) -> str:
    """What a button created by Qt does: its action's text, a line edit's clear, "more…"."""
    action = button.defaultAction()
    text = (action.text() or action.toolTip()) if action is not None else ""
    if text:
        return text.replace("&", "").rstrip("\N{HORIZONTAL ELLIPSIS}")
    if (extension := EXTENSION_NAMES.get(button.objectName())) is not None:
        return extension
    field = button.parentWidget()
    if isinstance(field, QLineEdit) and action is not None and action.objectName() == CLEAR_ACTION:
        name = field.accessibleName() or "text"
        return f"Clear {name[:1].lower()}{name[1:]}"
    return ""


def name_internal_buttons(root: QWidget) -> None:
    """Give every unnamed tool button under ``root`` an accessible name (and a tooltip).

    Qt leaves a line edit's clear button and a toolbar's extension button without a name,
    and names a toolbar's action buttons only inside its accessibility bridge; screen
    readers and UI tests read ``accessibleName()``. Call after the widgets are built.
    """
    for button in root.findChildren(QToolButton):
        if button.accessibleName():
            continue
        label = _label(button)
        if label:
            button.setAccessibleName(label)
            if not button.toolTip():
                button.setToolTip(label)

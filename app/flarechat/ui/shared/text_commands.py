"""The Edit menu's text commands (undo, redo, cut, copy, paste, select all) on the focused field."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

__all__ = ["TEXT_COMMANDS", "TextActions", "applies", "run", "run_focused"]

#: Makes a window action: (label, slot, shortcut=standard key) -> QAction.
ActionMaker = Callable[..., QAction]

#: The Edit menu's commands on the focused text field: label, standard key, the widget's slot.
TEXT_COMMANDS = (
    ("Undo", QKeySequence.StandardKey.Undo, "undo"),
    ("Redo", QKeySequence.StandardKey.Redo, "redo"),
    ("Cut", QKeySequence.StandardKey.Cut, "cut"),
    ("Copy", QKeySequence.StandardKey.Copy, "copy"),
    ("Paste", QKeySequence.StandardKey.Paste, "paste"),
    ("Select all", QKeySequence.StandardKey.SelectAll, "selectAll"),
)


def applies(widget: QWidget | None, command: str) -> bool:
    """Whether an Edit menu text command can act on ``widget`` (the focused one)."""
    if isinstance(widget, QLabel):  # selectable text in the transcript: copy only
        return command == "copy" and widget.hasSelectedText()
    if isinstance(widget, QLineEdit):
        editable, selected = not widget.isReadOnly(), widget.hasSelectedText()
        document_state = (widget.isUndoAvailable(), widget.isRedoAvailable(), bool(widget.text()))
    elif isinstance(widget, QPlainTextEdit | QTextEdit):
        document = widget.document()
        editable, selected = not widget.isReadOnly(), widget.textCursor().hasSelection()
        document_state = (
            document.isUndoAvailable(),
            document.isRedoAvailable(),
            not document.isEmpty(),
        )
    else:
        return False
    can_undo, can_redo, has_text = document_state
    return {
        "undo": editable and can_undo,
        "redo": editable and can_redo,
        "cut": editable and selected,
        "copy": selected,
        "paste": editable,
        "selectAll": has_text,
    }.get(command, False)


def run(widget: QWidget | None, command: str) -> None:
    """Do ``command`` in ``widget`` when it applies (a no-op otherwise)."""
    if not applies(widget, command):
        return
    if isinstance(widget, QLabel):
        QApplication.clipboard().setText(widget.selectedText())
    elif widget is not None:
        getattr(widget, command)()


def run_focused(command: str) -> None:
    """Do ``command`` in the focused widget (the Edit menu item or its shortcut)."""
    run(QApplication.focusWidget(), command)


class TextActions:
    """The Edit menu's text commands: each enabled for the focused widget while the menu is
    open, and all enabled again when it closes (so their shortcuts never stay disabled)."""

    def __init__(self, menu: QMenu, make_action: ActionMaker) -> None:
        self.actions: dict[str, QAction] = {}
        for label, key, command in TEXT_COMMANDS:
            action = make_action(label, partial(run_focused, command), shortcut=key)
            self.actions[command] = action
            menu.addAction(action)
            if command in ("redo", "paste"):
                menu.addSeparator()
        menu.aboutToShow.connect(self.update)
        menu.aboutToHide.connect(self.enable_all)

    def update(self) -> None:
        widget = QApplication.focusWidget()
        for command, action in self.actions.items():
            action.setEnabled(applies(widget, command))

    def enable_all(self) -> None:
        for action in self.actions.values():
            action.setEnabled(True)

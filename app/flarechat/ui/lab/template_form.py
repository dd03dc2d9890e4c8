"""The template form: one small field per ``{{variable}}`` in the composer, shown as soon as
one is typed; the values fill the template when the message is sent."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QWidget

from flarechat.core.lab.variables import missing
from flarechat.ui.shared.theme import mute

__all__ = ["TemplateForm"]

#: Fields per row before the form wraps.
COLUMNS = 3
HINT = "Template: the values below fill the {{variables}} when you send."


class TemplateForm(QWidget):
    """Fields for the current variables; keeps what was typed when the variables change.

    Signals:
        values_changed(): a field was edited.
    """

    values_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("templateForm")
        self.setAccessibleName("Template values")
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(6)
        self.hint = mute(QLabel(HINT, self))
        self.fields: dict[str, QLineEdit] = {}
        self.hide()

    def names(self) -> list[str]:
        return list(self.fields)

    def set_variables(self, names: list[str], remembered: Mapping[str, str]) -> None:
        """Show one field per name (in order); typed values survive, remembered fill blanks."""
        if names == self.names():
            return
        typed = {n: f.text() for n, f in self.fields.items() if f.text()}
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None and widget is not self.hint:
                widget.deleteLater()
        self.fields = {}
        self._grid.addWidget(self.hint, 0, 0, 1, COLUMNS * 2)
        for index, name in enumerate(names):
            row, column = 1 + index // COLUMNS, (index % COLUMNS) * 2
            field = QLineEdit(typed.get(name) or remembered.get(name, ""), self)
            field.setAccessibleName(name)
            field.setPlaceholderText(name)
            field.textChanged.connect(lambda *_: self.values_changed.emit())
            self._grid.addWidget(QLabel(name, self), row, column)
            self._grid.addWidget(field, row, column + 1)
            self.fields[name] = field
        self.setVisible(bool(names))

    def values(self) -> dict[str, str]:
        return {name: field.text() for name, field in self.fields.items()}

    def missing(self, text: str) -> list[str]:
        return missing(text, self.values())

    def focus_first_missing(self, text: str) -> None:
        names = self.missing(text)
        if names:
            self.fields[names[0]].setFocus()

"""A JSON Schema editor that checks as you type: JSON errors with their line and column, then
the schema itself (with jsonschema), and says so under the text."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QFont, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from flarechat.core.capabilities import json_text_problem, schema_problem
from flarechat.ui.shared.theme import current_palette, monospace_family, named

__all__ = ["CHECK_DELAY_MS", "SchemaEditor", "schema_text"]

#: The check waits for a pause in typing this long (a schema check imports jsonschema and
#: walks the schema; per keystroke it would only flicker).
CHECK_DELAY_MS = 250
VALID_TEXT = "\N{CHECK MARK} A valid JSON Schema"
EMPTY_TEXT = 'Write a JSON Schema for an object, e.g. {"type": "object", "properties": {…}}'
EDITOR_LINES = 10
_INDENT = 2


def schema_text(schema: object) -> str:
    """A schema as the editor shows it (indented), "" for none."""
    return json.dumps(schema, ensure_ascii=False, indent=_INDENT) if schema else ""


class SchemaEditor(QWidget):
    """Monospace JSON text and a verdict line under it, checked after each pause in typing.

    ``problem()`` checks at once (the dialog's OK uses it); ``value()`` is the parsed schema.

    Signals:
        checked(bool): the text was checked; whether it is a usable schema.
    """

    checked = Signal(bool)

    def __init__(
        self,
        schema: object = None,
        *,
        name: str,
        optional: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._optional = optional
        self.edit = named(QPlainTextEdit(self), "schemaEdit")
        self.edit.setAccessibleName(name)
        self.edit.setTabChangesFocus(True)
        self.edit.setPlaceholderText(EMPTY_TEXT)
        font = QFont(self.edit.font())
        font.setFamily(monospace_family())
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.edit.setFont(font)
        self.edit.setMinimumHeight(self.edit.fontMetrics().lineSpacing() * EDITOR_LINES)
        self.status = named(QLabel(self), "schemaStatus")
        self.status.setWordWrap(True)
        self.status.setAccessibleName(f"{name} check")
        self._timer = QTimer(self)
        self._timer.setObjectName("schema-check-delay")
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self.edit, 1)
        column.addWidget(self.status)
        self.set_schema(schema)
        self.edit.textChanged.connect(self._timer.start)

    def set_schema(self, schema: object) -> None:
        self.edit.setPlainText(schema_text(schema))
        self.check()

    def text(self) -> str:
        return self.edit.toPlainText()

    def is_empty(self) -> bool:
        return not self.text().strip()

    def value(self) -> dict[str, Any] | None:
        """The schema, or None when the text is empty or not a usable schema."""
        if self.is_empty() or self.problem() is not None:
            return None
        parsed, _ = json_text_problem(self.text())
        return dict(parsed)

    def problem(self) -> str | None:
        """What is wrong with the text now, or None (an empty optional editor is fine)."""
        text = self.text()
        if not text.strip():
            return None if self._optional else "The schema is empty."
        parsed, where = json_text_problem(text)
        if where is not None:
            return f"Not valid JSON \N{EM DASH} {where}"
        problem = schema_problem(parsed)
        return f"Not a usable schema: {problem}" if problem else None

    def check(self) -> bool:
        """Check the text now and show the verdict; True when it is usable."""
        self._timer.stop()
        problem = self.problem()
        palette = current_palette()
        if problem is None:
            shown = "" if self.is_empty() else VALID_TEXT
            self.status.setStyleSheet(f"color: {palette.muted}")
        else:
            shown = problem
            self.status.setStyleSheet(f"color: {palette.danger}")
        self.status.setText(shown)
        self.status.setVisible(bool(shown))
        self.checked.emit(problem is None)
        return problem is None

    def show_error_position(self) -> None:
        """Put the cursor where the JSON stops parsing (OK pressed on a broken schema)."""
        _, where = json_text_problem(self.text())
        self.edit.setFocus()
        if where is None:
            return
        block = self.edit.document().findBlockByLineNumber(where.line - 1)
        cursor = QTextCursor(block)
        cursor.movePosition(
            QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.MoveAnchor, where.column - 1
        )
        self.edit.setTextCursor(cursor)

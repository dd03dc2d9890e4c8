"""The conversation dialog's Structured output page: plain text, any JSON object (JSON mode)
or JSON following a schema, with a schema editor that checks as you type."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.connect import PARAM_RESPONSE_FORMAT
from flarechat.ui.capabilities.schema_editor import SchemaEditor
from flarechat.ui.shared.theme import mute, named

__all__ = ["NATIVE_NOTE", "OPENAI_NOTE", "OutputPage"]

PLAIN, JSON_OBJECT, JSON_SCHEMA = "text", "json_object", "json_schema"
NATIVE_NOTE = (
    "Workers AI does not stream JSON replies on its native endpoint (the one set in "
    "Settings), so streaming is turned off for them: a JSON reply arrives whole when it is "
    "done, and its note says so."
)
OPENAI_NOTE = (
    "JSON replies stream as usual on the OpenAI-compatible endpoint. With a LoRA adapter the "
    "request goes to the native endpoint, where JSON does not stream (the reply says so)."
)
DEFAULT_NAME = "response"


class OutputPage(QWidget):
    """Which reply format the conversation asks for (``response_format`` in its params)."""

    def __init__(
        self, params: dict[str, Any], *, native: bool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        asked = params.get(PARAM_RESPONSE_FORMAT)
        asked = asked if isinstance(asked, dict) else {}
        kind = str(asked.get("type")) if asked.get("type") in (JSON_OBJECT, JSON_SCHEMA) else PLAIN
        self.modes = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        for mode, label in (
            (PLAIN, "Plain text (the model decides)"),
            (JSON_OBJECT, "JSON: any JSON object (JSON mode)"),
            (JSON_SCHEMA, "JSON that follows a schema"),
        ):
            button = QRadioButton(label, self)
            button.setAccessibleName(label)
            self.modes.addButton(button)
            self.buttons[mode] = button
        self.schema_name = QLineEdit(str(asked.get("name") or ""), self)
        self.schema_name.setAccessibleName("Schema name")
        self.schema_name.setPlaceholderText(DEFAULT_NAME)
        self.schema_name.setToolTip("The name OpenAI-style endpoints send with the schema")
        self.editor = SchemaEditor(asked.get("schema"), name="JSON Schema", parent=self)
        self.note = mute(named(QLabel(NATIVE_NOTE if native else OPENAI_NOTE, self), "mutedLabel"))
        self.note.setWordWrap(True)
        self.note.setAccessibleName("About streaming")
        self.buttons[kind].setChecked(True)
        self.modes.buttonToggled.connect(self._update)
        self._layout()
        self._update()

    def _layout(self) -> None:
        column = QVBoxLayout(self)
        for button in self.buttons.values():
            column.addWidget(button)
        form = QFormLayout()
        form.addRow("Schema name", self.schema_name)
        column.addLayout(form)
        column.addWidget(self.editor, 1)
        column.addWidget(self.note)

    def mode(self) -> str:
        return next(mode for mode, button in self.buttons.items() if button.isChecked())

    def _update(self, *_: object) -> None:
        with_schema = self.mode() == JSON_SCHEMA
        self.editor.setEnabled(with_schema)
        self.schema_name.setEnabled(with_schema)
        self.note.setVisible(self.mode() != PLAIN)

    def problem(self) -> str | None:
        if self.mode() != JSON_SCHEMA:
            return None
        if (problem := self.editor.problem()) is not None:
            self.editor.check()
            self.editor.show_error_position()
            return f"Structured output: {problem}"
        return None

    def params(self) -> dict[str, Any]:
        """``{"response_format": …}``, or {} for plain text."""
        mode = self.mode()
        if mode == JSON_OBJECT:
            return {PARAM_RESPONSE_FORMAT: {"type": JSON_OBJECT}}
        schema = self.editor.value() if mode == JSON_SCHEMA else None
        if schema is None:
            return {}
        name = self.schema_name.text().strip() or DEFAULT_NAME
        return {PARAM_RESPONSE_FORMAT: {"type": JSON_SCHEMA, "schema": schema, "name": name}}

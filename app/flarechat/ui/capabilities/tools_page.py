"""The conversation dialog's Tools page: the functions the model may call (name, description,
JSON Schema parameters, an optional canned result) and ``tool_choice``."""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.capabilities import (
    TOOL_CHOICE_MODES,
    json_text_problem,
    schema_problem,
    tool_problem,
)
from flarechat.core.connect import PARAM_TOOL_CHOICE, PARAM_TOOLS
from flarechat.ui.capabilities.schema_editor import SchemaEditor
from flarechat.ui.shared.theme import mute, named

__all__ = ["NO_FUNCTIONS_NOTE", "ToolsPage"]

NO_FUNCTIONS_NOTE = (
    "{model} is not marked for function calling in the catalogue: it may ignore the tools."
)
CANNED_LINES = 3
NEW_TOOL_NAME = "new_tool"
_CHOICE_LABELS = {
    "auto": "The model decides (auto)",
    "none": "Never call a tool (none)",
    "required": "Always call some tool (required)",
}
_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
#: The parameters text as typed (kept while another tool is edited; never saved).
_TYPED = "_typed_parameters"


def _tools(params: dict[str, Any]) -> list[dict[str, Any]]:
    raw = params.get(PARAM_TOOLS)
    return [copy.deepcopy(t) for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []


class ToolsPage(QWidget):
    """Tools on the left, the chosen one's definition on the right, tool_choice under them."""

    def __init__(
        self,
        params: dict[str, Any],
        *,
        function_calling: bool | None,
        model: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._tools = _tools(params)
        self._current = -1
        self.list = named(QListWidget(self), "toolList")
        self.list.setAccessibleName("Tools")
        self.add_button = QPushButton("Add tool", self)
        self.remove_button = QPushButton("Remove", self)
        self.name = QLineEdit(self)
        self.name.setAccessibleName("Tool name")
        self.name.setPlaceholderText("get_weather")
        self.description = QLineEdit(self)
        self.description.setAccessibleName("Tool description")
        self.description.setPlaceholderText("What the function does, for the model")
        self.parameters = SchemaEditor(_EMPTY_PARAMETERS, name="Tool parameters", parent=self)
        self.canned = QPlainTextEdit(self)
        self.canned.setAccessibleName("Canned result")
        self.canned.setPlaceholderText("Optional: a result to offer when the model calls it")
        self.canned.setTabChangesFocus(True)
        self.canned.setFixedHeight(self.canned.fontMetrics().lineSpacing() * CANNED_LINES + 12)
        self.choice = QComboBox(self)
        self.choice.setAccessibleName("Tool choice")
        note = NO_FUNCTIONS_NOTE.format(model=model.rsplit("/", 1)[-1] or "This model")
        self.note = mute(named(QLabel(note, self), "mutedLabel"))
        self.note.setWordWrap(True)
        self.note.setVisible(function_calling is False)
        self._layout()
        self.add_button.clicked.connect(self.add_tool)
        self.remove_button.clicked.connect(self.remove_tool)
        self.list.currentRowChanged.connect(self._on_row_changed)
        self.name.editingFinished.connect(self._sync_name)
        self._fill_list()
        self._fill_choice(params.get(PARAM_TOOL_CHOICE))

    def _layout(self) -> None:
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        left.addLayout(buttons)
        self.form = QFormLayout()
        self.form.addRow("Name", self.name)
        self.form.addRow("Description", self.description)
        self.form.addRow("Parameters", self.parameters)
        self.form.addRow("Canned result", self.canned)
        top = QHBoxLayout()
        top.addLayout(left, 1)
        top.addLayout(self.form, 3)
        choice = QFormLayout()
        choice.addRow("Tool choice", self.choice)
        column = QVBoxLayout(self)
        column.addLayout(top, 1)
        column.addLayout(choice)
        column.addWidget(self.note)

    # -- the list --------------------------------------------------------------------------

    def _fill_list(self) -> None:
        self.list.clear()
        self.list.addItems([str(t.get("name", "")) for t in self._tools])
        self._current = -1
        self.list.setCurrentRow(0 if self._tools else -1)
        self._update_enabled()

    def _update_enabled(self) -> None:
        has = self._current >= 0
        for widget in (self.name, self.description, self.parameters, self.canned):
            widget.setEnabled(has)
        self.remove_button.setEnabled(has)
        self.choice.setEnabled(bool(self._tools))

    def _on_row_changed(self, row: int) -> None:
        self._store_current()
        self._current = row
        tool = self._tools[row] if 0 <= row < len(self._tools) else {}
        self.name.setText(str(tool.get("name", "")))
        self.description.setText(str(tool.get("description", "")))
        self.parameters.set_schema(tool.get("parameters") or _EMPTY_PARAMETERS)
        if (typed := tool.get(_TYPED)) is not None:  # what was typed, even if not usable yet
            self.parameters.edit.setPlainText(typed)
            self.parameters.check()
        self.canned.setPlainText(str(tool.get("canned_result") or ""))
        self._update_enabled()

    def _store_current(self) -> None:
        """The editor's fields into the tool being edited (parameters only when usable)."""
        if not 0 <= self._current < len(self._tools):
            return
        tool = self._tools[self._current]
        tool["name"] = self.name.text().strip()
        tool["description"] = self.description.text().strip()
        tool["parameters"] = self.parameters.value() or tool.get("parameters", _EMPTY_PARAMETERS)
        tool[_TYPED] = self.parameters.text()
        canned = self.canned.toPlainText()
        if canned.strip():
            tool["canned_result"] = canned
        else:
            tool.pop("canned_result", None)

    def _sync_name(self) -> None:
        self._store_current()
        item = self.list.item(self._current) if self._current >= 0 else None
        if item is not None:
            item.setText(self.name.text().strip())
            self._fill_choice(self._choice_value())

    def add_tool(self) -> None:
        self._store_current()
        names = {t.get("name") for t in self._tools}
        name = next(
            f"{NEW_TOOL_NAME}_{n}" if n else NEW_TOOL_NAME
            for n in range(len(self._tools) + 1)
            if (f"{NEW_TOOL_NAME}_{n}" if n else NEW_TOOL_NAME) not in names
        )
        self._tools.append({"name": name, "description": "", "parameters": _EMPTY_PARAMETERS})
        self.list.addItem(name)
        self.list.setCurrentRow(len(self._tools) - 1)
        self._fill_choice(self._choice_value())
        self.name.setFocus()
        self.name.selectAll()

    def remove_tool(self) -> None:
        row = self._current
        if not 0 <= row < len(self._tools):
            return
        self._current = -1  # nothing to store: it goes
        del self._tools[row]
        self.list.takeItem(row)
        self._on_row_changed(self.list.currentRow())
        self._fill_choice(self._choice_value())

    # -- tool_choice -----------------------------------------------------------------------

    def _fill_choice(self, value: object) -> None:
        blocked = self.choice.blockSignals(True)
        self.choice.clear()
        for mode in TOOL_CHOICE_MODES:
            self.choice.addItem(_CHOICE_LABELS[mode], mode)
        for tool in self._tools:
            name = str(tool.get("name", ""))
            self.choice.addItem(f"Always call {name}", {"name": name})
        index = self.choice.findData(value) if value is not None else 0
        self.choice.setCurrentIndex(max(0, index))
        self.choice.blockSignals(blocked)
        self._update_enabled()

    def _choice_value(self) -> object:
        return self.choice.currentData()

    # -- the dialog's OK -------------------------------------------------------------------

    def problem(self) -> str | None:
        self._store_current()
        names: set[str] = set()
        for row, tool in enumerate(self._tools):
            name = tool.get("name")
            typed = tool.get(_TYPED)
            if typed is not None and (trouble := _typed_problem(typed)) is not None:
                self.list.setCurrentRow(row)
                return f"Tool {name}: parameters: {trouble}"
            problem = tool_problem(
                name=name, description=tool.get("description", ""), parameters=tool["parameters"]
            )
            if problem is not None:
                self.list.setCurrentRow(row)
                return f"Tool {name or row + 1}: {problem}."
            if name in names:
                return f"Two tools are named {name}."
            names.add(str(name))
        return None

    def params(self) -> dict[str, Any]:
        """``tools`` and ``tool_choice`` (both absent with no tools)."""
        self._store_current()
        tools = [{k: v for k, v in t.items() if not k.startswith("_")} for t in self._tools]
        if not tools:
            return {}
        chosen: dict[str, Any] = {PARAM_TOOLS: tools}
        choice = self._choice_value()
        if choice is not None and choice != "auto":
            chosen[PARAM_TOOL_CHOICE] = choice
        return chosen


def _typed_problem(text: str) -> str | None:
    parsed, where = json_text_problem(text)
    if where is not None:
        return f"Not valid JSON \N{EM DASH} {where}"
    return schema_problem(parsed)

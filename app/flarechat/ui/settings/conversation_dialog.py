"""Per-conversation options: the system prompt and sampling parameters of one conversation,
and (on their own tabs) what it asks of the model: JSON output, tools, reasoning, LoRA."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from flarechat.api.models import ModelInfo
from flarechat.api.schema import ModelSchema
from flarechat.settings.validate import SAMPLING_LIMITS, validate_sampling
from flarechat.ui.capabilities.model_page import FineTuneLoader, ModelPage
from flarechat.ui.capabilities.output_page import OutputPage
from flarechat.ui.capabilities.tools_page import ToolsPage
from flarechat.ui.control.preferences import PARAM_MAX_TOKENS, PARAM_TEMPERATURE
from flarechat.ui.settings.fields import ErrorLabel

__all__ = ["ConversationDialog"]

MAX_TOKENS_LIMIT = 131_072
TEMPERATURE_LIMIT = 5.0
TEMPERATURE_STEP = 0.1
#: The spin boxes' lowest value stands for "use the default" (shown as special text).
UNSET_TOKENS = 0
UNSET_TEMPERATURE = -TEMPERATURE_STEP
DIALOG_MIN_WIDTH = 520
#: What an empty optional parameter field means: nothing is sent, the model decides.
MODEL_DEFAULT = "Model default"


class ConversationDialog(QDialog):
    """Edits one conversation's system prompt and parameters; open it with ``open()``.

    Signals:
        options_accepted(str, dict): the system prompt and the parameters (only those set:
            ``max_tokens``, ``temperature`` and any of ``SAMPLING_LIMITS``) when OK is
            pressed. OK with an out-of-range value shows why in ``error`` and stays open.
    """

    options_accepted = Signal(str, dict)

    def __init__(
        self,
        *,
        system_prompt: str,
        params: dict[str, Any],
        default_max_tokens: int,
        parent: QWidget | None = None,
        model: str = "",
        model_info: ModelInfo | None = None,
        model_schema: ModelSchema | None = None,
        native_endpoint: bool = True,
        load_finetunes: FineTuneLoader | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Conversation settings")
        self.setAccessibleName("Conversation settings")
        self.setMinimumWidth(DIALOG_MIN_WIDTH)
        #: The conversation's current model (as the picker names it): what these settings go with.
        self.model_label = QLabel(model.rsplit("/", 1)[-1] or "The default model", self)
        self.model_label.setAccessibleName("Model")
        self.model_label.setToolTip(model or "The model chosen in the toolbar")
        self.system_prompt = QPlainTextEdit(system_prompt, self)
        self.system_prompt.setAccessibleName("System prompt")
        self.system_prompt.setPlaceholderText("Instructions the model sees before the chat")
        self.max_tokens = QSpinBox(self)
        self.max_tokens.setAccessibleName("Max tokens")
        self.max_tokens.setRange(UNSET_TOKENS, MAX_TOKENS_LIMIT)
        self.max_tokens.setSpecialValueText(f"Default ({default_max_tokens})")
        self.max_tokens.setValue(_int_param(params.get(PARAM_MAX_TOKENS)))
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setAccessibleName("Temperature")
        self.temperature.setRange(UNSET_TEMPERATURE, TEMPERATURE_LIMIT)
        self.temperature.setSingleStep(TEMPERATURE_STEP)
        self.temperature.setDecimals(2)
        self.temperature.setSpecialValueText("Default")
        self.temperature.setValue(_float_param(params.get(PARAM_TEMPERATURE)))
        self.sampling = {name: self._sampling_field(name, params) for name in SAMPLING_LIMITS}
        self.error = ErrorLabel(self)
        self.error.setAccessibleName("Problem")
        self.error.hide()
        self.output = OutputPage(params, native=native_endpoint, parent=self)
        function_calling = model_info.function_calling if model_info is not None else None
        self.tools = ToolsPage(params, function_calling=function_calling, model=model, parent=self)
        self.model_page = ModelPage(
            params, model=model, info=model_info, schema=model_schema,
            load_finetunes=load_finetunes, parent=self,
        )  # fmt: skip
        self.finished.connect(self.model_page.cancel_loading)
        self._layout()

    def _sampling_field(self, name: str, params: dict[str, Any]) -> QLineEdit:
        limit = SAMPLING_LIMITS[name]
        value = params.get(name)
        shown = "" if value is None or validate_sampling(name, value) else str(value)
        edit = QLineEdit(shown, self)
        edit.setAccessibleName(limit.label)
        edit.setPlaceholderText(MODEL_DEFAULT)
        low, high = (int(limit.low), int(limit.high)) if limit.integer else (limit.low, limit.high)
        edit.setToolTip(f"{low:,} to {high:,}; leave empty for the model's default (not sent).")
        edit.textEdited.connect(lambda _text: self.error.hide())
        return edit

    def _layout(self) -> None:
        form = QFormLayout()
        form.addRow("Model", self.model_label)
        form.addRow("System prompt", self.system_prompt)
        form.addRow("Max tokens", self.max_tokens)
        form.addRow("Temperature", self.temperature)
        for name, edit in self.sampling.items():
            form.addRow(SAMPLING_LIMITS[name].label, edit)
        note = QLabel("These apply to this conversation only; new chats use Settings.", self)
        note.setObjectName("mutedLabel")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        for which, name in (
            (QDialogButtonBox.StandardButton.Ok, "OK"),
            (QDialogButtonBox.StandardButton.Cancel, "Cancel"),
        ):
            button = buttons.button(which)
            if button is not None:
                button.setAccessibleName(name)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        general = QWidget(self)
        general.setLayout(form)
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("Conversation settings pages")
        for page, title in (
            (general, "General"),
            (self.output, "Structured output"),
            (self.tools, "Tools"),
            (self.model_page, "Reasoning and LoRA"),
        ):
            self.tabs.addTab(page, title)
        column = QVBoxLayout(self)
        column.addWidget(self.tabs)
        column.addWidget(self.error)
        column.addWidget(note)
        column.addWidget(buttons)

    def params(self) -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        if self.max_tokens.value() != UNSET_TOKENS:
            chosen[PARAM_MAX_TOKENS] = self.max_tokens.value()
        if self.temperature.value() > UNSET_TEMPERATURE / 2:
            chosen[PARAM_TEMPERATURE] = round(self.temperature.value(), 2)
        for name, edit in self.sampling.items():
            text = edit.text().strip()
            if text and validate_sampling(name, text) is None:
                chosen[name] = int(text) if SAMPLING_LIMITS[name].integer else float(text)
        for page in (self.output, self.tools, self.model_page):
            chosen |= page.params()
        return chosen

    def problem(self) -> str | None:
        """The first out-of-range parameter (focused), or None when all are acceptable."""
        for name, edit in self.sampling.items():
            if (error := validate_sampling(name, edit.text())) is not None:
                self.tabs.setCurrentIndex(0)
                edit.setFocus()
                return error
        pages: tuple[OutputPage | ToolsPage | ModelPage, ...] = (
            self.output, self.tools, self.model_page,
        )  # fmt: skip
        for index, page in enumerate(pages, start=1):
            if (error := page.problem()) is not None:
                self.tabs.setCurrentIndex(index)
                return error
        return None

    def _accept(self) -> None:
        if (error := self.problem()) is not None:
            self.error.setText(error)
            self.error.show()
            return
        self.options_accepted.emit(self.system_prompt.toPlainText().strip(), self.params())
        self.accept()


def _int_param(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return UNSET_TOKENS


def _float_param(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return UNSET_TEMPERATURE

"""Per-conversation options: the system prompt, max tokens and temperature of one conversation."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.preferences import PARAM_MAX_TOKENS, PARAM_TEMPERATURE

__all__ = ["ConversationDialog"]

MAX_TOKENS_LIMIT = 131_072
TEMPERATURE_LIMIT = 5.0
TEMPERATURE_STEP = 0.1
#: The spin boxes' lowest value stands for "use the default" (shown as special text).
UNSET_TOKENS = 0
UNSET_TEMPERATURE = -TEMPERATURE_STEP
DIALOG_MIN_WIDTH = 520


class ConversationDialog(QDialog):
    """Edits one conversation's system prompt and parameters; open it with ``open()``.

    Signals:
        options_accepted(str, dict): the system prompt and the parameters (only those set:
            ``max_tokens``, ``temperature``) when OK is pressed.
    """

    options_accepted = Signal(str, dict)

    def __init__(
        self,
        *,
        system_prompt: str,
        params: dict[str, Any],
        default_max_tokens: int,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Conversation settings")
        self.setAccessibleName("Conversation settings")
        self.setMinimumWidth(DIALOG_MIN_WIDTH)
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
        self._layout()

    def _layout(self) -> None:
        form = QFormLayout()
        form.addRow("System prompt", self.system_prompt)
        form.addRow("Max tokens", self.max_tokens)
        form.addRow("Temperature", self.temperature)
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
        column = QVBoxLayout(self)
        column.addLayout(form)
        column.addWidget(note)
        column.addWidget(buttons)

    def params(self) -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        if self.max_tokens.value() != UNSET_TOKENS:
            chosen[PARAM_MAX_TOKENS] = self.max_tokens.value()
        if self.temperature.value() > UNSET_TEMPERATURE / 2:
            chosen[PARAM_TEMPERATURE] = round(self.temperature.value(), 2)
        return chosen

    def _accept(self) -> None:
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

"""The editors of the lab's manager dialog: a saved prompt's or template's name and text, a
preset's name, model, parameters, reasoning effort and system prompt. Each shows one item,
says whether it was changed, and hands back the changed fields; it never saves by itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from flarechat.core.lab.presets import EFFORTS, Preset
from flarechat.ui.shared.theme import mute

__all__ = ["ItemEditor", "PresetEditor", "TextItemEditor", "preset_summary"]

PARAM_TEMPERATURE, PARAM_MAX_TOKENS = "temperature", "max_tokens"
TEMPERATURE_MAX, TEMPERATURE_STEP = 2.0, 0.1
MAX_TOKENS_LIMIT, MAX_TOKENS_STEP = 131_072, 256
DEFAULT_TEXT = "default"
NO_EFFORT = "the model's default"
TEXT_ROWS = 6


def preset_summary(preset: Preset) -> str:
    """Model, parameters, reasoning effort, system prompt and gateway options in words."""
    params = ", ".join(f"{k} {v}" for k, v in preset.params.items()) or "the default parameters"
    lines = [f"{preset.model}", f"Parameters: {params}"]
    if preset.reasoning_effort:
        lines.append(f"Reasoning effort: {preset.reasoning_effort}")
    prompt = " ".join(preset.system_prompt.split())
    lines.append(f"System prompt: {prompt or '(none)'}")
    if preset.gateway is not None:
        lines.append(_gateway_words(preset.gateway))
    return "\n".join(lines)


def _gateway_words(gateway: Any) -> str:
    shown = {k: v for k, v in gateway.items() if v not in (None, "", {}, False)}
    return "AI Gateway: " + (", ".join(f"{k} {v}" for k, v in shown.items()) or "defaults")


class ItemEditor(QWidget):
    """One item's fields. Subclasses fill ``form`` and implement show/changes.

    Signals:
        edited(): a field was changed by the user.
    """

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.name = QLineEdit(self)
        self.name.setAccessibleName("Name")
        self.form.addRow("Name", self.name)
        self._item: Any = None
        self._loading = False
        self.name.textEdited.connect(self._on_edited)

    @property
    def item(self) -> Any:
        return self._item

    def show_item(self, item: Any) -> None:
        """Show ``item`` (None: nothing selected; the fields are cleared and disabled)."""
        self._item = item
        self._loading = True
        try:
            self.name.setText(item.name if item is not None else "")
            self._show_fields(item)
        finally:
            self._loading = False
        self.setEnabled(item is not None)

    def changes(self) -> dict[str, Any]:
        """The fields the user changed, as the item's field names: nothing when unchanged."""
        if self._item is None:
            return {}
        changed = {k: v for k, v in self._field_values().items() if getattr(self._item, k) != v}
        name = self.name.text()
        if " ".join(name.split()) and name != self._item.name:
            changed["name"] = name
        return changed

    def _on_edited(self, *_: object) -> None:
        if not self._loading:
            self.edited.emit()

    def _show_fields(self, item: Any) -> None:
        raise NotImplementedError

    def _field_values(self) -> dict[str, Any]:
        raise NotImplementedError


class TextItemEditor(ItemEditor):
    """A saved system prompt or a template: its name and its text."""

    def __init__(self, *, hint: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QPlainTextEdit(self)
        self.text.setAccessibleName("Text")
        self.text.setTabChangesFocus(True)
        line = self.text.fontMetrics().lineSpacing()
        self.text.setMinimumHeight(line * TEXT_ROWS // 2)
        self.form.addRow("Text", self.text)
        self.hint = mute(QLabel(hint, self))
        self.hint.setWordWrap(True)
        self.form.addRow("", self.hint)
        self.text.textChanged.connect(self._on_edited)

    def _show_fields(self, item: Any) -> None:
        self.text.setPlainText(item.text if item is not None else "")

    def _field_values(self) -> dict[str, Any]:
        return {"text": self.text.toPlainText()}


class PresetEditor(ItemEditor):
    """A preset: model, temperature, max tokens, reasoning effort, system prompt. Parameters
    it has but this form does not show (top_p, seed…) and its gateway options are kept."""

    def __init__(self, *, models: Sequence[str] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QComboBox(self)
        self.model.setEditable(True)
        self.model.setAccessibleName("Model")
        self.model.addItems(list(models))
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(-TEMPERATURE_STEP, TEMPERATURE_MAX)
        self.temperature.setSingleStep(TEMPERATURE_STEP)
        self.temperature.setDecimals(2)
        self.temperature.setSpecialValueText(DEFAULT_TEXT)
        self.temperature.setAccessibleName("Temperature")
        self.max_tokens = QSpinBox(self)
        self.max_tokens.setRange(0, MAX_TOKENS_LIMIT)
        self.max_tokens.setSingleStep(MAX_TOKENS_STEP)
        self.max_tokens.setSpecialValueText(DEFAULT_TEXT)
        self.max_tokens.setAccessibleName("Max tokens")
        self.effort = QComboBox(self)
        self.effort.setAccessibleName("Reasoning effort")
        self.effort.addItem(NO_EFFORT, None)
        for effort in EFFORTS:
            self.effort.addItem(effort, effort)
        self.system_prompt = QPlainTextEdit(self)
        self.system_prompt.setAccessibleName("System prompt")
        self.system_prompt.setTabChangesFocus(True)
        self.system_prompt.setMinimumHeight(self.fontMetrics().lineSpacing() * 3)
        self.kept = mute(QLabel(self))
        self.kept.setWordWrap(True)
        self.kept.setAccessibleName("Also kept")
        for label, widget in (
            ("Model", self.model),
            ("Temperature", self.temperature),
            ("Max tokens", self.max_tokens),
            ("Reasoning effort", self.effort),
            ("System prompt", self.system_prompt),
            ("", self.kept),
        ):
            self.form.addRow(label, widget)
        self.model.editTextChanged.connect(self._on_edited)
        self.temperature.valueChanged.connect(self._on_edited)
        self.max_tokens.valueChanged.connect(self._on_edited)
        self.effort.currentIndexChanged.connect(self._on_edited)
        self.system_prompt.textChanged.connect(self._on_edited)

    def _show_fields(self, item: Any) -> None:
        preset: Preset | None = item
        params = dict(preset.params) if preset is not None else {}
        self.model.setEditText(preset.model if preset is not None else "")
        temperature = params.get(PARAM_TEMPERATURE)
        number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
        self.temperature.setValue(float(temperature) if number else -TEMPERATURE_STEP)  # type: ignore[arg-type]
        max_tokens = params.get(PARAM_MAX_TOKENS)
        self.max_tokens.setValue(max_tokens if isinstance(max_tokens, int) else 0)
        effort = preset.reasoning_effort if preset is not None else None
        self.effort.setCurrentIndex(max(0, self.effort.findData(effort)))
        self.system_prompt.setPlainText(preset.system_prompt if preset is not None else "")
        self.kept.setText(_kept_words(preset))

    def _field_values(self) -> dict[str, Any]:
        preset: Preset = self._item
        params = {
            k: v for k, v in preset.params.items() if k not in (PARAM_TEMPERATURE, PARAM_MAX_TOKENS)
        }
        if self.temperature.value() >= 0:
            params[PARAM_TEMPERATURE] = round(self.temperature.value(), 2)
        if self.max_tokens.value() > 0:
            params[PARAM_MAX_TOKENS] = self.max_tokens.value()
        ordered = {k: params[k] for k in preset.params if k in params}  # unchanged order
        ordered.update(params)
        return {
            "model": self.model.currentText().strip(),
            "params": ordered,
            "reasoning_effort": self.effort.currentData(),
            "system_prompt": self.system_prompt.toPlainText(),
        }


def _kept_words(preset: Preset | None) -> str:
    """What the preset holds beyond the form, kept as it is by an edit."""
    if preset is None:
        return ""
    others = {
        k: v for k, v in preset.params.items() if k not in (PARAM_TEMPERATURE, PARAM_MAX_TOKENS)
    }
    parts = []
    if others:
        parts.append("Also: " + ", ".join(f"{k} {v}" for k, v in others.items()))
    if preset.gateway is not None:
        parts.append(_gateway_words(preset.gateway))
    return ". ".join(parts)

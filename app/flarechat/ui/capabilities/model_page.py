"""The conversation dialog's Reasoning and LoRA page: reasoning effort (the choices the
catalogue lists for the model), thinking on or off (models taking ``chat_template_kwargs``),
and a LoRA adapter, picked from the account's fine-tunes (listed in the background) or typed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from flarechat.api.errors import WorkersAIError
from flarechat.api.models import FineTune, ModelInfo
from flarechat.api.schema import ModelSchema
from flarechat.core.connect import (
    PARAM_ENABLE_THINKING,
    PARAM_LORA,
    PARAM_REASONING_EFFORT,
    ConfigurationError,
)
from flarechat.core.tasks import TaskKeeper
from flarechat.ui.shared.theme import mute, named

__all__ = ["FineTuneLoader", "ModelPage"]

FineTuneLoader = Callable[[], Awaitable[list[FineTune]]]
MODEL_DEFAULT = "Model default"
NO_EFFORT = "{model} lists no reasoning-effort control in the catalogue."
NO_THINKING = "{model} does not take a thinking switch (chat_template_kwargs)."
THINKING_UNKNOWN = (
    "Sent as chat_template_kwargs.enable_thinking; models without that input ignore it."
)
NO_LORA = "{model} takes no LoRA adapter (the catalogue does not mark it LoRA)."
LORA_LOADING = "Listing the account's fine-tunes\N{HORIZONTAL ELLIPSIS}"
LORA_NONE = "The account has no fine-tunes for this model; type an adapter's name or id."
LORA_FOUND = "{count} fine-tune(s) for this model; or type an adapter's name or id."
LORA_FAILED = "The fine-tunes could not be listed ({reason}); type an adapter's name or id."
_TOOLTIP = Qt.ItemDataRole.ToolTipRole
_THINKING = ((MODEL_DEFAULT, None), ("On", True), ("Off", False))


def _short(model: str) -> str:
    return model.rsplit("/", 1)[-1] or "This model"


def _note(text: str, parent: QWidget) -> QLabel:
    label = mute(named(QLabel(text, parent), "mutedLabel"))
    label.setWordWrap(True)
    return label


class ModelPage(QWidget):
    """Reasoning effort, thinking and LoRA for one conversation."""

    def __init__(
        self,
        params: dict[str, Any],
        *,
        model: str,
        info: ModelInfo | None,
        schema: ModelSchema | None = None,
        load_finetunes: FineTuneLoader | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._model = model
        self._jobs = TaskKeeper("model-page")
        self._loading: asyncio.Task[Any] | None = None
        self.effort = self._effort_box(params.get(PARAM_REASONING_EFFORT), info)
        self.thinking = self._thinking_box(params.get(PARAM_ENABLE_THINKING), info, schema)
        self.lora = QComboBox(self)
        self.lora.setEditable(True)
        self.lora.setAccessibleName("LoRA adapter")
        self.lora.setToolTip("A fine-tune's name or id; empty: no adapter")
        lora = params.get(PARAM_LORA)
        self.lora.setEditText(lora if isinstance(lora, str) else "")
        if line := self.lora.lineEdit():
            line.setPlaceholderText("No adapter")
        takes_lora = info is None or info.lora
        self.lora.setEnabled(takes_lora or bool(lora))
        self.lora_status = _note("" if takes_lora else NO_LORA.format(model=_short(model)), self)
        self.lora_status.setAccessibleName("LoRA status")
        self._layout()
        if takes_lora and load_finetunes is not None:
            self._loading = self._jobs.spawn(self._load(load_finetunes), name="finetunes")
            self.lora_status.setText(LORA_LOADING)

    def _effort_box(self, value: object, info: ModelInfo | None) -> QComboBox:
        box = QComboBox(self)
        box.setAccessibleName("Reasoning effort")
        box.addItem(MODEL_DEFAULT, None)
        control = info.reasoning_effort if info is not None else None
        for choice in control.choices if control is not None else ():
            box.addItem(choice.capitalize(), choice)
        if isinstance(value, str) and box.findData(value) < 0:
            box.addItem(value.capitalize(), value)  # set earlier; kept so it can be cleared
        box.setCurrentIndex(max(0, box.findData(value)))
        box.setEnabled(box.count() > 1)
        self.effort_note = _note(
            "" if control is not None else NO_EFFORT.format(model=_short(self._model)), self
        )
        return box

    def _thinking_box(
        self, value: object, info: ModelInfo | None, schema: ModelSchema | None
    ) -> QComboBox:
        box = QComboBox(self)
        box.setAccessibleName("Thinking")
        for label, data in _THINKING:
            box.addItem(label, data)
        box.setCurrentIndex(max(0, box.findData(value)) if isinstance(value, bool) else 0)
        known = schema is not None and schema.known
        takes = schema.supports_thinking_toggle if known and schema is not None else None
        box.setEnabled(takes is not False or isinstance(value, bool))
        if takes is False:
            text = NO_THINKING.format(model=_short(self._model))
        else:
            text = "" if takes else THINKING_UNKNOWN
        self.thinking_note = _note(text, self)
        return box

    def _layout(self) -> None:
        form = QFormLayout()
        form.addRow("Reasoning effort", self.effort)
        form.addRow("", self.effort_note)
        form.addRow("Thinking", self.thinking)
        form.addRow("", self.thinking_note)
        form.addRow("LoRA adapter", self.lora)
        form.addRow("", self.lora_status)
        column = QVBoxLayout(self)
        column.addLayout(form)
        column.addStretch(1)
        for note in (self.effort_note, self.thinking_note, self.lora_status):
            note.setVisible(bool(note.text()))

    async def _load(self, load: FineTuneLoader) -> None:
        try:
            tunes = await load()
        except (WorkersAIError, ConfigurationError) as error:
            reason = getattr(error, "message", None) or str(error)
            self._show_lora_status(LORA_FAILED.format(reason=reason.rstrip(".")))
            return
        mine = [t for t in tunes if t.model in (None, "", self._model)]
        typed = self.lora.currentText()
        for tune in mine:
            self.lora.addItem(tune.lora_ref, tune.lora_ref)
            tip = " \N{MIDDLE DOT} ".join(p for p in (tune.description, tune.model or "") if p)
            self.lora.setItemData(self.lora.count() - 1, tip or tune.id, _TOOLTIP)
        self.lora.setEditText(typed)  # adding items must not replace what was there
        self._show_lora_status(LORA_FOUND.format(count=len(mine)) if mine else LORA_NONE)

    def _show_lora_status(self, text: str) -> None:
        self.lora_status.setText(text)
        self.lora_status.setVisible(bool(text))

    async def wait_loaded(self) -> None:
        """Wait for the fine-tunes list (tests)."""
        await self._jobs.drain()

    def cancel_loading(self) -> None:
        """The dialog closed: stop listing fine-tunes (nothing is waited for)."""
        if self._loading is not None:
            self._loading.cancel()

    def problem(self) -> str | None:
        return None

    def params(self) -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        if (effort := self.effort.currentData()) is not None:
            chosen[PARAM_REASONING_EFFORT] = effort
        if (thinking := self.thinking.currentData()) is not None:
            chosen[PARAM_ENABLE_THINKING] = thinking
        if lora := self.lora.currentText().strip():
            chosen[PARAM_LORA] = lora
        return chosen

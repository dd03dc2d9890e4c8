"""Manage presets: apply, rename (edit in place), duplicate, delete, and choose the one new
chats start from. Non-modal; every change goes through the LabController."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.lab.presets import Preset
from flarechat.ui.lab.controller import LabController
from flarechat.ui.shared.theme import mute

__all__ = ["PresetsDialog", "preset_summary"]

DEFAULT_MARK = " \N{EM DASH} default for new chats"
DIALOG_SIZE = (620, 400)
_ID_ROLE = Qt.ItemDataRole.UserRole


def preset_summary(preset: Preset) -> str:
    """Model, parameters, reasoning effort, system prompt and gateway options in words."""
    params = ", ".join(f"{k} {v}" for k, v in preset.params.items()) or "the default parameters"
    lines = [f"{preset.model}", f"Parameters: {params}"]
    if preset.reasoning_effort:
        lines.append(f"Reasoning effort: {preset.reasoning_effort}")
    prompt = " ".join(preset.system_prompt.split())
    lines.append(f"System prompt: {prompt or '(none)'}")
    if preset.gateway is not None:
        shown = {k: v for k, v in preset.gateway.items() if v not in (None, "", {}, False)}
        lines.append(
            "AI Gateway: " + (", ".join(f"{k} {v}" for k, v in shown.items()) or "defaults")
        )
    return "\n".join(lines)


class PresetsDialog(QDialog):
    """The list of presets with their details and actions."""

    def __init__(self, lab: LabController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lab = lab
        self.setWindowTitle("Presets")
        self.setAccessibleName("Presets")
        self.resize(*DIALOG_SIZE)
        self.list = QListWidget(self)
        self.list.setAccessibleName("Presets")
        self.details = mute(QLabel(self))
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = {
            name: QPushButton(label, self)
            for name, label in (
                ("apply", "Apply to this chat"),
                ("rename", "Rename"),
                ("duplicate", "Duplicate"),
                ("delete", "Delete"),
                ("default", "Use for new chats"),
            )
        }
        for button in self.buttons.values():
            button.setAccessibleName(button.text())
        self._layout()
        self._wire()
        self.refresh()

    def _layout(self) -> None:
        side = QVBoxLayout()
        for button in self.buttons.values():
            side.addWidget(button)
        side.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addLayout(side)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addLayout(row, 1)
        column.addWidget(self.details)
        column.addWidget(close)

    def _wire(self) -> None:
        lab, buttons = self.lab, self.buttons
        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        self.list.itemChanged.connect(self._on_item_edited)
        buttons["apply"].clicked.connect(lambda: self._act(lab.apply_preset))
        buttons["rename"].clicked.connect(self._edit_name)
        buttons["duplicate"].clicked.connect(lambda: self._act(lab.duplicate_preset))
        buttons["delete"].clicked.connect(lambda: self._act(lab.delete_preset))
        buttons["default"].clicked.connect(self._toggle_default)
        lab.library_changed.connect(self.refresh)

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(_ID_ROLE)) if item is not None else None

    def refresh(self) -> None:
        current = self.selected_id()
        blocked = self.list.blockSignals(True)
        self.list.clear()
        default = self.lab.library.default_preset_id
        for preset in self.lab.presets():
            item = QListWidgetItem(preset.name + (DEFAULT_MARK if preset.id == default else ""))
            item.setData(_ID_ROLE, preset.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if preset.id == current:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.list.blockSignals(blocked)
        self._show_selected()

    def _show_selected(self) -> None:
        preset_id = self.selected_id()
        preset = self.lab.library.presets.get(preset_id) if preset_id else None
        self.details.setText(preset_summary(preset) if preset else "No presets yet.")
        for button in self.buttons.values():
            button.setEnabled(preset is not None)
        is_default = preset is not None and preset.id == self.lab.library.default_preset_id
        self.buttons["default"].setText(
            "Stop using for new chats" if is_default else "Use for new chats"
        )

    def _act(self, action: object) -> None:
        preset_id = self.selected_id()
        if preset_id is not None and callable(action):
            action(preset_id)

    def _edit_name(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            preset = self.lab.library.presets.get(str(item.data(_ID_ROLE)))
            blocked = self.list.blockSignals(True)
            item.setText(preset.name if preset else item.text())  # edit the bare name
            self.list.blockSignals(blocked)
            self.list.editItem(item)

    def _on_item_edited(self, item: QListWidgetItem) -> None:
        name = item.text().removesuffix(DEFAULT_MARK).strip()
        if name:
            self.lab.rename_preset(str(item.data(_ID_ROLE)), name)
        else:
            self.refresh()

    def _toggle_default(self) -> None:
        preset_id = self.selected_id()
        is_default = preset_id == self.lab.library.default_preset_id
        self.lab.set_default_preset(None if is_default else preset_id)

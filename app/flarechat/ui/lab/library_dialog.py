"""Manage the lab's saved items: presets, system prompts and templates, a tab each. Rename in
place (double-click, F2 or Rename), edit, duplicate, delete (after a confirm), use; for
presets, the one new chats start from. Non-modal; every change goes through the LabController."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.lab.kinds import PRESETS, PROMPTS, TEMPLATES
from flarechat.ui.lab.controller import LabController
from flarechat.ui.lab.item_editors import ItemEditor, PresetEditor, TextItemEditor
from flarechat.ui.shared.theme import mute

__all__ = ["DEFAULT_MARK", "LibraryDialog", "ShelfPage"]

DEFAULT_MARK = " \N{EM DASH} default for new chats"
DIALOG_SIZE = (760, 480)
TAB_TITLES = {PRESETS: "Presets", PROMPTS: "System prompts", TEMPLATES: "Templates"}
#: What "use" does with the selected item, per kind.
USE_LABELS = {
    PRESETS: "Apply to this chat",
    PROMPTS: "Use in this chat",
    TEMPLATES: "Put in the message box",
}
EMPTY_TEXT = {
    PRESETS: "No presets yet: Preset \N{BLACK DOWN-POINTING SMALL TRIANGLE} \N{RIGHTWARDS ARROW} "
    "Save current settings as preset\N{HORIZONTAL ELLIPSIS}",
    PROMPTS: "No saved system prompts yet: System prompt \N{BLACK DOWN-POINTING SMALL TRIANGLE} "
    "\N{RIGHTWARDS ARROW} Save current system prompt\N{HORIZONTAL ELLIPSIS}",
    TEMPLATES: "No templates yet: write a message with {{variables}}, then Templates "
    "\N{BLACK DOWN-POINTING SMALL TRIANGLE} \N{RIGHTWARDS ARROW} Save message as "
    "template\N{HORIZONTAL ELLIPSIS}",
}
PROMPT_HINT = "Edits change the saved prompt, not chats that already use it."
TEMPLATE_HINT = "{{variables}} in the text get a field each above the message when it is used."
NOUNS = {PRESETS: "preset", PROMPTS: "system prompt", TEMPLATES: "template"}
_ID_ROLE = Qt.ItemDataRole.UserRole


class ShelfPage(QWidget):
    """One kind of item: the list (names editable in place), its actions and its editor."""

    def __init__(
        self,
        lab: LabController,
        kind: str,
        *,
        use: Callable[[Any], object],
        models: Sequence[str] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.lab, self.kind, self._use = lab, kind, use
        self.confirm: QMessageBox | None = None
        self.list = QListWidget(self)
        self.list.setAccessibleName(TAB_TITLES[kind])
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.empty = mute(QLabel(EMPTY_TEXT[kind], self))
        self.empty.setWordWrap(True)
        self.editor: ItemEditor = (
            PresetEditor(models=models, parent=self)
            if kind == PRESETS
            else TextItemEditor(hint=PROMPT_HINT if kind == PROMPTS else TEMPLATE_HINT, parent=self)
        )
        self.message = QLabel("", self)
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Message")
        self.buttons = self._make_buttons()
        self._lay_out()
        self._wire()

    def _make_buttons(self) -> dict[str, QPushButton]:
        labels = [
            ("use", USE_LABELS[self.kind]),
            ("rename", "Rename"),
            ("duplicate", "Duplicate"),
            ("delete", "Delete\N{HORIZONTAL ELLIPSIS}"),
        ]
        if self.kind == PRESETS:
            labels.append(("default", "Use for new chats"))
        labels += [("save", "Save changes"), ("revert", "Revert")]
        buttons = {key: QPushButton(text, self) for key, text in labels}
        for button in buttons.values():
            button.setAccessibleName(button.text().rstrip("\N{HORIZONTAL ELLIPSIS}"))
        return buttons

    def _lay_out(self) -> None:
        actions = QHBoxLayout()
        for key in ("use", "rename", "duplicate", "delete", "default"):
            if key in self.buttons:
                actions.addWidget(self.buttons[key])
        actions.addStretch(1)
        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        left.addWidget(self.empty)
        edits = QHBoxLayout()
        edits.addWidget(self.message, 1)
        edits.addWidget(self.buttons["revert"])
        edits.addWidget(self.buttons["save"])
        right = QVBoxLayout()
        right.addWidget(self.editor, 1)
        right.addLayout(edits)
        row = QHBoxLayout()
        row.addLayout(left, 2)
        row.addLayout(right, 3)
        column = QVBoxLayout(self)
        column.addLayout(row, 1)
        column.addLayout(actions)

    def _wire(self) -> None:
        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        self.list.itemChanged.connect(self._on_item_edited)
        self.buttons["use"].clicked.connect(self.use_selected)
        self.buttons["rename"].clicked.connect(self.edit_name)
        self.buttons["duplicate"].clicked.connect(self.duplicate_selected)
        self.buttons["delete"].clicked.connect(self.ask_delete)
        self.buttons["save"].clicked.connect(self.save_changes)
        self.buttons["revert"].clicked.connect(self._show_selected)
        if "default" in self.buttons:
            self.buttons["default"].clicked.connect(self._toggle_default)
        self.editor.edited.connect(self._update_edit_buttons)

    # -- the list ------------------------------------------------------------------------------

    def items(self) -> list[Any]:
        return list(self.lab.shelf(self.kind))

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(_ID_ROLE)) if item is not None else None

    def selected(self) -> Any:
        item_id = self.selected_id()
        return self.lab.shelf(self.kind).get(item_id) if item_id is not None else None

    def select(self, item_id: str) -> None:
        for row in range(self.list.count()):
            if self.list.item(row).data(_ID_ROLE) == item_id:
                self.list.setCurrentRow(row)

    def _label(self, item: Any) -> str:
        default = self.kind == PRESETS and item.id == self.lab.library.default_preset_id
        return str(item.name) + (DEFAULT_MARK if default else "")

    def refresh(self) -> None:
        """The list again from the library; the selection (and unsaved edits) kept."""
        current, unsaved = self.selected_id(), self.editor.changes()
        blocked = self.list.blockSignals(True)
        self.list.clear()
        for item in self.items():
            row = QListWidgetItem(self._label(item))
            row.setData(_ID_ROLE, item.id)
            row.setFlags(row.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(row)
            if item.id == current:
                self.list.setCurrentItem(row)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.list.blockSignals(blocked)
        self.empty.setVisible(not self.list.count())
        if not unsaved or self.selected_id() != current:
            self._show_selected()
        self._update_buttons()

    def _show_selected(self) -> None:
        self.message.clear()
        self.editor.show_item(self.selected())
        self._update_buttons()

    def _update_buttons(self) -> None:
        item = self.selected()
        for key in ("use", "rename", "duplicate", "delete", "default"):
            if key in self.buttons:
                self.buttons[key].setEnabled(item is not None)
        if "default" in self.buttons:
            is_default = item is not None and item.id == self.lab.library.default_preset_id
            self.buttons["default"].setText(
                "Stop using for new chats" if is_default else "Use for new chats"
            )
        self._update_edit_buttons()

    def _update_edit_buttons(self) -> None:
        dirty = bool(self.editor.changes())
        self.buttons["save"].setEnabled(dirty)
        self.buttons["revert"].setEnabled(dirty)
        if dirty:
            self.message.clear()

    # -- actions -------------------------------------------------------------------------------

    def use_selected(self) -> None:
        item = self.selected()
        if item is not None:
            self._use(item)

    def edit_name(self) -> None:
        """Rename in place: the list row becomes a line edit holding the bare name."""
        row, item = self.list.currentItem(), self.selected()
        if row is None or item is None:
            return
        blocked = self.list.blockSignals(True)
        row.setText(item.name)
        self.list.blockSignals(blocked)
        self.list.editItem(row)

    def _on_item_edited(self, row: QListWidgetItem) -> None:
        name = row.text().removesuffix(DEFAULT_MARK).strip()
        item = self.lab.shelf(self.kind).get(str(row.data(_ID_ROLE)))
        if name and item is not None and name != item.name:
            self.lab.rename_item(self.kind, item.id, name)  # library_changed refreshes
        else:
            self.refresh()

    def duplicate_selected(self) -> None:
        item_id = self.selected_id()
        if item_id is not None and (copy := self.lab.duplicate_item(self.kind, item_id)):
            self.select(copy.id)

    def ask_delete(self) -> QMessageBox | None:
        """Delete after a confirm (non-modal: never exec())."""
        item = self.selected()
        if item is None:
            return None
        box = QMessageBox(
            QMessageBox.Icon.Question,
            f"Delete {NOUNS[self.kind]}",
            f"Delete the {NOUNS[self.kind]} \N{LEFT DOUBLE QUOTATION MARK}{item.name}"
            "\N{RIGHT DOUBLE QUOTATION MARK}? Chats that used it keep their settings.",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        delete = box.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        delete.clicked.connect(partial(self.lab.delete_item, self.kind, item.id))
        self.confirm = box
        box.open()
        return box

    def save_changes(self) -> None:
        item, changes = self.selected(), self.editor.changes()
        if item is None or not changes:
            return
        try:
            self.lab.edit_item(self.kind, item.id, **changes)
        except ValueError as refused:
            self.message.setText(str(refused))
            return
        self._show_selected()
        self.message.setText("Saved.")

    def _toggle_default(self) -> None:
        item_id = self.selected_id()
        is_default = item_id == self.lab.library.default_preset_id
        self.lab.set_default_preset(None if is_default else item_id)


class LibraryDialog(QDialog):
    """Presets, system prompts and templates, a tab each (``pages[kind]``)."""

    def __init__(
        self,
        lab: LabController,
        *,
        use_template: Callable[[str], None],
        models: Sequence[str] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.lab = lab
        self.setWindowTitle("Presets, prompts and templates")
        self.setAccessibleName("Saved presets, prompts and templates")
        self.resize(*DIALOG_SIZE)
        uses: dict[str, Callable[[Any], object]] = {
            PRESETS: lambda preset: lab.apply_preset(preset.id),
            PROMPTS: lambda prompt: lab.use_system_prompt(prompt.text),
            TEMPLATES: lambda template: use_template(template.text),
        }
        self.tabs = QTabWidget(self)
        self.pages = {
            kind: ShelfPage(lab, kind, use=uses[kind], models=models, parent=self)
            for kind in (PRESETS, PROMPTS, TEMPLATES)
        }
        for kind, page in self.pages.items():
            self.tabs.addTab(page, TAB_TITLES[kind])
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(self.tabs, 1)
        column.addWidget(close)
        lab.library_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        for page in self.pages.values():
            page.refresh()

    def show_kind(self, kind: str) -> ShelfPage:
        """Bring the tab of ``kind`` to the front."""
        page = self.pages[kind]
        self.tabs.setCurrentWidget(page)
        return page

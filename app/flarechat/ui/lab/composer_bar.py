"""The lab's row above the composer: Preset ▾, System prompt ▾ and Templates ▾ menus, the
context meter, and the template form that appears when the message has ``{{variables}}``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.core.lab.kinds import PRESETS, PROMPTS, TEMPLATES
from flarechat.core.lab.variables import fill, variables
from flarechat.ui.chat.composer import ComposerWidget
from flarechat.ui.lab.controller import LabController
from flarechat.ui.lab.gauges import ContextMeter
from flarechat.ui.lab.template_form import TemplateForm
from flarechat.ui.shared.theme import scaled_font

if TYPE_CHECKING:  # dialogs are imported when first opened (their classes: start-up time)
    from PySide6.QtWidgets import QInputDialog

    from flarechat.ui.lab.library_dialog import LibraryDialog

__all__ = ["LabBar"]

#: Typing settles this long before the variables and the context estimate are recomputed.
DRAFT_DEBOUNCE_MS = 150
BAR_FONT_FACTOR = 0.9
DEFAULT_STAR = "\N{BLACK STAR} "
MISSING_TEXT = "Fill in {names} first (the template form above the message)."
MANAGE_PRESETS = "Manage presets\N{HORIZONTAL ELLIPSIS}"
MANAGE_PROMPTS = "Manage system prompts\N{HORIZONTAL ELLIPSIS}"
MANAGE_TEMPLATES = "Manage templates\N{HORIZONTAL ELLIPSIS}"
SAVE_PROMPT = "Save current system prompt\N{HORIZONTAL ELLIPSIS}"
SAVE_TEMPLATE = "Save message as template\N{HORIZONTAL ELLIPSIS}"


def _menu_button(text: str, name: str, parent: QWidget) -> tuple[QToolButton, QMenu]:
    button = QToolButton(parent)
    button.setText(text)
    button.setAccessibleName(name)
    button.setToolTip(name)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    button.setAutoRaise(True)
    button.setFont(scaled_font(button, BAR_FONT_FACTOR))
    menu = QMenu(button)
    button.setMenu(menu)
    return button, menu


class LabBar(QWidget):
    """Presets, saved system prompts and templates at hand while writing, and the meter."""

    def __init__(self, lab: LabController, composer: ComposerWidget, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("labBar")
        self.lab, self.composer = lab, composer
        self.library_dialog: LibraryDialog | None = None
        self.name_dialog: QInputDialog | None = None
        self.preset_button, self.preset_menu = _menu_button("Preset", "Presets", self)
        self.prompt_button, self.prompt_menu = _menu_button("System prompt", "System prompts", self)
        self.template_button, self.template_menu = _menu_button("Templates", "Templates", self)
        self.context_meter = ContextMeter(self)
        self.context_meter.setFont(scaled_font(self.context_meter, BAR_FONT_FACTOR))
        self.form = TemplateForm(self)
        self._build()
        self._draft_timer = QTimer(self, singleShot=True, interval=DRAFT_DEBOUNCE_MS)
        self._draft_timer.setObjectName("lab-draft-debounce")
        self._wire()
        self.update_draft()

    def _build(self) -> None:
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        for button in (self.preset_button, self.prompt_button, self.template_button):
            row.addWidget(button)
        row.addStretch(1)
        row.addWidget(self.context_meter)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addLayout(row)
        column.addWidget(self.form)

    def _wire(self) -> None:
        lab, chat = self.lab, self.lab.chat
        self.preset_menu.aboutToShow.connect(self._fill_preset_menu)
        self.prompt_menu.aboutToShow.connect(self._fill_prompt_menu)
        self.template_menu.aboutToShow.connect(self._fill_template_menu)
        self.composer.draft_changed.connect(self._draft_timer.start)  # text, card, images
        chat.options_changed.connect(self.on_chat_changed)  # a system prompt counts too
        self._draft_timer.timeout.connect(self.update_draft)
        lab.usage_changed.connect(self.update_draft)
        # Bound methods, not lambdas: Qt drops them with this widget (the chat outlives it).
        chat.model_changed.connect(self.on_chat_changed)
        chat.turn_finished.connect(self.on_chat_changed)

    # -- the draft: template form and context meter ----------------------------------------

    def on_chat_changed(self, *_: object) -> None:
        self.update_draft()

    def update_draft(self) -> None:
        text = self.composer.text()
        self.form.set_variables(variables(text), self.lab.remembered_values(text))
        draft = self.send_text(text, check=False) or text
        use, level = self.lab.context(draft, images=self.composer.attachments.count())
        self.context_meter.show_use(use, level, model=self.lab.current_model())

    def send_text(self, text: str, *, check: bool = True) -> str | None:
        """``text`` with the form's values filled in; None (and the first blank field
        focused) when ``check`` and a variable has no value yet."""
        if not variables(text):
            return text
        if check and (names := self.form.missing(text)):
            self.form.focus_first_missing(text)
            self.form.setToolTip(MISSING_TEXT.format(names=", ".join(names)))
            return None
        values = self.form.values()
        if check:
            self.lab.remember_values(text, values)
        return fill(text, values)

    # -- menus -----------------------------------------------------------------------------

    def _item(self, menu: QMenu, text: str, slot: object, *, enabled: bool = True) -> QAction:
        action = menu.addAction(text)
        action.setEnabled(enabled)
        if callable(slot):
            action.triggered.connect(lambda *_: slot())
        return action

    def _fill_preset_menu(self) -> None:
        menu, lab = self.preset_menu, self.lab
        menu.clear()
        default = lab.library.default_preset_id
        for preset in lab.presets():
            star = DEFAULT_STAR if preset.id == default else ""
            self._item(menu, star + preset.name, partial(lab.apply_preset, preset.id))
        if lab.presets():
            menu.addSeparator()
        has_chat = lab.chat.current_tree() is not None
        self._item(
            menu,
            "Save current settings as preset\N{HORIZONTAL ELLIPSIS}",
            self.ask_preset_name,
            enabled=has_chat,
        )
        self._item(menu, MANAGE_PRESETS, self.open_presets)

    def ask_preset_name(self) -> None:
        """Name the new preset (a non-modal input dialog: never exec())."""
        self._ask_name(
            "Save preset",
            label="Name of the preset (model, parameters, system prompt, gateway):",
            offered=self.lab.chat.current_model().rsplit("/", 1)[-1],
            save=self.lab.save_preset,
        )

    def ask_prompt_name(self) -> None:
        """Name the chat's system prompt before it is saved (its first words are offered)."""
        from flarechat.core.lab.prompt_library import prompt_title

        text = self.lab.current_system_prompt()
        self._ask_name(
            "Save system prompt",
            label="Name of the system prompt:",
            offered=prompt_title(text),
            save=partial(self._save_prompt, text),
        )

    def ask_template_name(self) -> None:
        """Name the message before it is saved as a template."""
        from flarechat.core.lab.prompt_library import prompt_title

        text = self.composer.text()
        self._ask_name(
            "Save template",
            label="Name of the template:",
            offered=prompt_title(text),
            save=partial(self._save_template, text),
        )

    def _save_prompt(self, text: str, name: str) -> None:
        self.lab.save_prompt(text, name)

    def _save_template(self, text: str, name: str) -> None:
        self.lab.save_template(text, name)

    def _ask_name(
        self, title: str, label: str, offered: str, save: Callable[[str], object]
    ) -> None:
        from PySide6.QtWidgets import QInputDialog

        dialog = QInputDialog(self)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setTextValue(offered)
        dialog.textValueSelected.connect(lambda name: save(name))
        self.name_dialog = dialog
        dialog.open()

    def open_presets(self) -> LibraryDialog:
        return self.open_library(PRESETS)

    def open_library(self, kind: str) -> LibraryDialog:
        """The manager of saved presets, prompts and templates, at the tab of ``kind``."""
        if self.library_dialog is None:
            from flarechat.ui.lab.library_dialog import LibraryDialog  # not before the first paint

            self.library_dialog = LibraryDialog(
                self.lab,
                use_template=self.composer.set_text,
                models=self.lab.model_names(),
                parent=self.window(),
            )
        self.library_dialog.refresh()
        self.library_dialog.show_kind(kind)
        self.library_dialog.show()
        self.library_dialog.raise_()
        return self.library_dialog

    def _fill_prompt_menu(self) -> None:
        menu, lab = self.prompt_menu, self.lab
        menu.clear()
        current = lab.current_system_prompt()
        for prompt in lab.prompts():
            action = self._item(menu, prompt.name, partial(lab.use_system_prompt, prompt.text))
            action.setCheckable(True)
            action.setChecked(prompt.text == current)
            action.setToolTip(prompt.text)
        menu.setToolTipsVisible(True)
        if lab.prompts():
            menu.addSeparator()
        saved = any(p.text == current for p in lab.prompts())
        self._item(
            menu,
            SAVE_PROMPT,
            self.ask_prompt_name,
            enabled=bool(current.strip()) and not saved,
        )
        self._item(
            menu, "No system prompt", partial(lab.use_system_prompt, ""), enabled=bool(current)
        )
        self._item(menu, MANAGE_PROMPTS, partial(self.open_library, PROMPTS))

    def _fill_template_menu(self) -> None:
        menu, lab = self.template_menu, self.lab
        menu.clear()
        for template in lab.templates():
            self._item(menu, template.name, partial(self.composer.set_text, template.text))
        if lab.templates():
            menu.addSeparator()
        text = self.composer.text()
        known = any(t.text == text for t in lab.templates())
        self._item(
            menu,
            SAVE_TEMPLATE,
            self.ask_template_name,
            enabled=bool(variables(text)) and not known,
        )
        self._item(menu, MANAGE_TEMPLATES, partial(self.open_library, TEMPLATES))

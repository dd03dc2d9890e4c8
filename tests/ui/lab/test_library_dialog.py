"""Saved system prompts and templates get a name when saved and can be renamed in place,
edited, duplicated and deleted (after a confirm) from the lab's manager; presets can be
edited there too. Every change reaches the profile's lab file."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox
from shell_helpers import MODEL
from window_helpers import until, window

from flarechat.core.lab.kinds import PRESETS, PROMPTS, TEMPLATES
from flarechat.core.lab.storage import LAB_FILENAME, LabStore
from flarechat.emulator import EmulatorServer
from flarechat.ui.lab.composer_bar import (
    MANAGE_PROMPTS,
    MANAGE_TEMPLATES,
    SAVE_PROMPT,
    SAVE_TEMPLATE,
    LabBar,
)
from flarechat.ui.lab.item_editors import PresetEditor, TextItemEditor
from flarechat.ui.lab.library_dialog import ShelfPage
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio(loop_scope="function")
OTHER = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
LONG = "You are a careful code reviewer. Point out bugs first, then style."


def _trigger(bar: LabBar, menu_name: str, text: str) -> None:
    menu = getattr(bar, menu_name)
    menu.aboutToShow.emit()
    next(a for a in menu.actions() if a.text() == text).trigger()


def _answer_name(bar: LabBar, name: str | None) -> QInputDialog:
    """Type ``name`` into the name dialog just opened (None: take the name offered)."""
    dialog = bar.name_dialog
    assert dialog is not None
    assert dialog.isVisible()
    if name is not None:
        dialog.setTextValue(name)
    dialog.accept()
    return dialog


def _page(main: MainWindow, kind: str) -> ShelfPage:
    return main.lab_hooks.bar.open_library(kind).pages[kind]


def _text_editor(page: ShelfPage) -> TextItemEditor:
    assert isinstance(page.editor, TextItemEditor)
    return page.editor


def _saved(profile: Path) -> LabStore:
    return LabStore(profile / "config" / LAB_FILENAME)


async def test_saving_a_system_prompt_asks_its_name_offering_the_first_words(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        bar, lab = main.lab_hooks.bar, main.lab_hooks.lab
        env.chat.set_options(LONG, {})
        _trigger(bar, "prompt_menu", SAVE_PROMPT)
        assert lab.prompts() == []  # nothing saved before it is named
        dialog = _answer_name(bar, None)
        assert dialog.textValue().startswith("You are a careful code reviewer")
        env.chat.set_options("Talk like a pirate.", {})
        _trigger(bar, "prompt_menu", SAVE_PROMPT)
        _answer_name(bar, "Pirate")
        names = [p.name for p in lab.prompts()]
        assert names[1] == "Pirate"
        bar.prompt_menu.aboutToShow.emit()
        assert "Pirate" in [a.text() for a in bar.prompt_menu.actions()]
        assert "Delete" not in [a.text() for a in bar.prompt_menu.actions()]  # the manager's
        await lab.drain()
    assert [p.name for p in _saved(isolated_profile).load().prompts] == names


async def test_a_system_prompt_is_renamed_in_place_edited_duplicated_and_deleted(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab, bar = main.lab_hooks.lab, main.lab_hooks.bar
        lab.save_prompt(LONG)
        _trigger(bar, "prompt_menu", MANAGE_PROMPTS)
        dialog = bar.library_dialog
        assert dialog is not None
        page = dialog.pages[PROMPTS]
        assert dialog.tabs.currentWidget() is page
        # rename in place: F2 on the row opens its editor holding the bare name
        page.list.setFocus()
        page.list.setCurrentRow(0)
        QTest.keyClick(page.list, Qt.Key.Key_F2)
        line = page.list.findChild(QLineEdit)
        assert line is not None
        assert line.text() == lab.prompts()[0].name
        line.setText("Reviewer")
        QTest.keyClick(line, Qt.Key.Key_Return)  # the delegate commits on the next loop turn
        await until(lambda: [p.name for p in lab.prompts()] == ["Reviewer"], "the rename")
        assert page.list.item(0).text() == "Reviewer"
        # edit the text: Save changes only once something changed
        editor = _text_editor(page)
        assert not page.buttons["save"].isEnabled()
        editor.text.setPlainText("Review the code. Bugs first.")
        assert page.buttons["save"].isEnabled()
        page.buttons["save"].click()
        [prompt] = lab.prompts()
        assert (prompt.name, prompt.text) == ("Reviewer", "Review the code. Bugs first.")
        # use it, duplicate it, delete the copy after a confirm (Cancel keeps it)
        page.buttons["use"].click()
        conversation = env.chat.current_tree().conversation  # type: ignore[union-attr]
        assert conversation.system_prompt == "Review the code. Bugs first."
        page.buttons["duplicate"].click()
        assert [p.name for p in lab.prompts()] == ["Reviewer", "Reviewer (copy)"]
        assert page.selected().name == "Reviewer (copy)"
        page.buttons["delete"].click()
        confirm = page.confirm
        assert isinstance(confirm, QMessageBox)
        assert "Reviewer (copy)" in confirm.text()
        confirm.button(QMessageBox.StandardButton.Cancel).click()
        assert len(lab.prompts()) == 2
        page.ask_delete()
        assert page.confirm is not None
        next(b for b in page.confirm.buttons() if b.text() == "Delete").click()
        assert [p.name for p in lab.prompts()] == ["Reviewer"]
        dialog.close()
        await lab.drain()
    [kept] = _saved(isolated_profile).load().prompts
    assert (kept.name, kept.text) == ("Reviewer", "Review the code. Bugs first.")


async def test_an_unnamed_prompt_edited_takes_its_new_first_words(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        lab = main.lab_hooks.lab
        lab.save_prompt(LONG)
        page = _page(main, PROMPTS)
        _text_editor(page).text.setPlainText("Answer in haiku.")
        page.buttons["save"].click()
        assert [p.name for p in lab.prompts()] == ["Answer in haiku."]
        assert page.list.item(0).text() == "Answer in haiku."
        await lab.drain()


async def test_a_template_is_named_edited_and_refused_without_variables(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        lab, bar = main.lab_hooks.lab, main.lab_hooks.bar
        text = "Translate {{phrase}} into {{language}}"
        main.pane.composer.set_text(text)
        _trigger(bar, "template_menu", SAVE_TEMPLATE)
        _answer_name(bar, "Translate")
        _trigger(bar, "template_menu", MANAGE_TEMPLATES)
        assert bar.library_dialog is not None
        page = bar.library_dialog.pages[TEMPLATES]
        editor = _text_editor(page)
        editor.text.setPlainText("No variables left")
        page.buttons["save"].click()
        assert "{{variable}}" in page.message.text()
        assert lab.templates()[0].text == text  # refused: nothing changed
        editor.text.setPlainText("Say {{phrase}} in {{language}}, politely")
        editor.name.setText("Polite translation")
        page.buttons["save"].click()
        [template] = lab.templates()
        assert template.name == "Polite translation"
        assert template.text == "Say {{phrase}} in {{language}}, politely"
        main.pane.composer.set_text("")
        page.buttons["use"].click()
        assert main.pane.composer.text() == template.text
        await lab.drain()


async def test_a_preset_is_edited_keeping_what_the_form_does_not_show(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab = main.lab_hooks.lab
        env.chat.set_options("Be terse.", {"max_tokens": 300, "temperature": 0.4, "seed": 7})
        preset = lab.save_preset("")  # no name given: called after its model
        assert preset is not None
        assert preset.name == MODEL.rsplit("/", 1)[-1]
        page = _page(main, PRESETS)
        editor = page.editor
        assert isinstance(editor, PresetEditor)
        assert "seed 7" in editor.kept.text()
        editor.model.setEditText(OTHER)
        editor.temperature.setValue(0.9)
        editor.max_tokens.setValue(0)  # back to the default
        editor.effort.setCurrentIndex(editor.effort.findData("high"))
        editor.system_prompt.setPlainText("Be kind.")
        page.buttons["save"].click()
        [edited] = lab.presets()
        assert edited.model == OTHER
        assert edited.name == OTHER.rsplit("/", 1)[-1]  # its name follows its model
        assert dict(edited.params) == {"temperature": 0.9, "seed": 7}
        assert (edited.reasoning_effort, edited.system_prompt) == ("high", "Be kind.")
        assert edited.gateway == preset.gateway
        editor.temperature.setValue(5.0)  # out of range: the spin box clamps it
        assert editor.temperature.value() <= 2.0
        page.buttons["use"].click()
        conversation = env.chat.current_tree().conversation  # type: ignore[union-attr]
        assert (conversation.model, conversation.system_prompt) == (OTHER, "Be kind.")
        await lab.drain()
    [kept] = _saved(isolated_profile).load().presets
    assert (kept.model, kept.system_prompt) == (OTHER, "Be kind.")

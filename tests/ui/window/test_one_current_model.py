"""One current model per conversation (issue 23, item 3 and its guard rail): after each user
action (pick a model, switch chat, open a chat made by compare, change settings) every widget
that names the model (picker, composer placeholder, context meter, status bar, conversation
settings, View as code) names the same one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from shell_helpers import MODEL, ChatEnv
from window_helpers import until, window

from flarechat.core import figures, meters
from flarechat.emulator import EmulatorServer
from flarechat.ui.window import window_dialogs
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

OTHER = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"  # a 24k window (MODEL's is 128k)
THIRD = "@cf/mistral/mistral-7b-instruct-v0.2-lora"  # a 15k window


def _short(model: str) -> str:
    return model.rsplit("/", 1)[-1]


def named_models(main: MainWindow) -> dict[str, str]:
    """What each widget that names the model says it is (short names, as they show them)."""
    chat = main.chat
    placeholder = main.pane.composer.editor.placeholderText()
    meter = main.lab_hooks.bar.context_meter
    dialog = window_dialogs.open_conversation_options(main, chat, prefs=main.workspace.prefs)
    assert dialog is not None
    try:
        settings_model = dialog.model_label.text()
    finally:
        dialog.reject()
    return {
        "picker": _short(main.picker.current_model()),
        "picker button": main.picker.button.accessibleDescription().split(": ", 1)[1],
        "placeholder": placeholder.removeprefix("Message ").split(" \N{EM DASH} ", 1)[0],
        "context meter": meter.model,
        "status bar": main.metrics_label.full_text().split(figures.SEPARATOR, 1)[0],
        "conversation settings": _short(settings_model),
        "controller": _short(chat.current_model()),
    }


def assert_one_model(main: MainWindow, model: str) -> None:
    named = named_models(main)
    assert named == dict.fromkeys(named, _short(model)) | {"picker button": model}, named
    info = main.lab_hooks.lab.model_info(model)
    assert info is not None
    assert info.context_window
    window_text = (
        meters.context_text(
            meters.ContextUse(history=0, draft=0, window=info.context_window, exact=False)
        )
        .split(" / ", 1)[1]
        .split(" (", 1)[0]
    )
    assert f" / {window_text} " in main.lab_hooks.bar.context_meter.text()


async def _ready(main: MainWindow) -> None:
    await until(lambda: bool(main.picker.models()), "the model list")
    await until(lambda: main.lab_hooks.lab.model_info() is not None, "the lab's catalogue")


def _pick(main: MainWindow, model: str) -> None:
    """Ctrl+Shift+M's popup: type the id, press Enter, as a user would."""
    main.picker.open_popup()
    QTest.keyClicks(main.picker.popup.search, model)
    QTest.keyClick(main.picker.popup.search, Qt.Key.Key_Return)


async def _send(env: ChatEnv, main: MainWindow, text: str) -> str:
    main.pane.composer.set_text(text)
    QTest.keyClick(main.pane.composer.editor, Qt.Key.Key_Return)
    args = await env.recorder.wait("turn_finished", lambda _m, d: d.status == "done", seen=False)
    await env.chat.drain()
    return str(args[0])


def assert_code_names(main: MainWindow, model: str) -> None:
    """View as code (Ctrl+Alt+C) of the reply just sent names the model in use."""
    hooks = main.lab_hooks
    hooks.view_last_code()
    assert hooks.code_dialog is not None
    assert hooks.code_dialog.code.model == model
    hooks.code_dialog.close()


async def test_picking_a_model_changes_every_widget_that_names_it(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _ready(main)
        assert_one_model(main, MODEL)
        _pick(main, THIRD)
        await env.chat.drain()
        assert_one_model(main, THIRD)
        await _send(env, main, "Hello")
        assert_one_model(main, THIRD)
        assert_code_names(main, THIRD)


async def test_switching_chats_shows_each_chats_own_model_and_no_other_figures(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _ready(main)
        await _send(env, main, "First chat")
        first = env.chat.current_id
        assert first is not None
        main.new_chat()
        _pick(main, OTHER)
        await _send(env, main, "Second chat")
        assert "TTFT" in main.metrics_label.full_text()
        assert_one_model(main, OTHER)
        opened = env.recorder.mark()
        main.workspace.open(first)
        await env.recorder.wait("conversation_opened", lambda cid, _p: cid == first, after=opened)
        assert_one_model(main, MODEL)
        assert "TTFT" not in main.metrics_label.full_text()  # the other chat's reply's figures
        await _send(env, main, "Still the first model")
        assert_one_model(main, MODEL)
        assert_code_names(main, MODEL)


async def test_a_chat_continued_from_compare_names_the_chosen_columns_model(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _ready(main)
        main.open_compare()
        compare = main.compare_window
        assert compare is not None
        compare.columns[0].picker.set_current(MODEL)
        compare.columns[1].picker.set_current(THIRD)
        compare.prompt.setPlainText("Name a colour")
        compare.send_button.click()
        controller = compare.controller
        await until(lambda: not controller.busy and controller.round_done(), "the compare run")
        run = controller.run
        assert run is not None
        opened = env.recorder.mark()
        assert controller.continue_with(1)
        await env.recorder.wait(
            "conversation_opened", lambda cid, _p: cid == run.conversation_id, after=opened
        )
        await controller.drain()
        assert_one_model(main, THIRD)
        await _send(env, main, "And another")
        assert_one_model(main, THIRD)
        assert_code_names(main, THIRD)


async def test_changing_settings_or_applying_a_preset_keeps_every_widget_on_one_model(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _ready(main)
        _pick(main, OTHER)
        settings = main.workspace.prefs.settings
        changed = dataclasses.replace(settings, default_max_tokens=333)
        main.workspace.apply_settings(changed)
        main.apply_appearance(changed)
        await env.chat.drain()
        assert_one_model(main, OTHER)
        lab = main.lab_hooks.lab
        await lab.drain()  # the lab file is read
        preset = lab.save_preset("Other")
        assert preset is not None
        _pick(main, THIRD)
        assert_one_model(main, THIRD)
        assert lab.apply_preset(preset.id)
        assert_one_model(main, OTHER)
        await _send(env, main, "With the preset")
        assert_code_names(main, OTHER)

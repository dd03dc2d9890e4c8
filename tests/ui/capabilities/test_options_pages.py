"""The conversation dialog's capability pages: structured output, tools, reasoning and LoRA,
and what they save into the conversation's params."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import Connection, Secret
from flarechat.api.models import ModelInfo, ReasoningEffortInfo
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN, EmulatorServer
from flarechat.ui.capabilities.model_page import LORA_NONE, ModelPage
from flarechat.ui.capabilities.output_page import NATIVE_NOTE, OPENAI_NOTE, OutputPage
from flarechat.ui.capabilities.tools_page import NO_FUNCTIONS_NOTE, ToolsPage
from flarechat.ui.settings.conversation_dialog import ConversationDialog

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}
TOOL = {
    "name": "get_weather",
    "description": "Weather now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "canned_result": '{"temp": 21}',
}
GPT_OSS = ModelInfo(
    name="@cf/openai/gpt-oss-120b",
    reasoning=True,
    function_calling=True,
    reasoning_effort=ReasoningEffortInfo(("low", "medium", "high"), "medium", mandatory=True),
)
LORA_MODEL = "@cf/mistral/mistral-7b-instruct-v0.2-lora"


def _dialog(qtbot: QtBot, params: dict[str, Any], **kw: Any) -> ConversationDialog:
    dialog = ConversationDialog(system_prompt="", params=params, default_max_tokens=2048, **kw)
    qtbot.addWidget(dialog)
    return dialog


def test_json_mode_and_a_schema_are_saved_and_streaming_is_explained(qtbot: QtBot) -> None:
    page = OutputPage({}, native=True)
    qtbot.addWidget(page)
    assert page.params() == {}
    assert page.note.isHidden()
    page.buttons["json_object"].setChecked(True)
    assert page.params() == {"response_format": {"type": "json_object"}}
    assert page.note.text() == NATIVE_NOTE
    assert not page.note.isHidden()
    assert not page.editor.isEnabled()
    page.buttons["json_schema"].setChecked(True)
    page.editor.edit.setPlainText(
        '{"type": "object", "properties": {"answer": {"type": "string"}}}'
    )
    page.schema_name.setText("answer")
    assert page.params() == {
        "response_format": {"type": "json_schema", "schema": SCHEMA, "name": "answer"}
    }
    other = OutputPage({"response_format": {"type": "json_schema", "schema": SCHEMA}}, native=False)
    qtbot.addWidget(other)
    assert other.mode() == "json_schema"
    assert other.editor.value() == SCHEMA
    assert other.note.text() == OPENAI_NOTE


def test_ok_with_a_broken_schema_stays_open_on_its_page(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, {})
    dialog.output.buttons["json_schema"].setChecked(True)
    dialog.output.editor.edit.setPlainText('{"type": "object", ')
    with qtbot.assertNotEmitted(dialog.options_accepted):
        dialog._accept()
    assert dialog.tabs.currentWidget() is dialog.output
    assert dialog.error.text().startswith("Structured output: Not valid JSON — Line 1, column")


def test_tools_are_defined_with_canned_results_and_a_tool_choice(qtbot: QtBot) -> None:
    page = ToolsPage({}, function_calling=True, model="m")
    qtbot.addWidget(page)
    assert page.params() == {}
    assert not page.choice.isEnabled()
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    page.name.setText("get_weather")
    page.name.editingFinished.emit()
    page.description.setText("Weather now")
    page.parameters.edit.setPlainText(
        '{"type": "object", "properties": {"city": {"type": "string"}}}'
    )
    page.canned.setPlainText('{"temp": 21}')
    page.choice.setCurrentIndex(page.choice.findText("Always call get_weather"))
    assert page.problem() is None
    assert page.params() == {"tools": [TOOL], "tool_choice": {"name": "get_weather"}}
    assert page.list.item(0).text() == "get_weather"


def test_stored_tools_reload_and_bad_ones_are_refused(qtbot: QtBot) -> None:
    page = ToolsPage(
        {"tools": [TOOL], "tool_choice": "required"}, function_calling=False, model="@cf/x/tiny"
    )
    qtbot.addWidget(page)
    assert page.name.text() == "get_weather"
    assert page.choice.currentData() == "required"
    assert page.note.text() == NO_FUNCTIONS_NOTE.format(model="tiny")
    assert not page.note.isHidden()
    page.add_tool()
    page.name.setText("get weather!")
    assert page.problem() == (
        'Tool get weather!: the name must be 1 to 64 letters, digits, _ or -, not "get weather!".'
    )
    page.name.setText("get_weather")
    assert page.problem() == "Two tools are named get_weather."
    page.name.setText("get_time")
    page.parameters.edit.setPlainText("{")
    problem = page.problem()
    assert problem is not None
    assert problem.startswith("Tool get_time: parameters: Not valid JSON")
    page.remove_tool()
    assert page.params() == {"tools": [TOOL], "tool_choice": "required"}


def test_reasoning_effort_offers_the_catalogue_choices(qtbot: QtBot) -> None:
    page = ModelPage({}, model=GPT_OSS.name, info=GPT_OSS)
    qtbot.addWidget(page)
    choices = [page.effort.itemData(i) for i in range(page.effort.count())]
    assert choices == [None, "low", "medium", "high"]  # mandatory: no "off"
    page.effort.setCurrentIndex(page.effort.findData("high"))
    page.thinking.setCurrentIndex(page.thinking.findData(False))
    assert page.params() == {"reasoning_effort": "high", "enable_thinking": False}
    assert not page.lora.isEnabled()  # gpt-oss takes no adapter
    plain = ModelPage({}, model="@cf/meta/llama-3.1-8b-instruct-fast",
                      info=ModelInfo(name="@cf/meta/llama-3.1-8b-instruct-fast"))  # fmt: skip
    qtbot.addWidget(plain)
    assert not plain.effort.isEnabled()
    assert "lists no reasoning-effort control" in plain.effort_note.text()


@pytest.mark.asyncio
async def test_lora_adapters_come_from_the_accounts_fine_tunes(
    qtbot: QtBot, emulator: EmulatorServer
) -> None:
    client = WorkersAIClient()
    conn = Connection(
        account_id=DEMO_ACCOUNT_ID, token=Secret(DEMO_TOKEN), api_base=emulator.api_base
    )
    try:
        page = ModelPage(
            {"lora": "typed-by-hand"},
            model=LORA_MODEL,
            info=ModelInfo(name=LORA_MODEL, lora=True),
            load_finetunes=lambda: client.list_finetunes(conn),
        )
        qtbot.addWidget(page)
        assert page.lora_status.text().startswith("Listing the account's fine-tunes")
        await page.wait_loaded()
        names = [page.lora.itemText(i) for i in range(page.lora.count())]
        assert names == ["support-tone", "pirate-speak"]  # math-steps is for another model
        assert page.lora.currentText() == "typed-by-hand"
        assert page.lora_status.text().startswith("2 fine-tune(s) for this model")
        other = ModelPage(
            {},
            model="@cf/x/other-lora",
            info=ModelInfo(name="@cf/x/other-lora", lora=True),
            load_finetunes=lambda: client.list_finetunes(conn),
        )
        qtbot.addWidget(other)
        await other.wait_loaded()
        assert other.lora_status.text() == LORA_NONE
        page.lora.setCurrentIndex(1)
        assert page.params() == {"lora": "pirate-speak"}
    finally:
        await client.aclose()


@pytest.mark.asyncio
async def test_a_fine_tune_list_that_fails_leaves_typing(
    qtbot: QtBot, emulator: EmulatorServer
) -> None:
    client = WorkersAIClient()
    conn = Connection(account_id=DEMO_ACCOUNT_ID, token=Secret("invalid" + "x" * 33),
                      api_base=emulator.api_base)  # fmt: skip
    try:
        page = ModelPage({}, model=LORA_MODEL, info=ModelInfo(name=LORA_MODEL, lora=True),
                         load_finetunes=lambda: client.list_finetunes(conn))  # fmt: skip
        qtbot.addWidget(page)
        await page.wait_loaded()
        assert page.lora_status.text().startswith("The fine-tunes could not be listed (")
        assert page.lora_status.text().endswith("type an adapter's name or id.")
        assert page.lora.isEnabled()
    finally:
        await client.aclose()


def test_the_dialog_saves_every_page_together(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, {"temperature": 0.5, "tools": [TOOL], "reasoning_effort": "low"},
                     model=GPT_OSS.name, model_info=GPT_OSS)  # fmt: skip
    dialog.output.buttons["json_object"].setChecked(True)
    with qtbot.waitSignal(dialog.options_accepted) as accepted:
        dialog._accept()
    assert accepted.args[1] == {
        "temperature": 0.5,
        "response_format": {"type": "json_object"},
        "tools": [TOOL],
        "reasoning_effort": "low",
    }
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == [
        "General", "Structured output", "Tools", "Reasoning and LoRA",
    ]  # fmt: skip

"""The active options near the composer (issue 23, item 6): JSON mode, tools, a system prompt,
LoRA and a reasoning effort each show as a chip while on, and one click on a chip turns it off
for the conversation: the next request sent goes without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from shell_helpers import ChatEnv
from window_helpers import until, window

from flarechat.core.connect import (
    PARAM_LORA,
    PARAM_REASONING_EFFORT,
    PARAM_RESPONSE_FORMAT,
    PARAM_TOOLS,
)
from flarechat.emulator import EmulatorServer
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "canned_result": '{"temp_c": 21}',
}
ALL_ON: dict[str, Any] = {
    "max_tokens": 40,
    PARAM_RESPONSE_FORMAT: {"type": "json_object"},
    PARAM_TOOLS: [WEATHER],
    PARAM_LORA: "my-adapter",
    PARAM_REASONING_EFFORT: "high",
}


def _chips(main: MainWindow) -> list[str]:
    chips = main.pane.option_chips
    return [b.text() for b in chips.buttons()] if chips.isVisibleTo(main) else []


def _remove(main: MainWindow, label: str) -> None:
    (button,) = [b for b in main.pane.option_chips.buttons() if b.text().startswith(label)]
    assert button.accessibleName().startswith("Turn off ")
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


async def _sent_body(env: ChatEnv, main: MainWindow) -> dict[str, Any]:
    before = len(env.emulator.state.requests)
    main.pane.composer.set_text("Hello")
    QTest.keyClick(main.pane.composer.editor, Qt.Key.Key_Return)
    await env.recorder.wait("turn_finished", seen=False)
    await env.chat.drain()
    (body,) = [
        r.json
        for r in env.emulator.state.requests[before:]
        if "/ai/run/" in r.path and isinstance(r.json, dict)
    ]
    return body


async def test_each_active_option_is_a_chip_that_one_click_turns_off(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        assert _chips(main) == []  # nothing on: no row at all
        env.chat.set_options("You answer in French.", dict(ALL_ON))
        await until(lambda: len(_chips(main)) == 5, "the chips")
        labels = _chips(main)
        assert [label.split(":")[0] for label in labels] == [
            "System prompt",
            "JSON mode",
            "Tools",
            "LoRA",
            "Reasoning",
        ]
        assert "get_weather" in labels[2]
        assert "my-adapter" in labels[3]
        assert "high" in labels[4]
        for label in ("JSON mode", "Tools", "LoRA", "Reasoning", "System prompt"):
            _remove(main, label)
            assert not any(chip.startswith(label) for chip in _chips(main))
        tree = env.chat.current_tree()
        assert tree is not None
        assert tree.conversation.system_prompt == ""
        assert tree.conversation.params == {"max_tokens": 40}  # the sampling stays
        assert not main.pane.option_chips.isVisibleTo(main)
        body = await _sent_body(env, main)
        assert not {PARAM_RESPONSE_FORMAT, PARAM_TOOLS, PARAM_LORA, PARAM_REASONING_EFFORT} & set(
            body
        )
        assert all(m.get("role") != "system" for m in body.get("messages", []))


async def test_the_chips_follow_the_chat_on_screen(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        env.chat.set_options("Be terse.", {PARAM_REASONING_EFFORT: "low"})
        await _sent_body(env, main)
        first = env.chat.current_id
        assert first is not None
        main.new_chat()
        assert _chips(main) == []
        opened = env.recorder.mark()
        main.workspace.open(first)
        await env.recorder.wait("conversation_opened", lambda cid, _p: cid == first, after=opened)
        assert [c.split(":")[0] for c in _chips(main)] == ["System prompt", "Reasoning"]

"""Reasoning effort and enable_thinking, and schemas that show each model's capabilities."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from emulator_helpers import (
    ACCOUNT,
    GEMMA,
    GLM,
    GPT_OSS,
    LLAMA,
    MISTRAL_LORA,
    SCOUT,
    VISION_32,
    chat_url,
)

from flarechat.emulator.server import EmulatorServer


def _reasoning(
    http: httpx.Client, emulator: EmulatorServer, model: str, **extra: Any
) -> str | None:
    body = {"model": model, "messages": [{"role": "user", "content": "Think"}], **extra}
    reply = http.post(chat_url(emulator), json=body)
    assert reply.status_code == 200, reply.text
    message = reply.json()["choices"][0]["message"]
    value: str | None = message.get("reasoning_content")
    return value


def test_effort_changes_the_amount_of_reasoning(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    low, medium, high = (
        _reasoning(http, emulator, GLM, reasoning_effort=e) or "" for e in ("low", "medium", "high")
    )
    assert 0 < len(low) < len(medium) < len(high)
    assert _reasoning(http, emulator, GLM) == medium  # default effort: medium
    assert _reasoning(http, emulator, GLM, reasoning_effort=None) is None
    disabled = _reasoning(http, emulator, GLM, chat_template_kwargs={"enable_thinking": False})
    assert disabled is None


def test_enable_thinking_without_an_effort_property(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    assert _reasoning(http, emulator, GEMMA)
    assert (
        _reasoning(http, emulator, GEMMA, chat_template_kwargs={"enable_thinking": False}) is None
    )


@pytest.mark.parametrize("effort", [None, "extreme"])
def test_mandatory_reasoning_rejects_null_and_unknown(
    emulator: EmulatorServer, http: httpx.Client, effort: str | None
) -> None:
    body = {
        "model": GPT_OSS,
        "messages": [{"role": "user", "content": "x"}],
        "reasoning_effort": effort,
    }
    reply = http.post(chat_url(emulator), json=body)
    assert (reply.status_code, reply.json()["errors"][0]["code"]) == (400, 5006)
    assert "/reasoning_effort" in reply.json()["errors"][0]["message"]


def _schema(http: httpx.Client, emulator: EmulatorServer, model: str) -> dict[str, Any]:
    url = f"{emulator.api_base}/accounts/{ACCOUNT}/ai/models/schema"
    result: dict[str, Any] = http.get(url, params={"model": model}).json()["result"]
    return result


def _messages_variant(schema: dict[str, Any]) -> dict[str, Any]:
    [variant] = [v for v in schema["input"]["oneOf"] if v["title"] == "Messages"]
    properties: dict[str, Any] = variant["properties"]
    return properties


def test_schemas_reflect_capabilities(emulator: EmulatorServer, http: httpx.Client) -> None:
    plain = _messages_variant(_schema(http, emulator, LLAMA))
    assert plain["messages"]["items"]["properties"]["content"]["type"] == "string"
    assert not {"tools", "response_format", "lora", "image", "reasoning_effort"} & set(plain)
    scout = _messages_variant(_schema(http, emulator, SCOUT))
    parts = scout["messages"]["items"]["properties"]["content"]["oneOf"][1]["items"]["oneOf"]
    assert [p["properties"]["type"]["enum"] for p in parts] == [["text"], ["image_url"]]
    assert {"tools", "tool_choice", "response_format"} <= set(scout)
    assert "image" in _messages_variant(_schema(http, emulator, VISION_32))
    assert "lora" in _messages_variant(_schema(http, emulator, MISTRAL_LORA))
    gpt = _messages_variant(_schema(http, emulator, GPT_OSS))
    assert gpt["reasoning_effort"]["type"] == ["string"]
    glm = _messages_variant(_schema(http, emulator, GLM))
    assert None in glm["reasoning_effort"]["enum"]
    assert "chat_template_kwargs" in glm
    assert "choices" in _schema(http, emulator, GEMMA)["output"]["properties"]
    assert "response" in _schema(http, emulator, LLAMA)["output"]["properties"]

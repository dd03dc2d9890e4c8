"""Function calling: both tool forms, tool_choice, legacy and OpenAI shapes, streamed deltas."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from emulator_helpers import GEMMA, LLAMA_70B, ask, chat_url, gateway_url, run_url, sse_json

from flarechat.emulator.server import EmulatorServer

WEATHER_PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city", "days"],
}
FLAT = [{"name": "get_weather", "description": "Weather", "parameters": WEATHER_PARAMS}]
OPENAI = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather", "parameters": WEATHER_PARAMS},
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]
ARGS = {"city": "example", "days": 1}


@pytest.mark.parametrize("tools", [FLAT, OPENAI])
def test_native_legacy_tool_call(emulator: EmulatorServer, http: httpx.Client, tools: Any) -> None:
    body = ask("Use get_weather for Paris", tools=tools)
    result = http.post(run_url(emulator, LLAMA_70B), json=body).json()["result"]
    assert result["tool_calls"] == [{"name": "get_weather", "arguments": ARGS}]
    assert result["response"] == ""
    emulator.state.set_variant("legacy_tool_response", "null")
    assert http.post(run_url(emulator, LLAMA_70B), json=body).json()["result"]["response"] is None


def test_no_mention_no_call(emulator: EmulatorServer, http: httpx.Client) -> None:
    result = http.post(run_url(emulator, LLAMA_70B), json=ask("Hello", tools=FLAT)).json()["result"]
    assert result["tool_calls"] == []
    assert result["response"]


def _openai_call(message: dict[str, Any]) -> tuple[str, Any]:
    [call] = message["tool_calls"]
    assert call["type"] == "function"
    assert call["id"].startswith("chatcmpl-tool-")
    return call["function"]["name"], json.loads(call["function"]["arguments"])


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("required", "get_weather"),
        ({"type": "function", "function": {"name": "get_time"}}, "get_time"),
    ],
)
def test_chat_completions_tool_choice_forces_a_call(
    emulator: EmulatorServer, http: httpx.Client, choice: Any, expected: str
) -> None:
    body = {"model": GEMMA, **ask("Hello", tools=OPENAI, tool_choice=choice)}
    reply = http.post(chat_url(emulator), json=body).json()
    [choice_out] = reply["choices"]
    assert choice_out["finish_reason"] == "tool_calls"
    assert choice_out["message"]["content"] is None
    assert _openai_call(choice_out["message"])[0] == expected


def test_tool_choice_none_never_calls(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = {"model": GEMMA, **ask("get_weather please", tools=OPENAI, tool_choice="none")}
    message = http.post(chat_url(emulator), json=body).json()["choices"][0]["message"]
    assert "tool_calls" not in message


def test_openai_profile_on_native_route_uses_openai_shape(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    body = ask("call get_weather", tools=FLAT)
    result = http.post(run_url(emulator, GEMMA), json=body).json()["result"]
    assert result["choices"][0]["finish_reason"] == "tool_calls"
    assert _openai_call(result["choices"][0]["message"]) == ("get_weather", ARGS)


def test_streamed_openai_tool_call_in_fragments(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    body = {"model": GEMMA, **ask("call get_weather", tools=OPENAI, stream=True)}
    events = sse_json(
        http.post(gateway_url(emulator, "workers-ai/v1/chat/completions"), json=body).content
    )
    deltas = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in events
        if c.get("choices") and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert len(deltas) > 2
    head = deltas[0]
    assert (head["index"], head["type"], head["function"]["name"]) == (0, "function", "get_weather")
    assert head["id"].startswith("chatcmpl-tool-")
    assert all("id" not in d and d["index"] == 0 for d in deltas[1:])
    arguments = "".join(d["function"]["arguments"] for d in deltas)
    assert json.loads(arguments) == ARGS
    finishes = [c["choices"][0]["finish_reason"] for c in events if c.get("choices")]
    assert finishes[-1] == "tool_calls"


def test_streamed_legacy_tool_call_variants(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = ask("call get_weather", tools=FLAT, stream=True)
    events = sse_json(http.post(run_url(emulator, LLAMA_70B), json=body).content)
    pieces = [e["tool_calls"][0] for e in events if e.get("tool_calls")]
    assert pieces[0]["function"] == {"name": "get_weather"}
    assert pieces[0]["id"]
    assert pieces[-1] == {"id": None, "type": None, "index": 0, "function": {"name": None}}
    assert json.loads("".join(p["function"].get("arguments", "") for p in pieces[1:-1])) == ARGS
    assert {"finish_reason": "tool_calls"} in events
    assert "usage" in events[-1]
    emulator.state.set_variant("legacy_tool_stream", "final")
    events = sse_json(http.post(run_url(emulator, LLAMA_70B), json=body).content)
    finals = [e["tool_calls"] for e in events if e.get("tool_calls")]
    assert finals == [[{"name": "get_weather", "arguments": ARGS}]]


def test_tool_result_is_used_in_the_next_reply(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    messages = [
        {"role": "user", "content": "call get_weather"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 degrees"},
    ]
    body = {"model": GEMMA, "messages": messages, "tools": OPENAI}
    reply = http.post(chat_url(emulator), json=body).json()["choices"][0]
    assert reply["finish_reason"] == "stop"
    assert reply["message"]["content"] == "The tool said: Sunny, 21 degrees"
    native = http.post(run_url(emulator, LLAMA_70B), json={"messages": messages, "tools": FLAT})
    assert native.json()["result"]["response"] == "The tool said: Sunny, 21 degrees"


@pytest.mark.parametrize(
    "extra",
    [
        {"tools": [{"description": "no name"}]},
        {"tools": FLAT, "tool_choice": "sometimes"},
        {"tools": FLAT, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
    ],
)
def test_bad_tools_are_5006(
    emulator: EmulatorServer, http: httpx.Client, extra: dict[str, Any]
) -> None:
    reply = http.post(run_url(emulator, LLAMA_70B), json=ask("x", **extra))
    assert (reply.status_code, reply.json()["errors"][0]["code"]) == (400, 5006)

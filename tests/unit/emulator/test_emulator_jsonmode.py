"""JSON mode: response_format forms, minimal valid instances, no streaming, impossible schemas."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from emulator_helpers import GEMMA, LLAMA, LLAMA_70B, ask, chat_url, run_url, sse_json

from flarechat.emulator import jsonmode
from flarechat.emulator.server import EmulatorServer

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 3},
        "age": {"type": "integer", "minimum": 18, "maximum": 99},
        "score": {"type": "number", "exclusiveMinimum": 0.5},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 2},
        "kind": {"type": "string", "enum": ["human", "robot"]},
        "alive": {"type": "boolean"},
        "nothing": {"type": "null"},
        "pet": {"$ref": "#/$defs/pet"},
        "nickname": {"type": "string"},
    },
    "required": ["name", "age", "score", "tags", "kind", "alive", "nothing", "pet"],
    "$defs": {
        "pet": {"type": "object", "properties": {"legs": {"type": "integer"}}, "required": ["legs"]}
    },
}


def test_instance_is_minimal_and_valid() -> None:
    value = jsonmode.instance(PERSON)
    assert set(value) == set(PERSON["required"])  # optional "nickname" left out
    assert len(value["name"]) >= 3
    assert 18 <= value["age"] <= 99
    assert isinstance(value["age"], int)
    assert value["score"] > 0.5
    assert value["tags"] == ["a", "a"]
    assert value["kind"] == "human"
    assert value["alive"] is True
    assert value["nothing"] is None
    assert value["pet"] == {"legs": 0}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"not": {"type": "string"}}}},
        {"type": "string", "enum": []},
        {"type": "string", "minLength": 5, "maxLength": 2},
        {"type": "integer", "minimum": 5, "maximum": 1},
    ],
)
def test_impossible_schemas_are_unsatisfiable(schema: dict[str, Any]) -> None:
    with pytest.raises(jsonmode.Unsatisfiable):
        jsonmode.instance(schema)


def _bare(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": schema}


def _wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "person", "schema": schema, "strict": True},
    }


@pytest.mark.parametrize("fmt", [_bare(PERSON), _wrapped(PERSON)])
def test_native_legacy_answers_response_as_an_object(
    emulator: EmulatorServer, http: httpx.Client, fmt: dict[str, Any]
) -> None:
    reply = http.post(run_url(emulator, LLAMA_70B), json=ask("Who?", response_format=fmt))
    assert reply.status_code == 200
    result = reply.json()["result"]
    assert result["response"] == jsonmode.instance(PERSON)
    assert result["tool_calls"] == []


def test_json_object_gives_an_object(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = ask("Anything", response_format={"type": "json_object"})
    assert http.post(run_url(emulator, LLAMA_70B), json=body).json()["result"]["response"] == {}


def test_chat_completions_carry_json_text(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = {"model": GEMMA, **ask("Who?", response_format=_wrapped(PERSON))}
    message = http.post(chat_url(emulator), json=body).json()["choices"][0]["message"]
    assert json.loads(message["content"]) == jsonmode.instance(PERSON)


def test_native_json_mode_does_not_stream_by_default(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    body = ask("Who?", response_format=_bare(PERSON), stream=True)
    plain = http.post(run_url(emulator, LLAMA_70B), json=body)
    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["result"]["response"] == jsonmode.instance(PERSON)
    emulator.state.set_variant("json_stream", "error")
    refused = http.post(run_url(emulator, LLAMA_70B), json=body)
    assert (refused.status_code, refused.json()["errors"][0]["code"]) == (400, 5006)
    emulator.state.set_variant("json_stream", "stream")
    streamed = http.post(run_url(emulator, LLAMA_70B), json=body)
    text = "".join(e.get("response", "") for e in sse_json(streamed.content))
    assert json.loads(text) == jsonmode.instance(PERSON)


def test_impossible_schema_is_json_mode_couldnt_be_met(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    impossible = _bare({"type": "object", "properties": {"x": {"not": {}}}})
    reply = http.post(run_url(emulator, LLAMA_70B), json=ask("x", response_format=impossible))
    assert reply.status_code == 400
    [error] = reply.json()["errors"]
    assert error["message"].startswith("AiError: AiError: JSON Mode couldn't be met (")


def test_models_without_json_mode_ignore_response_format(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = http.post(
        run_url(emulator, LLAMA), json=ask("x", response_format={"type": "json_object"})
    )
    assert isinstance(reply.json()["result"]["response"], str)


def test_unknown_response_format_type_is_5006(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, LLAMA_70B), json=ask("x", response_format={"type": "yaml"}))
    assert (reply.status_code, reply.json()["errors"][0]["code"]) == (400, 5006)

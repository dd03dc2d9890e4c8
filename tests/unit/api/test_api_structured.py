"""Structured output: response_format per endpoint, native JSON mode unstreamed, JSON replies."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from api_helpers import GEMMA, emu_conn, mock_conn, short_chat, text_of

from conftest import ClientFactory
from flarechat.api import (
    Endpoint,
    ModelSchema,
    ResponseFormat,
    ResponseMeta,
    Route,
    SamplingParams,
    StreamingDisabled,
    effective_stream,
)
from flarechat.api._decode import decode_complete
from flarechat.api._routes import build_chat_request

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

CITY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}
#: llama-3.1-8b-fast has no response_format in its schema (the emulator ignores it there).
LLAMA_33 = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
ROUTES = [(route, endpoint) for route in Route for endpoint in Endpoint]


def prepared(fmt: ResponseFormat, endpoint: Endpoint, **kw: Any) -> Any:
    request = short_chat(response_format=fmt, **kw)
    return build_chat_request(mock_conn(endpoint=endpoint), request, user_agent="t")


def test_json_schema_is_bare_on_native_and_wrapped_on_chat_completions() -> None:
    native = prepared(ResponseFormat.json_schema(CITY), Endpoint.NATIVE).body
    assert native["response_format"] == {"type": "json_schema", "json_schema": CITY}
    openai = prepared(ResponseFormat.json_schema(CITY, name="city"), Endpoint.OPENAI).body
    assert openai["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "city", "schema": CITY, "strict": True},
    }
    wrapper = ModelSchema(model=GEMMA, known=True, openai_response_format=True, openai_output=True)
    newer = prepared(ResponseFormat.json_schema(CITY), Endpoint.NATIVE, model_schema=wrapper)
    assert newer.body["response_format"]["json_schema"]["schema"] == CITY


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_json_mode_body(endpoint: Endpoint) -> None:
    body = prepared(ResponseFormat.json_object(), endpoint).body
    assert body["response_format"] == {"type": "json_object"}


def test_native_json_mode_does_not_stream_and_says_so() -> None:
    native = prepared(ResponseFormat.json_object(), Endpoint.NATIVE)
    assert native.body["stream"] is False
    assert native.headers["Accept"] == "application/json"
    assert (native.stream, native.stream_disabled) == (False, True)
    openai = prepared(ResponseFormat.json_object(), Endpoint.OPENAI)
    assert (openai.body["stream"], openai.stream_disabled) == (True, False)
    request = short_chat(response_format=ResponseFormat.json_object())
    assert not effective_stream(mock_conn(), request)
    assert effective_stream(mock_conn(endpoint=Endpoint.OPENAI), request)
    unasked = prepared(ResponseFormat.json_object(), Endpoint.NATIVE, stream=False)
    assert not unasked.stream_disabled


@pytest.mark.parametrize(
    ("response", "text"),
    [
        ({"name": "Oslo", "population": 709000}, '{"name": "Oslo", "population": 709000}'),
        (42, "42"),
        (3.5, "3.5"),
        ([1, "a"], '[1, "a"]'),
        ("plain", "plain"),
    ],
)
def test_native_json_response_may_be_an_object_or_a_number(response: object, text: str) -> None:
    events = decode_complete({"result": {"response": response}, "success": True})
    assert text_of(events) == text


@pytest.mark.asyncio
@pytest.mark.parametrize("model", [LLAMA_33, GEMMA], ids=["legacy", "openai"])
@pytest.mark.parametrize(("route", "endpoint"), ROUTES)
async def test_json_replies_from_the_emulator_parse(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    route: Route,
    endpoint: Endpoint,
    model: str,
) -> None:
    conn = emu_conn(emulator, route=route, endpoint=endpoint)
    request = short_chat(
        "A city, please",
        model=model,
        response_format=ResponseFormat.json_schema(CITY),
        params=SamplingParams(max_tokens=400),
    )
    events = [e async for e in make_client().stream_reply(conn, request)]
    value = json.loads(text_of(events))
    assert set(value) >= {"name", "population"}
    assert isinstance(value["population"], int)
    [sent] = emulator.state.requests
    native = endpoint is Endpoint.NATIVE
    assert sent.json["stream"] is not native
    disabled = [e for e in events if isinstance(e, StreamingDisabled)]
    assert bool(disabled) is native
    if native:
        assert isinstance(events[0], ResponseMeta)
        assert events[1] == disabled[0]
        assert sent.json["response_format"]["json_schema"] == CITY
    else:
        assert sent.json["response_format"]["json_schema"]["schema"] == CITY

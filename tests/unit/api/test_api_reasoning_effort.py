"""Reasoning controls in the body, the catalogue's effort property, prices and context window."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from api_helpers import GEMMA, GPT_OSS, emu_conn, mock_conn, reasoning_of, short_chat

from conftest import ClientFactory
from flarechat.api import Endpoint, ModelInfo, ModelSchema, ReasoningEffortInfo
from flarechat.api._catalogue import parse_model, parse_reasoning_effort
from flarechat.api._routes import build_chat_request

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

GPT_OSS_EFFORT = {
    "supported_efforts": ["low", "medium", "high"],
    "default_effort": "medium",
    "mandatory": True,
    "default_enabled": True,
}


def prepared(endpoint: Endpoint = Endpoint.NATIVE, **kw: Any) -> Any:
    request = short_chat(**kw)
    return build_chat_request(mock_conn(endpoint=endpoint), request, user_agent="t")


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_effort_and_thinking_go_in_the_body_never_the_query(endpoint: Endpoint) -> None:
    sent = prepared(endpoint, reasoning_effort="high", enable_thinking=False)
    assert sent.body["reasoning_effort"] == "high"
    assert sent.body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "?" not in sent.url
    plain = prepared(endpoint).body
    assert "reasoning_effort" not in plain
    assert "chat_template_kwargs" not in plain


def test_off_is_an_explicit_null_where_the_model_allows_it() -> None:
    assert prepared(reasoning_effort="off").body["reasoning_effort"] is None
    mandatory = ModelInfo(name=GPT_OSS, reasoning_effort=parse_reasoning_effort(GPT_OSS_EFFORT))
    with pytest.raises(ValueError, match="takes reasoning effort low, medium, high"):
        prepared(model=GPT_OSS, reasoning_effort="off", model_info=mandatory)
    assert prepared(model=GPT_OSS, reasoning_effort="low", model_info=mandatory).body[
        "reasoning_effort"
    ] == ("low")
    schema = ModelSchema(model=GPT_OSS, known=True, reasoning_efforts=("low", "high"))
    with pytest.raises(ValueError, match="does not take"):
        prepared(model=GPT_OSS, reasoning_effort="medium", model_schema=schema)
    with pytest.raises(ValueError, match="must be one of"):
        prepared(reasoning_effort="max")


def test_the_catalogue_effort_property_is_parsed() -> None:
    info = parse_reasoning_effort(GPT_OSS_EFFORT)
    assert info == ReasoningEffortInfo(("low", "medium", "high"), "medium", True, True)
    assert info.choices == ("low", "medium", "high")
    optional = parse_reasoning_effort('{"supported_efforts": ["low"], "mandatory": "false"}')
    assert optional is not None
    assert optional.choices == ("low", "off")
    assert optional.default_enabled
    assert parse_reasoning_effort("nonsense") is None
    assert parse_reasoning_effort([1]) is None


def test_model_info_exposes_effort_prices_and_context_window() -> None:
    item = {
        "name": GPT_OSS,
        "task": {"name": "Text Generation"},
        "properties": [
            {"property_id": "context_window", "value": "128000"},
            {"property_id": "reasoning_effort", "value": GPT_OSS_EFFORT},
            {
                "property_id": "price",
                "value": [
                    {"unit": "per M input tokens", "price": 0.35, "currency": "USD"},
                    {"unit": "per M output tokens", "price": 0.75, "currency": "USD"},
                    {"unit": "per M cached input tokens", "price": 0.1, "currency": "USD"},
                ],
            },
        ],
    }
    model = parse_model(item)
    assert model is not None
    assert model.reasoning
    assert model.reasoning_effort is not None
    assert model.reasoning_effort.mandatory
    assert model.context_window == 128_000
    assert (model.price_input_per_m, model.price_output_per_m, model.price_cached_per_m) == (
        0.35,
        0.75,
        0.1,
    )
    bare = parse_model({"name": "@cf/x/y"})
    assert bare is not None
    assert bare.reasoning_effort is None
    assert bare.context_window is None
    assert bare.price_input_per_m is None


@pytest.mark.asyncio
async def test_the_emulator_catalogue_and_schema_agree(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    client = make_client()
    conn = emu_conn(emulator)
    models = {m.name: m for m in await client.list_models(conn)}
    gpt = models[GPT_OSS]
    assert gpt.reasoning_effort is not None
    assert gpt.reasoning_effort.default_effort == "medium"
    assert gpt.price_input_per_m == 0.35
    assert gpt.context_window
    schema = await client.get_model_schema(conn, GPT_OSS)
    assert schema.supports_reasoning_effort
    assert None not in schema.reasoning_efforts  # mandatory: no "off"
    assert models[GEMMA].reasoning_effort is None


@pytest.mark.asyncio
@pytest.mark.parametrize("endpoint", list(Endpoint))
async def test_effort_reaches_the_emulator(
    make_client: ClientFactory, emulator: EmulatorServer, endpoint: Endpoint
) -> None:
    conn = emu_conn(emulator, endpoint=endpoint)
    request = short_chat(model=GPT_OSS, reasoning_effort="low", stream=False)
    events = [e async for e in make_client().stream_reply(conn, request)]
    assert reasoning_of(events)
    [sent] = emulator.state.requests
    assert sent.json["reasoning_effort"] == "low"

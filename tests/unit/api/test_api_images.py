"""Images on user messages: content parts, the legacy ``image`` field, and the model's schema."""

from __future__ import annotations

import base64
import struct
from typing import TYPE_CHECKING, Any

import pytest
from api_helpers import GEMMA, LEGACY_MODEL, emu_conn, mock_conn, text_of

from conftest import ClientFactory
from flarechat.api import (
    ChatMessage,
    ChatRequest,
    Endpoint,
    ImagePart,
    ModelSchema,
    Route,
    SamplingParams,
    parse_model_schema,
)
from flarechat.api._routes import build_chat_request

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

VISION_32 = "@cf/meta/llama-3.2-11b-vision-instruct"
SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"
ROUTES = [(route, endpoint) for route in Route for endpoint in Endpoint]


def png(width: int = 3, height: int = 2) -> bytes:
    """Just enough PNG for a header sniffer: signature and IHDR with the size."""
    ihdr = struct.pack(">II", width, height) + b"\x08\x02\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\x00" * 4


IMAGE = ImagePart(png(), "image/png")


def ask(model: str, *, schema: ModelSchema | None = None, images: int = 1) -> ChatRequest:
    messages = (
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "What is this?", images=(IMAGE,) * images),
    )
    params = SamplingParams(max_tokens=400)
    return ChatRequest(model=model, messages=messages, params=params, model_schema=schema)


def body(request: ChatRequest, endpoint: Endpoint = Endpoint.NATIVE) -> dict[str, Any]:
    return build_chat_request(mock_conn(endpoint=endpoint), request, user_agent="t").body


def test_image_part_is_a_data_url_and_hides_its_bytes() -> None:
    assert IMAGE.data_url() == "data:image/png;base64," + base64.b64encode(png()).decode()
    assert "\\x89" not in repr(IMAGE)
    with pytest.raises(ValueError, match="MIME"):
        ImagePart(b"x", "text/plain")


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_content_parts_by_default_and_text_only_stays_a_string(endpoint: Endpoint) -> None:
    messages = body(ask(GEMMA), endpoint)["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": IMAGE.data_url()}},
    ]
    assert "image" not in body(ask(GEMMA), endpoint)


def test_a_schema_with_only_the_image_field_gets_the_field() -> None:
    schema = ModelSchema(model=VISION_32, known=True, takes_image_field=True)
    sent = body(ask(VISION_32, schema=schema))
    assert sent["image"] == list(png())
    assert sent["messages"][1] == {"role": "user", "content": "What is this?"}
    as_text = ModelSchema(
        model=VISION_32, known=True, takes_image_field=True, image_field_bytes=False
    )
    assert body(ask(VISION_32, schema=as_text))["image"] == IMAGE.base64
    with pytest.raises(ValueError, match="one image"):
        body(ask(VISION_32, schema=schema, images=2))
    # the OpenAI endpoint always takes content parts
    assert isinstance(
        body(ask(VISION_32, schema=schema), Endpoint.OPENAI)["messages"][1]["content"], list
    )


def test_a_text_only_schema_refuses_images_before_sending() -> None:
    schema = ModelSchema(model=LEGACY_MODEL, known=True)
    with pytest.raises(ValueError, match="does not accept images"):
        body(ask(LEGACY_MODEL, schema=schema))


def test_odd_schemas_are_tolerated() -> None:
    payloads: list[object] = [None, [], {"result": None}, {"input": "x"}, {"success": True}]
    for payload in payloads:
        assert parse_model_schema("m", payload) == ModelSchema(model="m")
    odd = {"input": {"oneOf": 3, "properties": {"messages": {"items": None}, "tools": []}}}
    parsed = parse_model_schema("m", {"result": odd})
    assert parsed.known
    assert not parsed.takes_content_parts
    assert not parsed.supports_tools


@pytest.mark.asyncio
async def test_schemas_from_the_emulator(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    client = make_client()
    conn = emu_conn(emulator)
    legacy = await client.get_model_schema(conn, LEGACY_MODEL)
    assert legacy.known
    assert legacy.legacy
    assert not legacy.takes_content_parts
    vision = await client.get_model_schema(conn, VISION_32)
    assert vision.takes_image_field
    assert vision.takes_image_parts
    gemma = await client.get_model_schema(conn, GEMMA)
    assert gemma.takes_image_parts
    assert gemma.openai_output
    assert gemma.supports_thinking_toggle
    [sent] = [r for r in emulator.state.requests if r.path.endswith("/ai/models/schema")][:1]
    assert "model=@cf/" in sent.query


@pytest.mark.asyncio
@pytest.mark.parametrize("model", [GEMMA, SCOUT])
@pytest.mark.parametrize(("route", "endpoint"), ROUTES)
async def test_content_parts_reach_the_emulator_on_every_route(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    route: Route,
    endpoint: Endpoint,
    model: str,
) -> None:
    conn = emu_conn(emulator, route=route, endpoint=endpoint)
    events = [e async for e in make_client().stream_reply(conn, ask(model))]
    assert "3\N{MULTIPLICATION SIGN}2 PNG" in text_of(events)
    [sent] = emulator.state.requests
    assert sent.json["messages"][1]["content"][1]["type"] == "image_url"


@pytest.mark.asyncio
async def test_the_legacy_image_field_reaches_the_emulator(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    from flarechat.emulator import DEMO_ACCOUNT_ID

    emulator.state.agree_terms(VISION_32, DEMO_ACCOUNT_ID)
    schema = ModelSchema(model=VISION_32, known=True, takes_image_field=True)
    events = [
        e
        async for e in make_client().stream_reply(emu_conn(emulator), ask(VISION_32, schema=schema))
    ]
    assert "3\N{MULTIPLICATION SIGN}2 PNG" in text_of(events)
    [sent] = emulator.state.requests
    assert sent.json["image"] == list(png())

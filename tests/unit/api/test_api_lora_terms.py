"""LoRA adapters (lora, fine-tunes, 5005, 3039) and model terms (5016, the 'agree' request)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from api_helpers import LEGACY_MODEL, QWQ, Recorder, emu_conn, mock_conn, reply, short_chat, text_of

from conftest import ClientFactory
from flarechat.api import (
    Endpoint,
    ErrorKind,
    FineTune,
    FineTuneIncomplete,
    LoraUnsupported,
    ModelInfo,
    Route,
    TermsNotAccepted,
)
from flarechat.api._routes import build_chat_request

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

MISTRAL_LORA = "@cf/mistral/mistral-7b-instruct-v0.2-lora"
VISION_32 = "@cf/meta/llama-3.2-11b-vision-instruct"
TERMS_URL = "https://github.com/meta-llama/llama-models/blob/main/models/llama3_2/LICENSE"
ROUTES = [(route, endpoint) for route in Route for endpoint in Endpoint]


@pytest.mark.parametrize("endpoint", list(Endpoint))
def test_lora_always_goes_to_the_native_endpoint(endpoint: Endpoint) -> None:
    request = short_chat(model=MISTRAL_LORA, lora=" support-tone ")
    sent = build_chat_request(mock_conn(endpoint=endpoint), request, user_agent="t")
    assert sent.url.endswith(f"/ai/run/{MISTRAL_LORA}")
    assert sent.body["lora"] == "support-tone"
    assert "model" not in sent.body
    with pytest.raises(ValueError, match="blank"):
        build_chat_request(mock_conn(), short_chat(lora="  "), user_agent="t")


@pytest.mark.asyncio
@pytest.mark.parametrize(("route", "endpoint"), ROUTES)
async def test_a_lora_request_on_every_route(
    make_client: ClientFactory, emulator: EmulatorServer, route: Route, endpoint: Endpoint
) -> None:
    conn = emu_conn(emulator, route=route, endpoint=endpoint)
    request = short_chat(model=MISTRAL_LORA, lora="pirate-speak")
    events = [e async for e in make_client().stream_reply(conn, request)]
    assert text_of(events)
    [sent] = emulator.state.requests
    assert sent.json["lora"] == "pirate-speak"
    assert MISTRAL_LORA in sent.path


@pytest.mark.asyncio
async def test_lora_errors_are_classified(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    client = make_client()
    conn = emu_conn(emulator)
    with pytest.raises(LoraUnsupported) as unsupported:
        await anext(client.stream_reply(conn, short_chat(model=LEGACY_MODEL, lora="pirate-speak")))
    assert (unsupported.value.code, unsupported.value.kind) == (5005, ErrorKind.LORA)
    assert "LoRA" in unsupported.value.message
    with pytest.raises(FineTuneIncomplete) as missing:
        await anext(client.stream_reply(conn, short_chat(model=QWQ, lora="no-such-adapter")))
    assert (missing.value.code, missing.value.kind) == (3039, "lora")
    assert "model.safetensors" in missing.value.message


@pytest.mark.asyncio
async def test_fine_tunes_are_listed(make_client: ClientFactory, emulator: EmulatorServer) -> None:
    tunes = await make_client().list_finetunes(emu_conn(emulator))
    names = {t.name: t for t in tunes}
    assert names["support-tone"].model == MISTRAL_LORA
    assert names["math-steps"].lora_ref == "math-steps"
    assert emulator.state.requests[-1].path.endswith("/ai/finetunes")


@pytest.mark.asyncio
async def test_fine_tunes_with_missing_fields_are_tolerated(make_client: ClientFactory) -> None:
    items = [{"id": "abc"}, {"name": "n", "model": 7}, {"description": "no id"}, "junk"]
    body = {"result": items, "success": True, "errors": [], "messages": []}
    tunes = await make_client(Recorder(reply(body))).list_finetunes(mock_conn())
    assert tunes == [FineTune(id="abc", name=""), FineTune(id="n", name="n")]
    assert tunes[0].lora_ref == "abc"


@pytest.mark.asyncio
@pytest.mark.parametrize("route", list(Route))
async def test_terms_error_then_agreement_then_success(
    make_client: ClientFactory, emulator: EmulatorServer, route: Route
) -> None:
    client = make_client()
    conn = emu_conn(emulator, route=route, endpoint=Endpoint.OPENAI)
    info = ModelInfo(name=VISION_32, terms_url=TERMS_URL)
    request = short_chat(model=VISION_32, model_info=info)
    with pytest.raises(TermsNotAccepted) as caught:
        await anext(client.stream_reply(conn, request))
    error = caught.value
    assert (error.kind, error.code, error.model, error.terms_url) == (
        "terms",
        5016,
        VISION_32,
        TERMS_URL,
    )
    assert await client.agree_to_terms(conn, VISION_32) is True
    agreement = emulator.state.requests[-1]
    assert agreement.json == {"prompt": "agree"}
    assert agreement.path.endswith(VISION_32)  # the native route, whatever the endpoint
    events = [e async for e in client.stream_reply(conn, request)]
    assert text_of(events)


@pytest.mark.asyncio
async def test_terms_without_catalogue_info_and_a_refused_agreement(
    make_client: ClientFactory,
) -> None:
    refusal = {
        "errors": [
            {"message": "AiError: User has not agreed to Llama3.2 model terms", "code": 5016}
        ],
        "success": False,
        "result": {},
        "messages": [],
    }
    # a fresh response per request: a streamed body can be read only once
    client = make_client(Recorder(lambda _request: reply(refusal, status=403)))
    with pytest.raises(TermsNotAccepted) as caught:
        await anext(client.stream_chat(mock_conn(), short_chat(model=VISION_32)))
    assert caught.value.terms_url is None
    assert caught.value.model == VISION_32
    assert await client.agree_to_terms(mock_conn(), VISION_32) is False

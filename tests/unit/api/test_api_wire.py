"""The client against the emulator over loopback: every route on the wire, both shapes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from api_helpers import (
    DEEPSEEK,
    GATEWAY_TOKEN,
    GEMMA,
    GPT_OSS,
    LEGACY_MODEL,
    QWQ,
    SHORT,
    collect,
    emu_conn,
    finish_of,
    reasoning_of,
    short_chat,
    text_of,
    usage_of,
)

from conftest import ClientFactory
from flarechat.api.config import Endpoint, GatewayOptions, Route, SamplingParams, Secret
from flarechat.api.events import ResponseMeta

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

BUDGET = 60
ROUTES = [(route, endpoint) for route in Route for endpoint in Endpoint]


@pytest.mark.asyncio
@pytest.mark.parametrize(("route", "endpoint"), ROUTES)
async def test_every_route_on_the_wire(
    make_client: ClientFactory, emulator: EmulatorServer, route: Route, endpoint: Endpoint
) -> None:
    conn = emu_conn(emulator, route=route, endpoint=endpoint, gateway_token=Secret(GATEWAY_TOKEN))
    request = short_chat(reject_if_busy=True, session_id="ses_42")
    events = await collect(make_client(), conn, request)
    assert text_of(events)
    assert finish_of(events) in {"stop", "length"}

    [sent] = emulator.state.requests
    native_tail = f"/ai/run/{LEGACY_MODEL}" if route is not Route.GATEWAY_URL else LEGACY_MODEL
    tail = "/v1/chat/completions" if endpoint is Endpoint.OPENAI else native_tail
    assert sent.method == "POST"
    assert sent.path.endswith(tail), sent.path
    assert "%2F" not in sent.path
    assert "%40" not in sent.path
    expected_prefix = "/gateway/v1/" if route is Route.GATEWAY_URL else "/client/v4/accounts/"
    assert sent.path.startswith(expected_prefix)
    assert sent.headers["authorization"] == f"Bearer {conn.token.reveal()}"
    assert sent.headers["user-agent"].startswith("Flarechat/")
    assert sent.headers["x-session-affinity"] == "ses_42"
    assert sent.json["options"] == {"rejectIfBusy": True}
    assert sent.json["max_tokens"] == SHORT
    assert ("model" in sent.json) is (endpoint is Endpoint.OPENAI)
    gateway_id = sent.headers.get("cf-aig-gateway-id")
    assert gateway_id == ("gw-test" if route is Route.GATEWAY_REST else None)
    gateway_auth = sent.headers.get("cf-aig-authorization")
    assert gateway_auth == (f"Bearer {GATEWAY_TOKEN}" if route is Route.GATEWAY_URL else None)


@pytest.mark.asyncio
@pytest.mark.parametrize("endpoint", list(Endpoint))
@pytest.mark.parametrize(
    ("model", "reasons"),
    [(LEGACY_MODEL, False), (GEMMA, True), (QWQ, True), (DEEPSEEK, True), (GPT_OSS, True)],
    ids=["legacy", "reasoning_content", "reasoning", "inline-think", "gpt-oss"],
)
async def test_streamed_and_complete_replies_agree(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    endpoint: Endpoint,
    model: str,
    reasons: bool,
) -> None:
    client = make_client()
    conn = emu_conn(emulator, endpoint=endpoint)
    # Enough budget for the reasoning *and* some answer (reasoning counts against max_tokens).
    params = SamplingParams(max_tokens=BUDGET)
    streamed = await collect(client, conn, short_chat("Explain tables", model=model, params=params))
    complete = await collect(
        client, conn, short_chat("Explain tables", model=model, params=params, stream=False)
    )
    assert isinstance(streamed[0], ResponseMeta)
    assert isinstance(complete[0], ResponseMeta)
    assert text_of(streamed) == text_of(complete) != ""
    assert reasoning_of(streamed) == reasoning_of(complete)
    assert bool(reasoning_of(streamed)) is reasons
    assert "<think>" not in text_of(streamed)
    assert "</think>" not in text_of(streamed)
    # Cumulative usage, never the per-chunk increments added on top of it.
    assert usage_of(streamed) == usage_of(complete)
    usage = usage_of(streamed)
    assert usage is not None
    assert usage.completion_tokens == BUDGET
    assert finish_of(streamed) == finish_of(complete) == "length"


@pytest.mark.asyncio
async def test_a_long_enough_budget_finishes_with_stop(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    request = short_chat(params=SamplingParams(max_tokens=4000))
    events = await collect(make_client(), emu_conn(emulator), request)
    assert finish_of(events) == "stop"
    usage = usage_of(events)
    assert usage is not None
    assert usage.completion_tokens
    assert usage.completion_tokens < 4000


@pytest.mark.asyncio
async def test_gpt_oss_stream_request_gets_json_and_still_works(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    events = await collect(make_client(), emu_conn(emulator), short_chat(model=GPT_OSS))
    assert text_of(events)
    assert len(emulator.state.requests) == 1


@pytest.mark.asyncio
async def test_gpt_oss_empty_result_is_asked_again_without_stream(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.set_nonstream_empty_result(True)
    events = await collect(make_client(), emu_conn(emulator), short_chat(model=GPT_OSS))
    assert text_of(events)
    assert [r.json["stream"] for r in emulator.state.requests] == [True, False]
    assert sum(isinstance(e, ResponseMeta) for e in events) == 1


@pytest.mark.asyncio
async def test_gateway_meta_cache_status_and_skip_cache(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    client = make_client()
    conn = emu_conn(emulator, route=Route.GATEWAY_URL)
    request = short_chat("cache me", stream=False, gateway=GatewayOptions(cache_ttl=600))
    first, second = [await collect(client, conn, request) for _ in range(2)]
    skipped = await collect(
        client, conn, short_chat("cache me", stream=False, gateway=GatewayOptions(skip_cache=True))
    )
    metas = [events[0] for events in (first, second, skipped)]
    assert all(isinstance(m, ResponseMeta) for m in metas)
    assert [m.cache_status for m in metas if isinstance(m, ResponseMeta)] == [
        "MISS",
        "HIT",
        "BYPASS",
    ]
    assert all(m.log_id and m.request_id for m in metas if isinstance(m, ResponseMeta))
    assert emulator.state.requests[0].headers["cf-aig-cache-ttl"] == "600"
    assert emulator.state.requests[-1].headers["cf-aig-skip-cache"] == "true"


@pytest.mark.asyncio
async def test_meta_carries_request_id_and_neurons(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    events = await collect(make_client(), emu_conn(emulator), short_chat(model=GEMMA))
    meta = events[0]
    assert isinstance(meta, ResponseMeta)
    assert meta.status_code == 200
    assert meta.model == GEMMA
    assert meta.request_id
    assert meta.neurons is not None
    assert meta.cache_status is None
    usage = usage_of(events)
    assert usage is not None
    assert usage.neurons is not None
    assert usage.cached_tokens is not None


@pytest.mark.asyncio
async def test_session_affinity_reports_cached_prompt_tokens(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    client = make_client()
    conn = emu_conn(emulator, endpoint=Endpoint.OPENAI)
    request = short_chat("same prefix", model=GEMMA, session_id="ses_cache")
    await collect(client, conn, request)
    usage = usage_of(await collect(client, conn, request))
    assert usage is not None
    assert usage.cached_tokens
    assert usage.cached_tokens > 0


@pytest.mark.asyncio
async def test_models_list_pages_through_the_catalogue(
    make_client: ClientFactory, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client()
    conn = emu_conn(emulator)
    everything = await client.list_models(conn)
    monkeypatch.setattr("flarechat.api.client.PER_PAGE", 3)
    paged = await client.list_models(conn)
    assert paged == everything
    assert len(everything) >= 6
    assert all(m.task == "Text Generation" for m in everything)
    assert "@cf/baai/bge-m3" not in {m.name for m in everything}
    pages = [r.query for r in emulator.state.requests if r.path.endswith("/ai/models/search")]
    assert len(pages) == 1 + -(-len(everything) // 3) + (len(everything) % 3 == 0)
    assert pages[1].startswith("task=Text%20Generation&page=1&per_page=3")
    assert any(m.paid_only for m in everything)
    assert any(m.reasoning for m in everything)
    assert any(m.price_input_per_m for m in everything)
    assert all(m.context_window for m in everything)

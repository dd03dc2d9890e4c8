"""Batch submit and poll, and embeddings, as client calls against the emulator (§11, §12)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest
from api_helpers import TOKEN, emu_conn

from conftest import ClientFactory
from flarechat.api.batch import BatchRequestUnknown, BatchStatus, BatchTicket
from flarechat.api.config import Route, Secret
from flarechat.api.errors import AuthenticationFailed, BadRequest, DailyAllocationExhausted

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

LLAMA_70B = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
LLAMA_8B = "@cf/meta/llama-3.1-8b-instruct-fast"
BGE_SMALL = "@cf/baai/bge-small-en-v1.5"


def _items(n: int) -> list[dict[str, Any]]:
    return [
        {"prompt": f"case {i}", "max_tokens": 16, "external_reference": f"r{i}"} for i in range(n)
    ]


@pytest.mark.asyncio
@pytest.mark.parametrize("nesting", ["documented", "single", "double"])
@pytest.mark.parametrize("pending", ["enveloped", "bare"])
async def test_submit_then_poll_to_done(
    make_client: ClientFactory, emulator: EmulatorServer, nesting: str, pending: str
) -> None:
    emulator.state.set_variant("batch_nesting", nesting)
    emulator.state.set_variant("batch_pending", pending)
    emulator.state.set_batch_pace(queued=1, running=1)
    client, conn = make_client(), emu_conn(emulator)
    ticket = await client.submit_batch(conn, LLAMA_70B, _items(3))
    assert ticket.model == LLAMA_70B
    statuses = [(await client.poll_batch(conn, ticket)).status for _ in range(2)]
    assert statuses == [BatchStatus.QUEUED, BatchStatus.RUNNING]
    done = await client.poll_batch(conn, ticket)
    assert done.status is BatchStatus.DONE
    assert sorted(done.items) == [0, 1, 2]
    for index, item in done.items.items():
        assert item.ok
        assert item.external_reference == f"r{index}"
        assert item.result is not None
        assert f'"case {index}.' in item.result["response"]
    assert done.usage["total_tokens"] > 0
    assert done.neurons is not None
    assert done.neurons > 0


@pytest.mark.asyncio
async def test_a_failed_item_fails_alone(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.fail_batch_items(["r1"], code=3040, status=429)
    client, conn = make_client(), emu_conn(emulator)
    ticket = await client.submit_batch(conn, LLAMA_70B, _items(3))
    await client.poll_batch(conn, ticket)
    done = await client.poll_batch(conn, ticket)
    assert [done.items[i].ok for i in range(3)] == [True, False, True]
    assert done.items[1].error_code == 3040
    assert done.items[1].error_message


@pytest.mark.asyncio
@pytest.mark.parametrize("variant", ["400", "404"])
async def test_unknown_request_id(
    make_client: ClientFactory, emulator: EmulatorServer, variant: str
) -> None:
    emulator.state.set_variant("batch_unknown_id", variant)
    ticket = BatchTicket(request_id="6b1f0c5e-0000-4000-8000-000000000000", model=LLAMA_70B)
    with pytest.raises(BatchRequestUnknown) as caught:
        await make_client().poll_batch(emu_conn(emulator), ticket)
    assert "no longer knows this batch" in caught.value.message
    assert TOKEN not in str(caught.value)


@pytest.mark.asyncio
async def test_model_without_batch_support_is_a_bad_request(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    with pytest.raises(BadRequest) as caught:
        await make_client().submit_batch(emu_conn(emulator), LLAMA_8B, _items(1))
    assert not isinstance(caught.value, BatchRequestUnknown)
    assert caught.value.code == 5006


@pytest.mark.asyncio
async def test_daily_allocation_at_submit(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.fail_next(1, code=4006, status=429, body_style="v4-inference")
    with pytest.raises(DailyAllocationExhausted):
        await make_client().submit_batch(emu_conn(emulator), LLAMA_70B, _items(1))


@pytest.mark.asyncio
async def test_batch_through_the_gateway_skips_its_cache(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    conn = emu_conn(emulator, route=Route.GATEWAY_URL, gateway_id="default")
    client = make_client()
    ticket = await client.submit_batch(conn, LLAMA_70B, _items(1))
    await client.poll_batch(conn, ticket)
    assert (await client.poll_batch(conn, ticket)).status is BatchStatus.DONE
    polls = [r for r in emulator.state.requests if r.json == {"request_id": ticket.request_id}]
    assert all(r.headers.get("cf-aig-skip-cache") == "true" for r in polls)
    assert all(r.query == "queueRequest=true" for r in polls)


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.mark.asyncio
async def test_embed_gives_one_vector_per_text(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    texts = ["Paris is the capital of France", "the capital of France is Paris", "bananas"]
    vectors = await make_client().embed(emu_conn(emulator), BGE_SMALL, texts)
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert _cosine(vectors[0], vectors[1]) > 0.99
    assert _cosine(vectors[0], vectors[2]) < 0.5


@pytest.mark.asyncio
async def test_embed_error_never_shows_the_token(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    conn = emu_conn(emulator, token=Secret(TOKEN))
    emulator.state.fail_next(1, code=10000, status=401, message=f"token {TOKEN} refused")
    with pytest.raises(AuthenticationFailed) as caught:
        await make_client().embed(conn, BGE_SMALL, ["x"])
    assert TOKEN not in str(caught.value)
    assert TOKEN not in repr(caught.value.args)

"""LazyClient: the window's HTTP client, built on first use off the GUI thread (issue #12)."""

from __future__ import annotations

import asyncio

import pytest

from flarechat.api.config import ChatMessage, ChatRequest, Connection, Secret
from flarechat.api.events import Finished, TextDelta
from flarechat.core.turn import ReplyStreamer
from flarechat.emulator import DEMO_ACCOUNT_ID, EmulatorServer
from flarechat.ui.lazy_client import LazyClient

MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
PROMPT = "Say hello"


def _conn(emulator: EmulatorServer) -> Connection:
    return Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret("lazy-client-test-token"),
        api_base=emulator.api_base,
        gateway_base=emulator.gateway_base,
    )


def _request() -> ChatRequest:
    return ChatRequest(model=MODEL, messages=(ChatMessage(role="user", content=PROMPT),))


@pytest.mark.asyncio
async def test_the_first_reply_builds_the_client_and_streams_whole(
    emulator: EmulatorServer,
) -> None:
    client = LazyClient()
    built_at_start = client.built
    assert not built_at_start
    assert isinstance(client, ReplyStreamer)  # the turn runner's full-event path applies
    try:
        events = [event async for event in client.stream_reply(_conn(emulator), _request())]
        assert client.built
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert text
        assert isinstance(events[-1], Finished)
        again = [event async for event in client.stream_reply(_conn(emulator), _request())]
        assert "".join(e.text for e in again if isinstance(e, TextDelta)) == text
    finally:
        await client.aclose()


@pytest.mark.asyncio
async def test_concurrent_first_calls_share_one_client(emulator: EmulatorServer) -> None:
    client = LazyClient()
    try:
        first, second = await asyncio.gather(client.ready(), client.ready())
        assert first is second
        models = await client.list_models(_conn(emulator))
        assert any(model.name == MODEL for model in models)
        assert await client.ready() is first
    finally:
        await client.aclose()


@pytest.mark.asyncio
async def test_closing_an_unused_client_builds_nothing() -> None:
    client = LazyClient()
    await client.aclose()
    assert not client.built

"""Fixtures for the api tests: clients that are always closed, and emulator connections."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import httpx
import pytest_asyncio

from flarechat.api.client import WorkersAIClient

if TYPE_CHECKING:
    from api_helpers import Handler

ClientFactory = Callable[..., WorkersAIClient]


@pytest_asyncio.fixture
async def make_client() -> AsyncIterator[ClientFactory]:
    """``make_client(handler)`` gives a client on a MockTransport; no handler = real network."""
    clients: list[WorkersAIClient] = []

    def make(handler: Handler | None = None, **kwargs: Any) -> WorkersAIClient:
        transport = httpx.MockTransport(handler) if handler is not None else None
        client = WorkersAIClient(transport=transport, **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()

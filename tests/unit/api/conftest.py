"""Fixtures for the api tests: clients that are always closed, and emulator connections."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx
import pytest_asyncio

from flarechat.api.client import WorkersAIClient

if TYPE_CHECKING:
    from api_helpers import Handler

    from support.hostile import HostileServer, Script

ClientFactory = Callable[..., WorkersAIClient]
ServerFactory = Callable[["Script"], Awaitable["HostileServer"]]


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


@pytest_asyncio.fixture
async def hostile() -> AsyncIterator[ServerFactory]:
    """``await hostile(script)`` starts a :class:`HostileServer`; all are stopped afterwards."""
    from support.hostile import HostileServer

    servers: list[HostileServer] = []

    async def start(script: Script) -> HostileServer:
        server = HostileServer(script)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()

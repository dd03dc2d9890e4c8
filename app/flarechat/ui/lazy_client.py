"""The window's HTTP client, built on first use on a worker thread (not before the first paint).

Importing httpx and its stack and building the TLS context take 150-300 ms of Python work: a
window that waited for them would show that much later, and a first request that built them on
the GUI thread would freeze it that long. ``LazyClient`` has WorkersAIClient's methods; the first
call (or ``warm()``) builds the real client with ``asyncio.to_thread``, every later call goes
straight to it (no extra layer once built).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flarechat.api.client import WorkersAIClient
    from flarechat.api.config import ChatRequest, Connection
    from flarechat.api.events import ChatEvent, StreamEvent
    from flarechat.api.models import FineTune, ModelInfo
    from flarechat.api.schema import ModelSchema
    from flarechat.api.tokens import TokenCheck

__all__ = ["NETWORK_MODULES", "LazyClient"]

#: What httpx imports only on a first connection; imported with the client, on the same worker
#: thread, so the first request does not stall the GUI thread importing them (40-60 ms).
NETWORK_MODULES = ("httpcore", "h11", "anyio", "httpx_sse")


def _build() -> WorkersAIClient:
    """Import the network stack and build the client (blocking: run on a worker thread);
    asyncio gets its TLS support first (the window's start imported it without)."""
    import importlib

    from flarechat.ui.shared.deferred_tls import give_tls

    give_tls()
    from flarechat.api.client import WorkersAIClient

    for name in NETWORK_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional head start only
            continue
    return WorkersAIClient()


class LazyClient:
    """WorkersAIClient's methods, with the client itself built on first use (see module doc)."""

    def __init__(self) -> None:
        self._client: WorkersAIClient | None = None
        self._building: asyncio.Task[WorkersAIClient] | None = None

    @property
    def built(self) -> bool:
        return self._client is not None

    async def ready(self) -> WorkersAIClient:
        """The client, built on a worker thread the first time (concurrent callers share it)."""
        if self._client is not None:
            return self._client
        if self._building is None:
            self._building = asyncio.ensure_future(asyncio.to_thread(_build))
        client = await asyncio.shield(self._building)
        self._client = client
        return client

    def stream_chat(self, conn: Connection, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        if self._client is not None:
            return self._client.stream_chat(conn, request)
        return self._stream_chat_when_ready(conn, request)

    def stream_reply(self, conn: Connection, request: ChatRequest) -> AsyncIterator[ChatEvent]:
        if self._client is not None:
            return self._client.stream_reply(conn, request)
        return self._stream_reply_when_ready(conn, request)

    async def _stream_chat_when_ready(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        client = await self.ready()
        async with aclosing(client.stream_chat(conn, request)) as events:
            async for event in events:
                yield event

    async def _stream_reply_when_ready(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[ChatEvent, None]:
        client = await self.ready()
        async with aclosing(client.stream_reply(conn, request)) as events:
            async for event in events:
                yield event

    async def list_models(self, conn: Connection, *, task: str | None = None) -> list[ModelInfo]:
        client = await self.ready()
        if task is None:
            return await client.list_models(conn)
        return await client.list_models(conn, task=task)

    async def verify_token(self, conn: Connection) -> TokenCheck:
        return await (await self.ready()).verify_token(conn)

    async def get_model_schema(self, conn: Connection, model: str) -> ModelSchema:
        return await (await self.ready()).get_model_schema(conn, model)

    async def list_finetunes(self, conn: Connection) -> list[FineTune]:
        return await (await self.ready()).list_finetunes(conn)

    async def agree_to_terms(self, conn: Connection, model: str) -> bool:
        return await (await self.ready()).agree_to_terms(conn, model)

    async def aclose(self) -> None:
        """Close the client if it was built (or is being built); nothing to do otherwise."""
        if self._client is None and self._building is not None:
            self._client = await self._building
        if self._client is not None:
            await self._client.aclose()

"""Flarechat's own per-model concurrency limit, shared by every session in the app, so that
several compare columns or conversations on one model never make Flarechat reject itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing, asynccontextmanager

from flarechat.api.config import ChatRequest, Connection
from flarechat.api.events import ChatEvent, StreamEvent, StreamingDisabled, ToolCallDelta
from flarechat.core.turn import ChatStreamer, open_stream

__all__ = ["DEFAULT_PER_MODEL", "GatedStreamer", "ModelGate"]

#: Requests in flight per model at once. Workers AI queues or rejects (3040) past its own
#: capacity; two at a time keeps a 4-column compare of one model from hammering it.
DEFAULT_PER_MODEL = 2


class ModelGate:
    """At most ``limit`` requests per model in flight; others wait their turn, in order."""

    def __init__(
        self, *, per_model: int = DEFAULT_PER_MODEL, limits: Mapping[str, int] | None = None
    ) -> None:
        limits = dict(limits or {})
        if per_model < 1 or any(n < 1 for n in limits.values()):
            raise ValueError("A model's limit must be at least 1.")
        self._default = per_model
        self._limits = limits
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._in_flight: dict[str, int] = {}

    def limit(self, model: str) -> int:
        return self._limits.get(model, self._default)

    def in_flight(self, model: str) -> int:
        return self._in_flight.get(model, 0)

    def would_wait(self, model: str) -> bool:
        return self.in_flight(model) >= self.limit(model)

    @asynccontextmanager
    async def slot(self, model: str) -> AsyncIterator[None]:
        semaphore = self._slots.setdefault(model, asyncio.Semaphore(self.limit(model)))
        async with semaphore:
            self._in_flight[model] = self.in_flight(model) + 1
            try:
                yield
            finally:
                self._in_flight[model] -= 1


class GatedStreamer:
    """A ChatStreamer that holds a gate slot while each attempt's stream is open (a retry's
    wait releases it, so another column can use the model meanwhile)."""

    def __init__(
        self, client: ChatStreamer, gate: ModelGate, *, on_slot: Callable[[], None] | None = None
    ) -> None:
        self._client = client
        self._gate = gate
        self._on_slot = on_slot  # told when an attempt got its slot and is sent

    async def stream_reply(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[ChatEvent, None]:
        """Every event the wrapped client gives (its ``stream_reply`` when it has one)."""
        async with self._gate.slot(request.model):
            if self._on_slot is not None:
                self._on_slot()
            stream = _as_generator(open_stream(self._client, conn, request))
            async with aclosing(stream) as events:
                async for event in events:
                    yield event

    async def stream_chat(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncGenerator[StreamEvent, None]:
        """The classic events only (what ``ChatStreamer`` promises)."""
        async with aclosing(self.stream_reply(conn, request)) as events:
            async for event in events:
                if not isinstance(event, StreamingDisabled | ToolCallDelta):
                    yield event


async def _as_generator(events: AsyncIterator[ChatEvent]) -> AsyncGenerator[ChatEvent, None]:
    try:
        async for event in events:
            yield event
    finally:
        if isinstance(events, AsyncGenerator):
            await events.aclose()

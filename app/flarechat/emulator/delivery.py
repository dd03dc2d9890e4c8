"""Sending a reply: queue for a slot, delay, pace tokens, inject stream faults, then release."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from flarechat.emulator.capacity import CapacityClosed
from flarechat.emulator.shapes import Frame
from flarechat.emulator.state import EmulatorState, StreamFaults
from flarechat.emulator.wire import sse

__all__ = ["Delivery", "DroppedConnection", "GenerationResponse", "install_log_filter"]

#: Long sleeps (delays, slow pace) wake this often to notice that the server is stopping.
_CLOSING_POLL = 0.05
#: Non-JSON data lines for malformed_chunks(): a cut-off object, plain text, a broken array.
_MALFORMED = (
    b'data: {"response":"unterminated\n\n',
    b"data: this is not json\n\n",
    b'data: {"choices":[{"delta":\n\n',
)


class DroppedConnection(Exception):
    """Raised mid-body so uvicorn closes the socket without the final chunk (drop fault)."""


def _is_drop(exc: BaseException | None) -> bool:
    if isinstance(exc, DroppedConnection | CapacityClosed):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return any(_is_drop(inner) for inner in exc.exceptions)
    return False


class _HideDrops(logging.Filter):
    """uvicorn logs every exception that escapes the app; a scripted drop is not one."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and _is_drop(record.exc_info[1]))


def install_log_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _HideDrops) for f in logger.filters):
        logger.addFilter(_HideDrops())


@dataclass(frozen=True, slots=True)
class Delivery:
    """What to send and how: frames (one frame for a plain JSON body), pace and faults."""

    model: str
    request_id: str
    frames: Sequence[Frame]
    streamed: bool
    #: tokens generated before a non-streamed body can be sent (the reply is "computed" first)
    tokens: int = 0
    delay: float = 0.0
    faults: StreamFaults = field(default_factory=StreamFaults)
    #: True when no slot was free at once: wait in the FIFO queue before the headers
    queued: bool = False
    #: called with the body chunks of a complete, fault-free reply (the gateway cache)
    on_complete: Callable[[tuple[bytes, ...]], None] | None = None


class GenerationResponse(StreamingResponse):
    """A reply that holds a capacity slot for its whole duration (released however it ends)."""

    def __init__(
        self, delivery: Delivery, *, state: EmulatorState, headers: dict[str, str], media_type: str
    ) -> None:
        self._delivery = delivery
        self._state = state
        self._holding = not delivery.queued
        super().__init__(self._body(), headers=headers, media_type=media_type)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self._holding:
                self._holding = False
                self._state.capacity.release(self._delivery.model, self._delivery.request_id)

    async def stream_response(self, send: Send) -> None:
        d = self._delivery
        if d.queued:
            await self._state.capacity.wait_for_slot(d.model, d.request_id)
            self._holding = True
        await self._sleep(d.delay)
        if not d.streamed:
            await self._sleep(d.tokens / self._state.tokens_per_second)
        await super().stream_response(send)

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but give up promptly (dropping the connection) when the server stops."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        while True:
            if self._state.closing:
                raise DroppedConnection("the emulator is shutting down")
            left = until - loop.time()
            if left <= 0:
                return
            await asyncio.sleep(min(left, _CLOSING_POLL))

    async def _body(self) -> AsyncIterator[bytes]:
        d, faults = self._delivery, self._delivery.faults
        sent: list[bytes] = []
        tokens, malformed = 0, faults.malformed
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        for frame in d.frames:
            if frame.kind != "open" and d.streamed:
                if faults.drop_after is not None and tokens >= faults.drop_after:
                    if faults.drop_abrupt:
                        raise DroppedConnection(f"drop_after_tokens({faults.drop_after})")
                    return
                if faults.error_after is not None and tokens >= faults.error_after:
                    error = {"code": faults.error_code, "message": faults.error_message}
                    yield sse({"errors": [error]})
                    return
            if frame.kind == "token":
                next_at += 1 / self._state.tokens_per_second
                await self._sleep(next_at - loop.time())
                tokens += 1
            sent.append(frame.data)
            yield frame.data
            if frame.kind == "token" and malformed:
                yield _MALFORMED[malformed % len(_MALFORMED)]
                malformed -= 1
        if d.on_complete is not None and faults == StreamFaults():
            d.on_complete(tuple(sent))

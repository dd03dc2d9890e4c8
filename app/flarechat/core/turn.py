"""One assistant turn: the retry-aware event stream, the pure state fold, and its records."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any, Literal, Protocol

from flarechat.api.config import ChatRequest, Connection
from flarechat.api.errors import StreamInterrupted, WorkersAIError
from flarechat.api.events import (
    Finished,
    ReasoningDelta,
    ResponseMeta,
    StreamEvent,
    TextDelta,
    UsageReport,
)
from flarechat.core import figures

__all__ = [
    "CHARS_PER_TOKEN_ESTIMATE",
    "ChatStreamer",
    "RetryDecider",
    "RetryScheduled",
    "TurnEvent",
    "TurnState",
    "TurnStatus",
    "error_record",
    "fail",
    "fold",
    "run_turn",
    "stop",
    "turn_record",
    "turn_summary",
]

#: Rough characters-per-token ratio for English text, used only when the server sent no usage.
CHARS_PER_TOKEN_ESTIMATE = 4

TurnStatus = Literal["waiting", "streaming", "done", "stopped", "failed", "interrupted"]


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """Attempt ``attempt`` (1-based) failed with ``error``; the next starts after ``delay`` s."""

    attempt: int
    max_attempts: int
    delay: float
    error: WorkersAIError


TurnEvent = StreamEvent | RetryScheduled


class ChatStreamer(Protocol):
    """The part of ``flarechat.api.client.WorkersAIClient`` a turn needs."""

    def stream_chat(self, conn: Connection, request: ChatRequest) -> AsyncIterator[StreamEvent]: ...


class RetryDecider(Protocol):
    """The part of ``flarechat.api.retry.RetryPolicy`` a turn needs."""

    @property
    def max_attempts(self) -> int: ...

    def next_delay(
        self, error: WorkersAIError, *, attempt: int, received_tokens: bool
    ) -> float | None: ...


Sleep = Callable[[float], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class TurnState:
    """Everything known about one assistant reply, rebuilt by ``fold`` after every event.

    Times are floats from the caller's monotonic clock (``now`` passed to ``fold``), so the
    state stays pure and tests need no real time.
    """

    status: TurnStatus = "waiting"
    text: str = ""
    reasoning: str = ""
    usage: UsageReport | None = None
    finish_reason: str | None = None
    meta: ResponseMeta | None = None
    error: WorkersAIError | None = None
    #: the attempt now running (1-based); bumped by each RetryScheduled
    attempt: int = 1
    last_retry: RetryScheduled | None = None
    started_at: float | None = None
    first_token_at: float | None = None
    last_token_at: float | None = None
    finished_at: float | None = None

    @property
    def received_tokens(self) -> bool:
        return bool(self.text or self.reasoning)

    @property
    def ttft(self) -> float | None:
        """Seconds from the start of the turn (retry waits included) to the first token."""
        if self.started_at is None or self.first_token_at is None:
            return None
        return self.first_token_at - self.started_at

    @property
    def duration(self) -> float | None:
        """Seconds from the start of the turn to its end (or to the latest token so far)."""
        end = self.finished_at if self.finished_at is not None else self.last_token_at
        if self.started_at is None or end is None:
            return None
        return end - self.started_at

    @property
    def completion_tokens(self) -> int:
        """Completion tokens from the server's usage when known, else a chars/4 estimate.

        The estimate counts visible text and reasoning (models bill reasoning as completion).
        """
        if self.usage is not None and self.usage.completion_tokens is not None:
            return self.usage.completion_tokens
        return self.estimated_tokens

    @property
    def estimated_tokens(self) -> int:
        chars = len(self.text) + len(self.reasoning)
        return -(-chars // CHARS_PER_TOKEN_ESTIMATE)  # ceiling division

    @property
    def tokens_are_estimated(self) -> bool:
        return self.usage is None or self.usage.completion_tokens is None

    @property
    def tokens_per_second(self) -> float | None:
        """Generation speed: completion tokens over first token -> end (see completion_tokens).

        ``None`` until there is a measurable interval (one token, or no clock, gives none).
        """
        end = self.finished_at if self.finished_at is not None else self.last_token_at
        if self.first_token_at is None or end is None or end <= self.first_token_at:
            return None
        return self.completion_tokens / (end - self.first_token_at)

    @property
    def neurons(self) -> float | None:
        """Neurons billed: the ``cf-ai-neurons`` header, else ``usage.neurons``."""
        if self.meta is not None and self.meta.neurons is not None:
            return self.meta.neurons
        return self.usage.neurons if self.usage is not None else None

    @property
    def is_final(self) -> bool:
        return self.status in ("done", "stopped", "failed", "interrupted")


def _add_tokens(state: TurnState, now: float | None, *, text: str, reasoning: str) -> TurnState:
    first = state.first_token_at if state.first_token_at is not None else now
    return replace(
        state,
        status="streaming",
        text=state.text + text,
        reasoning=state.reasoning + reasoning,
        first_token_at=first,
        last_token_at=now if now is not None else state.last_token_at,
    )


def fold(state: TurnState, event: TurnEvent, *, now: float | None = None) -> TurnState:
    """Return the state after ``event``; pure (``now`` is the caller's clock reading, if any)."""
    if state.started_at is None and now is not None:
        state = replace(state, started_at=now)
    if isinstance(event, TextDelta):
        return _add_tokens(state, now, text=event.text, reasoning="")
    if isinstance(event, ReasoningDelta):
        return _add_tokens(state, now, text="", reasoning=event.text)
    if isinstance(event, ResponseMeta):
        return replace(state, meta=event)
    if isinstance(event, UsageReport):
        return replace(state, usage=event)
    if isinstance(event, Finished):
        return replace(state, status="done", finish_reason=event.reason, finished_at=now)
    # RetryScheduled. Retries happen only before the first token, so there is no text to lose;
    # the failed attempt's headers and usage describe a response that is not this one.
    return replace(
        state,
        status="waiting",
        meta=None,
        usage=None,
        attempt=event.attempt + 1,
        last_retry=event,
    )


def fail(state: TurnState, error: WorkersAIError, *, now: float | None = None) -> TurnState:
    """The turn ended with ``error``; partial text is kept. A cut stream is "interrupted"."""
    status: TurnStatus = "interrupted" if isinstance(error, StreamInterrupted) else "failed"
    return replace(state, status=status, error=error, finished_at=now)


def stop(state: TurnState, *, now: float | None = None) -> TurnState:
    """The user stopped (or the app cancelled) the turn; partial text is kept."""
    return replace(state, status="stopped", finished_at=now)


async def _closing(stream: AsyncIterator[StreamEvent]) -> None:
    if isinstance(stream, AsyncGenerator):
        await stream.aclose()


async def run_turn(
    client: ChatStreamer,
    conn: Connection,
    request: ChatRequest,
    *,
    policy: RetryDecider,
    sleep: Sleep = asyncio.sleep,
) -> AsyncGenerator[TurnEvent, None]:
    """Stream one reply, retrying per ``policy`` only while no token has been received.

    Yields the client's events, plus a ``RetryScheduled`` before each wait; raises the final
    ``WorkersAIError``. ``sleep(delay)`` is awaited between attempts and may return early: the
    UI passes one that a "Retry now" button cuts short; whenever it returns, the next attempt
    starts. Cancelling the consuming task propagates ``CancelledError`` and closes the client's
    stream; consumers that stop iterating early should use ``contextlib.aclosing``.
    """
    attempt = 1
    received = False
    while True:
        stream = client.stream_chat(conn, request)
        try:
            async for event in stream:
                received = received or isinstance(event, TextDelta | ReasoningDelta)
                yield event
            return
        except WorkersAIError as error:
            delay = policy.next_delay(error, attempt=attempt, received_tokens=received)
            if delay is None:
                raise
            failure = error
        finally:
            await _closing(stream)
        yield RetryScheduled(
            attempt=attempt, max_attempts=policy.max_attempts, delay=delay, error=failure
        )
        await sleep(delay)
        attempt += 1


def error_record(error: WorkersAIError) -> dict[str, Any]:
    """A failure as plain values (for JSON output and the store); never contains a token."""
    resets_at = getattr(error, "resets_at", None)
    return {
        "kind": error.kind,
        "message": error.message,
        "status": error.status,
        "code": error.code,
        "request_id": error.request_id,
        "resets_at": resets_at.isoformat() if isinstance(resets_at, datetime) else None,
    }


def turn_record(state: TurnState) -> dict[str, Any]:
    """The whole turn as JSON-ready plain values: text, usage, metadata, timings, error."""
    return {
        "status": state.status,
        "text": state.text,
        "reasoning": state.reasoning,
        "finish_reason": state.finish_reason,
        "usage": asdict(state.usage) if state.usage is not None else None,
        "meta": asdict(state.meta) if state.meta is not None else None,
        "timings": {
            "ttft": state.ttft,
            "duration": state.duration,
            "tokens_per_second": state.tokens_per_second,
            "tokens_estimated": state.tokens_are_estimated,
        },
        "attempts": state.attempt,
        "error": error_record(state.error) if state.error is not None else None,
    }


def turn_summary(state: TurnState, *, model: str) -> str:
    """One line of figures: model, TTFT, speed, tokens, neurons, cache status, ids.

    The figures read exactly as in the window's metadata line (``flarechat.core.figures``).
    """
    parts = [model]
    if state.ttft is not None:
        parts.append(figures.ttft_text(state.ttft))
    if (speed := state.tokens_per_second) is not None:
        parts.append(figures.speed_text(speed, estimated=state.tokens_are_estimated))
    if (usage := state.usage) is not None:
        tokens = figures.tokens_text(
            prompt=usage.prompt_tokens,
            completion=usage.completion_tokens,
            cached=usage.cached_tokens,
        )
        parts += [tokens] if tokens else []
    if state.neurons is not None:
        parts.append(figures.neurons_text(state.neurons))
    if (meta := state.meta) is not None:
        parts += [f"cache {meta.cache_status}"] if meta.cache_status else []
        parts += [f"log {meta.log_id}"] if meta.log_id else []
        parts += [f"request {meta.request_id}"] if meta.request_id else []
    return figures.SEPARATOR.join(parts)

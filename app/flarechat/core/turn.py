"""One assistant turn: the retry-aware event stream and the pure state fold with its timings."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, fields, replace
from typing import Literal, Protocol, runtime_checkable

from flarechat.api.config import ChatRequest, Connection
from flarechat.api.errors import StreamInterrupted, WorkersAIError
from flarechat.api.events import (
    ChatEvent,
    Finished,
    ReasoningDelta,
    ResponseMeta,
    StreamEvent,
    StreamingDisabled,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from flarechat.api.tools import ToolCall, legacy_call_id
from flarechat.core.meters import CHARS_PER_TOKEN_ESTIMATE

__all__ = [
    "CHARS_PER_TOKEN_ESTIMATE",
    "ChatStreamer",
    "ReplyStreamer",
    "RetryDecider",
    "RetryScheduled",
    "Rope",
    "ToolDraft",
    "ToolDrafts",
    "TurnEvent",
    "TurnState",
    "TurnStatus",
    "fail",
    "fold",
    "open_stream",
    "run_turn",
    "stop",
]

#: Events that carry the model's output: after one, a failed attempt is never retried.
_TOKENS = (TextDelta, ReasoningDelta, ToolCallDelta)


class _Pieces:
    """The pieces a rope and the ropes grown from it share, and the longest join made."""

    __slots__ = ("items", "joined", "joined_count")

    def __init__(self, items: list[str]) -> None:
        self.items = items
        self.joined = ""
        self.joined_count = 0

    def join(self, count: int) -> str:
        """The first ``count`` pieces as one string (a later join starts from this one)."""
        if count < self.joined_count:  # an older state's text: rare, not kept
            return "".join(self.items[:count])
        if count > self.joined_count:
            self.joined = "".join([self.joined, *self.items[self.joined_count : count]])
            self.joined_count = count
        return self.joined


@dataclass(frozen=True, slots=True, eq=False)
class Rope:
    """Append-only text that states share: O(1) appends, joined once, so a long reply costs
    time linear in its length (``text = text + delta`` per event is quadratic).

    A rope is a count of pieces in a list it shares with the ropes grown from it: appending
    to the newest rope adds a string to that list, so a reply's thousands of pieces leave no
    object behind for the garbage collector to walk (a linked node per piece did, and made a
    full collection pause the window for ~100 ms). Growing an older rope copies its pieces.
    """

    _shared: _Pieces | None = field(default=None, repr=False)
    count: int = 0
    length: int = 0

    @classmethod
    def of(cls, text: str) -> Rope:
        return cls(_Pieces([text]), 1, len(text)) if text else cls()

    def plus(self, text: str) -> Rope:
        if not text:
            return self
        shared = self._shared
        if shared is None or len(shared.items) != self.count:  # the first piece, or a fork
            shared = _Pieces(shared.items[: self.count] if shared is not None else [])
        shared.items.append(text)
        return Rope(shared, self.count + 1, self.length + len(text))

    def __len__(self) -> int:
        return self.length

    def __bool__(self) -> bool:
        return self.length > 0

    def __str__(self) -> str:
        return self._shared.join(self.count) if self._shared is not None else ""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rope):
            return self.length == other.length and str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))


TurnStatus = Literal["waiting", "streaming", "done", "stopped", "failed", "interrupted"]


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """Attempt ``attempt`` (1-based) failed with ``error``; the next starts after ``delay`` s."""

    attempt: int
    max_attempts: int
    delay: float
    error: WorkersAIError


TurnEvent = ChatEvent | RetryScheduled


class ChatStreamer(Protocol):
    """The part of ``flarechat.api.client.WorkersAIClient`` a turn needs (test fakes may have
    only this; ``run_turn`` uses :class:`ReplyStreamer`'s ``stream_reply`` when it is there)."""

    def stream_chat(self, conn: Connection, request: ChatRequest) -> AsyncIterator[StreamEvent]: ...


@runtime_checkable
class ReplyStreamer(ChatStreamer, Protocol):
    """A streamer that also yields tool-call fragments and the streaming-off note."""

    def stream_reply(self, conn: Connection, request: ChatRequest) -> AsyncIterator[ChatEvent]: ...


def open_stream(
    client: ChatStreamer, conn: Connection, request: ChatRequest
) -> AsyncIterator[ChatEvent]:
    """Every event ``client`` can give: ``stream_reply`` when it has one, else ``stream_chat``."""
    if isinstance(client, ReplyStreamer):
        return client.stream_reply(conn, request)
    return client.stream_chat(conn, request)


@dataclass(frozen=True, slots=True)
class ToolDraft:
    """A tool call still streaming: its id and name once they came, its arguments so far."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: Rope = field(default_factory=Rope)

    def plus(self, delta: ToolCallDelta) -> ToolDraft:
        return ToolDraft(
            self.index,
            self.id or delta.id,
            self.name or delta.name,
            self.arguments.plus(delta.arguments),
        )

    def call(self, position: int) -> ToolCall:
        """The call as far as it came (an id-less call gets the legacy numbered id)."""
        call_id = self.id or legacy_call_id(position)
        return ToolCall.of(id=call_id, name=self.name or "", arguments=str(self.arguments))


@dataclass(frozen=True, slots=True, eq=False)
class ToolDrafts:
    """The tool-call fragments of a reply so far, shared the way a :class:`Rope`'s pieces are:
    a fragment costs O(1) however many calls came before it (a tuple of drafts, copied and
    searched for every fragment, made a reply of 10,000 calls quadratic: a minute of the GUI
    thread). :meth:`drafts` assembles them, in one pass, when the calls are asked for.
    """

    _shared: list[ToolCallDelta] | None = field(default=None, repr=False)
    count: int = 0

    def plus(self, delta: ToolCallDelta) -> ToolDrafts:
        shared = self._shared
        if shared is None or len(shared) != self.count:  # the first fragment, or a fork
            shared = shared[: self.count] if shared is not None else []
        shared.append(delta)
        return ToolDrafts(shared, self.count + 1)

    def fragments(self) -> list[ToolCallDelta]:
        return self._shared[: self.count] if self._shared is not None else []

    def drafts(self) -> tuple[ToolDraft, ...]:
        """One draft per call index, in order of the index."""
        by_index: dict[int, ToolDraft] = {}
        for delta in self.fragments():
            draft = by_index.get(delta.index) or ToolDraft(delta.index)
            by_index[delta.index] = draft.plus(delta)
        return tuple(by_index[index] for index in sorted(by_index))

    def __bool__(self) -> bool:
        return self.count > 0

    def __len__(self) -> int:
        return self.count

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ToolDrafts):
            return self.count == other.count and self.fragments() == other.fragments()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self.fragments()))


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
    state stays pure and tests need no real time. ``started_at`` is when the user sent: the
    window and the CLI both set it then, so queue waits, retries and a slow first byte count.
    """

    status: TurnStatus = "waiting"
    text_rope: Rope = field(default_factory=Rope)
    reasoning_rope: Rope = field(default_factory=Rope)
    usage: UsageReport | None = None
    finish_reason: str | None = None
    meta: ResponseMeta | None = None
    error: WorkersAIError | None = None
    #: the attempt now running (1-based); bumped by each RetryScheduled
    attempt: int = 1
    last_retry: RetryScheduled | None = None
    started_at: float | None = None
    #: when the answering attempt's response headers arrived (the end of any queue wait)
    headers_at: float | None = None
    first_token_at: float | None = None
    last_token_at: float | None = None
    finished_at: float | None = None
    #: tool calls streaming in, as their fragments (O(1) each, however many calls)
    tool_drafts: ToolDrafts = field(default_factory=ToolDrafts)
    #: the complete calls the reply made (``Finished.tool_calls``)
    tool_calls: tuple[ToolCall, ...] = ()
    #: something to tell the user about how the reply came (streaming turned off for JSON)
    note: str | None = None

    @property
    def text(self) -> str:
        return str(self.text_rope)

    @property
    def reasoning(self) -> str:
        return str(self.reasoning_rope)

    @property
    def received_tokens(self) -> bool:
        return bool(self.text_rope or self.reasoning_rope or self.tool_drafts or self.tool_calls)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The reply's tool calls: the complete ones, else those streamed so far."""
        if self.tool_calls:
            return self.tool_calls
        drafts = self.tool_drafts.drafts()
        return tuple(d.call(position) for position, d in enumerate(drafts))

    @property
    def streamed(self) -> bool:
        """False when the reply came as one body (gpt-oss on /ai/run, JSON mode)."""
        return self.meta is None or self.meta.streamed

    @property
    def _end(self) -> float | None:
        return self.finished_at if self.finished_at is not None else self.last_token_at

    @property
    def queue_wait(self) -> float | None:
        """Seconds from send to the answering response's headers (retry waits included)."""
        if self.started_at is None or self.headers_at is None:
            return None
        return max(0.0, self.headers_at - self.started_at)

    @property
    def ttft(self) -> float | None:
        """Seconds from send (retry waits included) to the first token; None when the reply
        was not streamed, where it would only repeat the whole request's time."""
        if not self.streamed or self.started_at is None or self.first_token_at is None:
            return None
        return self.first_token_at - self.started_at

    @property
    def generation(self) -> float | None:
        """Seconds from the first token to the end (None for a reply that did not stream)."""
        end = self._end
        if not self.streamed or self.first_token_at is None or end is None:
            return None
        return end - self.first_token_at

    @property
    def duration(self) -> float | None:
        """Seconds from send to the end of the turn (or to the latest token so far)."""
        end = self._end
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
        chars = len(self.text_rope) + len(self.reasoning_rope)
        return -(-chars // CHARS_PER_TOKEN_ESTIMATE)  # ceiling division

    @property
    def tokens_are_estimated(self) -> bool:
        return self.usage is None or self.usage.completion_tokens is None

    @property
    def tokens_per_second(self) -> float | None:
        """Generation speed: completion tokens over first token -> end when streamed; over the
        whole request (send -> end) when the reply came at once.

        ``None`` until there is a measurable interval (one token, or no clock, gives none).
        """
        end = self._end
        start = self.first_token_at if self.streamed else self.started_at
        if start is None or end is None or end <= start:
            return None
        return self.completion_tokens / (end - start)

    @property
    def neurons(self) -> float | None:
        """Neurons billed: the ``cf-ai-neurons`` header, else ``usage.neurons``."""
        if self.meta is not None and self.meta.neurons is not None:
            return self.meta.neurons
        return self.usage.neurons if self.usage is not None else None

    @property
    def is_final(self) -> bool:
        return self.status in ("done", "stopped", "failed", "interrupted")


#: TurnState's fields in order, read by one C call: a token's new state is made positionally,
#: as ``dataclasses.replace`` (which looks every field up by name, ~2.5x the cost) would.
_STATE_FIELDS = tuple(f.name for f in fields(TurnState))
_state_values = operator.attrgetter(*_STATE_FIELDS)
_STATUS, _TEXT, _REASONING, _FIRST_TOKEN, _LAST_TOKEN = (
    _STATE_FIELDS.index(name)
    for name in ("status", "text_rope", "reasoning_rope", "first_token_at", "last_token_at")
)


def _add_tokens(state: TurnState, now: float | None, *, text: str, reasoning: str) -> TurnState:
    """The state after a delta: run for every token of a reply, so kept cheap."""
    values = list(_state_values(state))
    values[_STATUS] = "streaming"
    values[_TEXT] = state.text_rope.plus(text)
    values[_REASONING] = state.reasoning_rope.plus(reasoning)
    if state.first_token_at is None:
        values[_FIRST_TOKEN] = now
    if now is not None:
        values[_LAST_TOKEN] = now
    return TurnState(*values)


def _add_tool_fragment(state: TurnState, delta: ToolCallDelta, now: float | None) -> TurnState:
    state = _add_tokens(state, now, text="", reasoning="")
    return replace(state, tool_drafts=state.tool_drafts.plus(delta))


def fold(state: TurnState, event: TurnEvent, *, now: float | None = None) -> TurnState:
    """Return the state after ``event``; pure (``now`` is the caller's clock reading, if any)."""
    if state.started_at is None and now is not None:
        state = replace(state, started_at=now)
    if isinstance(event, TextDelta):
        return _add_tokens(state, now, text=event.text, reasoning="")
    if isinstance(event, ReasoningDelta):
        return _add_tokens(state, now, text="", reasoning=event.text)
    if isinstance(event, ResponseMeta):
        return replace(state, meta=event, headers_at=now)
    if isinstance(event, UsageReport):
        return replace(state, usage=event)
    if isinstance(event, Finished):
        return replace(
            state,
            status="done",
            finish_reason=event.reason,
            finished_at=now,
            tool_calls=event.tool_calls or state.tool_calls,
        )
    if isinstance(event, ToolCallDelta):
        return _add_tool_fragment(state, event, now)
    if isinstance(event, StreamingDisabled):
        return replace(state, note=event.reason)
    # RetryScheduled. Retries happen only before the first token, so there is no text to lose;
    # the failed attempt's headers, usage and note describe a response that is not this one.
    return replace(
        state,
        status="waiting",
        meta=None,
        usage=None,
        note=None,
        headers_at=None,
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


async def _closing(stream: AsyncIterator[ChatEvent]) -> None:
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

    Yields the client's events (``stream_reply``'s full set when the client has it), plus a
    ``RetryScheduled`` before each wait; raises the final ``WorkersAIError``. ``sleep(delay)``
    is awaited between attempts and may return early: the UI passes one that a "Retry now"
    button cuts short; whenever it returns, the next attempt
    starts. Cancelling the consuming task propagates ``CancelledError`` and closes the client's
    stream; consumers that stop iterating early should use ``contextlib.aclosing``.
    """
    attempt = 1
    received = False
    while True:
        stream = open_stream(client, conn, request)
        try:
            async for event in stream:
                received = received or isinstance(event, _TOKENS)
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

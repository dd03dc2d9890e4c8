"""Typed stream events: the one vocabulary every Workers AI response shape is normalised into."""

from __future__ import annotations

from dataclasses import dataclass

from flarechat.api.tools import ToolCall

__all__ = [
    "ChatEvent",
    "Finished",
    "ReasoningDelta",
    "ResponseMeta",
    "StreamEvent",
    "StreamingDisabled",
    "TextDelta",
    "ToolCallDelta",
    "UsageReport",
]


@dataclass(frozen=True, slots=True)
class ResponseMeta:
    """What the response headers say; always the first event of a reply.

    ``neurons`` comes from ``cf-ai-neurons`` when present; ``cache_status`` is the gateway's
    ``cf-aig-cache-status`` (``HIT``/``MISS``/``BYPASS``…), ``None`` when not through a gateway.
    """

    status_code: int
    request_id: str | None = None
    log_id: str | None = None
    cache_status: str | None = None
    neurons: float | None = None
    model: str | None = None
    #: False when the reply came as one JSON body (not SSE): its text arrives all at once, so
    #: a "time to first token" would only measure the whole request.
    streamed: bool = True


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the visible answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (``reasoning_content``, ``reasoning`` or ``<think>``)."""

    text: str


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token usage for the whole reply (cumulative, never a per-chunk increment)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_tokens: int | None = None
    neurons: float | None = None


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A streamed fragment of tool call number ``index`` (``stream_reply`` only).

    ``id`` and ``name`` arrive once (usually on the first fragment), ``arguments`` is the next
    piece of the JSON text. The complete calls are in :attr:`Finished.tool_calls`.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class StreamingDisabled:
    """The request asked to stream, but was sent without (native JSON mode does not stream).

    Sent right after :class:`ResponseMeta` by ``stream_reply``; ``reason`` is for people.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The reply ended normally; ``reason`` is ``stop``, ``length``, ``tool_calls``…

    ``tool_calls`` holds every complete call the model made, in order (either reply shape).
    ``reasoning_unclosed``: the reply opened a ``<think>`` block and never closed it, so all
    of its text was reasoning (and no answer came).
    """

    reason: str
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning_unclosed: bool = False


StreamEvent = ResponseMeta | TextDelta | ReasoningDelta | UsageReport | Finished
"""What ``WorkersAIClient.stream_chat`` yields (unchanged, so existing folds stay exhaustive)."""

ChatEvent = StreamEvent | ToolCallDelta | StreamingDisabled
"""What ``WorkersAIClient.stream_reply`` yields: every event, tool-call fragments included."""

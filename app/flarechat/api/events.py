"""Typed stream events: the one vocabulary every Workers AI response shape is normalised into."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Finished",
    "ReasoningDelta",
    "ResponseMeta",
    "StreamEvent",
    "TextDelta",
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
class Finished:
    """The reply ended normally; ``reason`` is ``stop``, ``length``, ``tool_calls``…"""

    reason: str


StreamEvent = ResponseMeta | TextDelta | ReasoningDelta | UsageReport | Finished

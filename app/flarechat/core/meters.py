"""Usage and context arithmetic: neurons and estimated cost per reply, per conversation and per
UTC day; the free daily allocation's gauge; how much of a model's context window a
conversation fills. Pure functions over plain records; the clock is always passed in."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from flarechat.api.models import ModelInfo
from flarechat.core import figures, ledger
from flarechat.core.conversation import ROLE_ASSISTANT, ConversationTree, Message

__all__ = [
    "AMBER_SHARE",
    "CHARS_PER_TOKEN_ESTIMATE",
    "CONTEXT_NEAR_SHARE",
    "FREE_DAILY_NEURONS",
    "IMAGE_TOKENS_ESTIMATE",
    "MESSAGE_OVERHEAD_TOKENS",
    "NOT_COUNTED_NOTE",
    "RED_SHARE",
    "ContextLevel",
    "ContextUse",
    "GaugeLevel",
    "UsageTotal",
    "allocation_level",
    "allocation_tooltip",
    "context_level",
    "context_text",
    "context_use",
    "conversation_usage",
    "cost_text",
    "estimate_tokens",
    "next_reset",
    "reply_cost",
    "reply_neurons",
    "total_usage",
    "usage_text",
]

#: Workers AI's free allocation per UTC day (cloudflare-api.md: resets at 00:00 UTC).
FREE_DAILY_NEURONS = 10_000
AMBER_SHARE = 0.80
RED_SHARE = 0.95
#: Tokens a chat template adds around each message (role markers, separators): a rough
#: allowance so an estimate does not fall short on many short messages.
MESSAGE_OVERHEAD_TOKENS = 4
#: From this share of the context window on, the meter warns.
CONTEXT_NEAR_SHARE = 0.80
ESTIMATE_MARK = "~"
APPROX = "\N{ALMOST EQUAL TO}"
NOT_COUNTED_NOTE = (
    "Counted from the replies Flarechat received on this computer: other apps, scripts and "
    "computers using the same account are not counted."
)
_THOUSAND = 1000
#: Below this many thousands a compact count keeps one decimal ("1.2k"), above none ("12k").
_ONE_DECIMAL_BELOW = 10
_RESET_FORMAT = "%H:%M"


def _count(value: object) -> int:
    """A stored count, 0 when missing or not positive."""
    return max(figures.stored_count(value) or 0, 0)


# -- one reply ---------------------------------------------------------------------------


def reply_neurons(usage: Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> float | None:
    """Neurons billed for a reply: the ``cf-ai-neurons`` header (meta) first, else the usage
    report's figure — the precedence the store's daily sum uses, so nothing counts twice."""
    neurons = figures.stored_number((meta or {}).get("neurons"))
    return neurons if neurons is not None else figures.stored_number((usage or {}).get("neurons"))


def reply_cost(usage: Mapping[str, Any] | None, info: ModelInfo | None) -> float | None:
    """USD for a reply from the catalogue's per-million-token prices; None when the usage or
    a price is unknown. Cached prompt tokens cost the cached price when the model has one.
    (What a reply was charged, cache hits and stopped replies included: ``ledger.charge``.)"""
    if not usage:
        return None
    return ledger.token_cost(usage, info)


# -- totals ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UsageTotal:
    """Neurons and estimated USD over some replies; ``unpriced`` replies had usage but no
    price in the catalogue (their cost is missing from ``cost``)."""

    neurons: float = 0.0
    cost: float = 0.0
    replies: int = 0
    priced: int = 0
    unpriced: int = 0


#: One reply as the totals read it: (model, usage record, meta record).
ReplyRecord = tuple[str | None, Mapping[str, Any] | None, Mapping[str, Any] | None]


def total_usage(replies: Iterable[ReplyRecord], prices: Mapping[str, ModelInfo]) -> UsageTotal:
    """Neurons and cost of ``replies`` as the ledger charges each (a cache HIT costs nothing,
    a stopped reply its neurons' price)."""
    neurons = cost = 0.0
    count = priced = unpriced = 0
    for model, usage, meta in replies:
        spent = ledger.charge(usage, meta, prices.get(model or ""))
        if spent is None:
            continue  # never answered (failed before a byte, stopped unsent): nothing billed
        count += 1
        neurons += spent.neurons
        if spent.cost is not None:
            cost, priced = cost + spent.cost, priced + 1
        else:
            unpriced += 1
    return UsageTotal(neurons, cost, count, priced, unpriced)


def conversation_usage(tree: ConversationTree, prices: Mapping[str, ModelInfo]) -> UsageTotal:
    """Every reply of the conversation, on every branch: each was billed when it ran."""
    replies = ((m.model, m.usage, m.meta) for m in tree if m.role == ROLE_ASSISTANT)
    return total_usage(replies, prices)


def cost_text(dollars: float) -> str:
    """An estimate in USD with enough digits to say something: "≈ $0.00042", "≈ $1.25"."""
    if dollars <= 0:
        return f"{APPROX} $0"
    digits = max(2, 1 - math.floor(math.log10(dollars)))  # two significant digits
    return f"{APPROX} ${dollars:.{digits}f}"


def usage_text(total: UsageTotal) -> str:
    """ "12.30 neurons · ≈ $0.0012 (estimate)" — the cost only when some reply had a price."""
    parts = [figures.neurons_text(total.neurons)]
    if total.priced:
        parts.append(f"{cost_text(total.cost)} (estimate)")
    return figures.SEPARATOR.join(parts)


# -- the free daily allocation -----------------------------------------------------------


class GaugeLevel(StrEnum):
    OK = "ok"
    AMBER = "amber"
    RED = "red"


def allocation_level(neurons: float, *, allocation: float = FREE_DAILY_NEURONS) -> GaugeLevel:
    share = neurons / allocation
    if share >= RED_SHARE:
        return GaugeLevel.RED
    return GaugeLevel.AMBER if share >= AMBER_SHARE else GaugeLevel.OK


def next_reset(now: datetime) -> datetime:
    """The next 00:00 UTC after ``now`` (an aware datetime), when the allocation resets."""
    utc = now.astimezone(UTC)
    return datetime(utc.year, utc.month, utc.day, tzinfo=UTC) + timedelta(days=1)


def allocation_tooltip(neurons: float, *, now: datetime, local_zone: Any = None) -> str:
    """Used of the free allocation, when it resets (local and UTC), and what is not counted.

    ``local_zone``: a tzinfo for the local time (default: the system's).
    """
    reset = next_reset(now)
    local = reset.astimezone(local_zone).strftime(_RESET_FORMAT)
    share = neurons / FREE_DAILY_NEURONS
    return "\n".join(
        [
            f"Today (UTC): {figures.format_neurons(neurons)} of "
            f"{figures.format_count(FREE_DAILY_NEURONS)} free neurons ({share:.0%}).",
            f"Resets at {local} your time ({reset:%H:%M} UTC).",
            NOT_COUNTED_NOTE,
        ]
    )


# -- the context window ------------------------------------------------------------------

#: Rough characters-per-token ratio for English text, used only when the server sent no usage
#: (here, not in core.turn: the window's first paint counts the composer's tokens, and the
#: chat engine's modules, core.turn's with them, are built after that paint; issue #12).
CHARS_PER_TOKEN_ESTIMATE = 4
#: What one image adds to a prompt, roughly: a vision model's image is some hundreds to a few
#: thousand tokens (a 560 px tile of llama-3.2-vision is 1,601); this errs on the full side.
IMAGE_TOKENS_ESTIMATE = 1_600


def estimate_tokens(text: str) -> int:
    """A rough count before the server reports one: characters / 4, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN_ESTIMATE)


def _message_estimate(message: Message) -> int:
    images = len(message.attachments) * IMAGE_TOKENS_ESTIMATE
    return estimate_tokens(message.content) + images + MESSAGE_OVERHEAD_TOKENS


def _reported(message: Message) -> int | None:
    """What a reply's request and the reply itself hold, as the server counted them."""
    usage = message.usage or {}
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    total = _count(usage.get("total_tokens"))
    return (total or prompt + completion) or None


@dataclass(frozen=True, slots=True)
class ContextUse:
    """Tokens the conversation holds (``history``) and the draft would add; ``exact`` when
    the history's count is the server's own (the last reply's usage), not an estimate."""

    history: int
    draft: int
    window: int | None
    exact: bool

    @property
    def total(self) -> int:
        return self.history + self.draft

    @property
    def share(self) -> float | None:
        return self.total / self.window if self.window else None


def context_use(
    path: Sequence[Message],
    *,
    system_prompt: str,
    draft: str,
    window: int | None,
    images: int = 0,
) -> ContextUse:
    """How much of ``window`` the visible path (plus the draft being written: its text, a
    pasted text's card and ``images`` attached) fills.

    From the last reply that reported usage on: its prompt + completion tokens, plus an
    estimate of any message after it. Before any report: an estimate of the system prompt
    and every message.
    """
    anchor = next(
        (
            i
            for i in range(len(path) - 1, -1, -1)
            if path[i].role == ROLE_ASSISTANT and _reported(path[i])
        ),
        None,
    )
    if anchor is None:
        base = estimate_tokens(system_prompt) + (MESSAGE_OVERHEAD_TOKENS if system_prompt else 0)
        later = path
    else:
        base, later = _reported(path[anchor]) or 0, path[anchor + 1 :]
    history = base + sum(_message_estimate(m) for m in later if m.content or m.attachments)
    exact = anchor is not None and not any(m.content or m.attachments for m in later)
    typed = estimate_tokens(draft) if draft.strip() else 0
    typed += images * IMAGE_TOKENS_ESTIMATE
    typed += MESSAGE_OVERHEAD_TOKENS if typed else 0
    return ContextUse(history, typed, window, exact)


class ContextLevel(StrEnum):
    UNKNOWN = "unknown"  # the catalogue gives no context window
    OK = "ok"
    NEAR = "near"  # CONTEXT_NEAR_SHARE or more of the window
    TIGHT = "tight"  # the prompt fits, but not with room for max_tokens of reply
    OVER = "over"  # the prompt alone exceeds the window: a send would fail


def context_level(use: ContextUse, *, max_tokens: int) -> ContextLevel:
    if not use.window:
        return ContextLevel.UNKNOWN
    if use.total > use.window:
        return ContextLevel.OVER
    if use.total + max_tokens > use.window:
        return ContextLevel.TIGHT
    return ContextLevel.NEAR if use.total >= use.window * CONTEXT_NEAR_SHARE else ContextLevel.OK


def _compact(count: int) -> str:
    if count < _THOUSAND:
        return str(count)
    value = count / _THOUSAND
    return f"{value:.1f}k" if value < _ONE_DECIMAL_BELOW else f"{value:.0f}k"


def context_text(use: ContextUse) -> str:
    """ "~1.2k / 128k tokens (1%)": "~" unless the count is the server's."""
    mark = "" if use.exact and not use.draft else ESTIMATE_MARK
    if not use.window:
        return f"{mark}{_compact(use.total)} tokens"
    return f"{mark}{_compact(use.total)} / {_compact(use.window)} tokens ({use.share or 0:.0%})"

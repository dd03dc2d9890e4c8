"""The usage ledger: what each request actually cost, from what happened on it, and the UTC
day's total that every meter reads (the status bar's "neurons today", the allocation gauge,
the CLI). Pure functions over the stored records; no Qt, no I/O.

What happened decides the charge: a gateway cache HIT ran no inference (nothing billed, its
replayed headers notwithstanding); a stopped reply was billed in full, and its cost follows
its neurons when no token counts came; a reply from the built-in emulator (demo mode) is
marked ``demo`` and never counts against a real account's day; a daily-allocation refusal
(4006/3036) means the day's allocation is used up, whatever was counted here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flarechat.api.models import ModelInfo
from flarechat.core import figures

__all__ = [
    "CACHE_HIT",
    "DAILY_LIMIT_KIND",
    "DEMO_KEY",
    "USD_PER_NEURON",
    "Charge",
    "DayUsage",
    "LedgerRow",
    "charge",
    "day_usage",
    "is_demo",
    "mark_demo",
    "token_cost",
]

#: Workers AI's price of a neuron ($0.011 per 1,000; cloudflare-api.md, pricing): the cost of
#: a reply whose tokens were never reported (stopped before its usage event) follows its neurons.
USD_PER_NEURON = 0.011 / 1000
#: ``cf-aig-cache-status`` of a response the gateway answered from its cache.
CACHE_HIT = "HIT"
#: The key on a reply's stored metadata saying it came from the built-in emulator.
DEMO_KEY = "demo"
#: ``ErrorKind.DAILY_LIMIT``'s value (as stored on a failed reply's error record).
DAILY_LIMIT_KIND = "daily_limit"
TOKENS_PER_MILLION = 1_000_000

#: One stored reply as the ledger reads it: (model, usage, meta, error).
LedgerRow = tuple[
    str | None, Mapping[str, Any] | None, Mapping[str, Any] | None, Mapping[str, Any] | None
]


@dataclass(frozen=True, slots=True)
class Charge:
    """What one reply cost: neurons billed and USD (None when no price is known)."""

    neurons: float
    cost: float | None
    #: answered from the gateway's cache: no inference ran
    cached: bool = False


def _count(value: object) -> int:
    return max(figures.stored_count(value) or 0, 0)


def token_cost(usage: Mapping[str, Any], info: ModelInfo | None) -> float | None:
    """USD from the catalogue's per-million-token prices; None when tokens or prices are
    unknown. Cached prompt tokens cost the cached price when the model has one."""
    if info is None or info.price_input_per_m is None or info.price_output_per_m is None:
        return None
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    if not prompt and not completion:
        return None
    cached = min(_count(usage.get("cached_tokens")), prompt)
    price_in, price_out = info.price_input_per_m, info.price_output_per_m
    price_cached = info.price_cached_per_m if info.price_cached_per_m is not None else price_in
    dollars = (prompt - cached) * price_in + cached * price_cached + completion * price_out
    return dollars / TOKENS_PER_MILLION


def _has_tokens(usage: Mapping[str, Any]) -> bool:
    return bool(_count(usage.get("prompt_tokens")) or _count(usage.get("completion_tokens")))


def charge(
    usage: Mapping[str, Any] | None, meta: Mapping[str, Any] | None, info: ModelInfo | None
) -> Charge | None:
    """The charge of one reply from its stored records; None when nothing was billed (it
    failed before an answer, or was stopped unsent).

    Neurons: the ``cf-ai-neurons`` header (meta) first, else the usage report's figure. Cost:
    the catalogue's token prices; for a reply with neurons but no token counts (stopped
    before its usage event) the neurons' price.
    """
    usage, meta = usage or {}, meta or {}
    neurons = figures.stored_number(meta.get("neurons"))
    if neurons is None:
        neurons = figures.stored_number(usage.get("neurons"))
    if neurons is None and not usage:
        return None
    if meta.get("cache_status") == CACHE_HIT:
        return Charge(0.0, 0.0, cached=True)
    cost = token_cost(usage, info)
    if cost is None and neurons is not None and not _has_tokens(usage):
        cost = max(neurons, 0.0) * USD_PER_NEURON
    return Charge(max(neurons or 0.0, 0.0), cost)


def is_demo(meta: Mapping[str, Any] | None) -> bool:
    """Whether a reply came from the built-in emulator (demo mode), not a real account."""
    return bool(meta) and (meta or {}).get(DEMO_KEY) is True


def mark_demo(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """``meta`` marked as a demo-mode reply."""
    return {**(meta or {}), DEMO_KEY: True}


@dataclass(frozen=True, slots=True)
class DayUsage:
    """One account's UTC day: neurons and estimated USD billed, and whether Workers AI said
    the free allocation is used up (then the gauge is full until 00:00 UTC)."""

    neurons: float = 0.0
    cost: float = 0.0
    replies: int = 0
    priced: int = 0
    unpriced: int = 0
    used_up: bool = False


def day_usage(
    rows: Iterable[LedgerRow], prices: Mapping[str, ModelInfo], *, demo: bool
) -> DayUsage:
    """The day's usage of the real account (``demo`` False) or of demo mode (True), from the
    replies stored that day."""
    neurons = cost = 0.0
    count = priced = unpriced = 0
    used_up = False
    for model, usage, meta, error in rows:
        if is_demo(meta) != demo:
            continue
        if (error or {}).get("kind") == DAILY_LIMIT_KIND:
            used_up = True
        spent = charge(usage, meta, prices.get(model or ""))
        if spent is None:
            continue
        count += 1
        neurons += spent.neurons
        if spent.cost is not None:
            cost, priced = cost + spent.cost, priced + 1
        else:
            unpriced += 1
    return DayUsage(neurons, cost, count, priced, unpriced, used_up)

"""Usage accounting for one reply: cumulative reports win over summed per-chunk increments."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from flarechat.api.events import UsageReport

__all__ = ["UsageTracker", "usage_from"]

#: More tokens (or neurons) than any one reply has: a usage number past it is not believed.
_MOST = 1e12
_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "neurons")


class UsageTracker:
    """Collects the usage objects of one reply and reports one cumulative :class:`UsageReport`.

    * Workers AI's trailing ``{"response": "", "usage": {...}}`` event is cumulative: when it is
      present it is the answer, and per-chunk usage is never added to it.
    * Without it, per-chunk usage (vLLM style: prompt tokens on the first chunk, then one
      completion token per chunk) is summed.
    * Older servers repeat a cumulative usage on every chunk; they show it by reporting the
      prompt tokens more than once, and then the last chunk's usage is the total.
    """

    def __init__(self) -> None:
        self._cumulative: UsageReport | None = None
        self._chunks: list[UsageReport] = []

    def add(self, usage: Mapping[str, Any], *, cumulative: bool) -> None:
        report = usage_from(usage)
        if cumulative:
            self._cumulative = report
        else:
            self._chunks.append(report)

    def report(self) -> UsageReport | None:
        if self._cumulative is not None:
            return self._cumulative
        if not self._chunks:
            return None
        with_prompt = [u for u in self._chunks if u.prompt_tokens]
        if len(with_prompt) > 1:
            return self._chunks[-1]
        return _sum(self._chunks)


def usage_from(usage: Mapping[str, Any]) -> UsageReport:
    """Parse one usage object, tolerating numbers sent as strings or floats."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    return UsageReport(
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        total_tokens=_int(usage.get("total_tokens")),
        cached_tokens=_int(cached),
        neurons=_float(usage.get("neurons")),
    )


def _sum(reports: list[UsageReport]) -> UsageReport:
    totals: dict[str, Any] = {}
    for name in _FIELDS:
        values = [getattr(r, name) for r in reports if getattr(r, name) is not None]
        totals[name] = sum(values) if values else None
    return UsageReport(**totals)


def _int(value: object) -> int | None:
    number = _float(value)
    return None if number is None else int(number)


def _float(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    # A count or a charge is never negative, and never past what any reply could be: a
    # hostile server's -5 or 10**30 is no figure (10**30 made the summary line raise).
    return number if math.isfinite(number) and 0 <= number <= _MOST else None

"""What a run will cost before it starts, and the cap that stops it before it is crossed.

A cell's forecast is an upper bound: its prompt's estimated tokens plus its ``max_tokens`` at
the catalogue's prices, turned into neurons at Workers AI's rate. Cells already finished (a
resumed run, a byte-identical request) cost nothing. A model without prices is named, not
guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from flarechat.api.models import ModelInfo
from flarechat.core import ledger
from flarechat.core.meters import FREE_DAILY_NEURONS, MESSAGE_OVERHEAD_TOKENS, estimate_tokens

__all__ = ["Budget", "CellCost", "Forecast", "cell_cost", "forecast", "parse_budget"]

_BUDGET = re.compile(
    r"^\s*(?P<dollar>\$)?\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>usd|\$|n|neurons?)?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Budget:
    """A cap in neurons or in dollars (either or both)."""

    neurons: float | None = None
    usd: float | None = None

    def crossed_by(self, *, neurons: float, usd: float) -> bool:
        over_neurons = self.neurons is not None and neurons > self.neurons + 1e-9
        return over_neurons or (self.usd is not None and usd > self.usd + 1e-12)

    def __str__(self) -> str:
        parts = []
        if self.neurons is not None:
            parts.append(f"{self.neurons:,.0f} neurons")
        if self.usd is not None:
            parts.append(f"${self.usd:.4f}")
        return " or ".join(parts) or "no cap"


def parse_budget(text: str) -> Budget:
    """``"500"`` / ``"500n"`` / ``"500 neurons"`` or ``"$0.05"`` / ``"0.05usd"``; ValueError
    with a message that says which forms are meant."""
    match = _BUDGET.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a budget: give neurons (500, 500n) or dollars ($0.05, 0.05usd)"
        )
    amount = float(match["amount"])
    unit = (match["unit"] or "").lower()
    if match["dollar"] or unit in ("usd", "$"):
        return Budget(usd=amount)
    return Budget(neurons=amount)


@dataclass(frozen=True, slots=True)
class CellCost:
    """One request's forecast: tokens at most, and what they cost (None: no price known)."""

    prompt_tokens: int
    completion_tokens: int
    usd: float | None

    @property
    def neurons(self) -> float:
        return (self.usd or 0.0) / ledger.USD_PER_NEURON


def cell_cost(texts: Iterable[str], *, max_tokens: int, info: ModelInfo | None) -> CellCost:
    """The most a request of these message texts answered in ``max_tokens`` can cost."""
    prompt = sum(estimate_tokens(t) + MESSAGE_OVERHEAD_TOKENS for t in texts)
    usage = {"prompt_tokens": prompt, "completion_tokens": max_tokens}
    return CellCost(prompt, max_tokens, ledger.token_cost(usage, info))


@dataclass(frozen=True, slots=True)
class Forecast:
    """The run's forecast: cells to send and reused, tokens, neurons, dollars, free share."""

    cells: int
    to_send: int
    reused: int
    prompt_tokens: int
    completion_tokens: int
    neurons: float
    usd: float
    #: models with no catalogue price: their cells are not in the figures
    unpriced: tuple[str, ...] = ()

    @property
    def free_share(self) -> float:
        """The share of one day's free allocation the run would use at most."""
        return self.neurons / FREE_DAILY_NEURONS

    def text(self) -> str:
        line = (
            f"{self.to_send} of {self.cells} cells to send ({self.reused} already finished): "
            f"at most ≈ {self.neurons:,.0f} neurons, ≈ ${self.usd:.4f}, "
            f"{self.free_share:.0%} of today's free {FREE_DAILY_NEURONS:,} neurons"
        )
        if self.unpriced:
            line += f"; no price known for {', '.join(self.unpriced)}"
        return line


def forecast(costs: Iterable[tuple[str, CellCost]], *, cells: int, reused: int) -> Forecast:
    """Sum ``(model, cost)`` of each request still to send (judge requests included)."""
    prompt = completion = 0
    usd = 0.0
    unpriced: list[str] = []
    for model, cost in costs:
        prompt += cost.prompt_tokens
        completion += cost.completion_tokens
        if cost.usd is None:
            unpriced.append(model)
        else:
            usd += cost.usd
    return Forecast(
        cells=cells,
        to_send=cells - reused,
        reused=reused,
        prompt_tokens=prompt,
        completion_tokens=completion,
        neurons=usd / ledger.USD_PER_NEURON,
        usd=usd,
        unpriced=tuple(dict.fromkeys(unpriced)),
    )

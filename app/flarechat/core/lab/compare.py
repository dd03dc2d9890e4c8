"""A compare run, free of Qt: its columns (model, parameters, system prompt), the replies of
each round, blind labels in a shuffled order, and each column's metrics and estimated cost."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flarechat.api.models import ModelInfo
from flarechat.core import figures, meters
from flarechat.core.conversation import Message
from flarechat.core.session import ColumnSpec

__all__ = [
    "LABELS",
    "MAX_COLUMNS",
    "MIN_COLUMNS",
    "USD_PER_NEURON",
    "ColumnMetrics",
    "ColumnSetup",
    "CompareRun",
    "Round",
    "blind_order",
    "estimate_cost",
    "metrics_of",
]

MIN_COLUMNS = 2
MAX_COLUMNS = 4
LABELS = "ABCD"
#: Workers AI bills $0.011 per 1,000 neurons: the estimate when the catalogue has no prices.
USD_PER_NEURON = 0.011 / 1000


@dataclass(frozen=True, slots=True)
class ColumnSetup:
    """What one column sends: its model, sampling parameters, system prompt (None: the
    conversation's), and the preset it came from (a name, for the record)."""

    model: str
    params: Mapping[str, Any] = field(default_factory=dict)
    system_prompt: str | None = None
    preset: str | None = None

    def spec(self) -> ColumnSpec:
        return ColumnSpec(self.model, dict(self.params) or None, self.system_prompt)


@dataclass(slots=True)
class Round:
    """One prompt sent to every column, and each column's reply id (in column order)."""

    prompt: str
    replies: list[str]


def blind_order(count: int, rng: random.Random | None = None) -> list[int]:
    """A uniformly shuffled column order for blind mode (it may keep the chosen order: always
    changing it would tell the user which model is where just as well)."""
    order = list(range(count))
    (rng or random.SystemRandom()).shuffle(order)
    return order


class CompareRun:
    """The columns of one compare and what each round sent; in blind mode the columns are
    kept in their shuffled order (column ``i`` is label ``LABELS[i]``) until revealed."""

    def __init__(
        self, columns: Sequence[ColumnSetup], *, blind: bool = False, conversation_id: str = ""
    ) -> None:
        if not MIN_COLUMNS <= len(columns) <= MAX_COLUMNS:
            raise ValueError(f"A compare has {MIN_COLUMNS} to {MAX_COLUMNS} columns.")
        self.columns = list(columns)
        self.blind = blind
        self.revealed = not blind
        self.conversation_id = conversation_id
        self.rounds: list[Round] = []

    @property
    def labels(self) -> str:
        return LABELS[: len(self.columns)]

    def specs(self) -> list[ColumnSpec]:
        return [c.spec() for c in self.columns]

    def last_replies(self) -> list[str] | None:
        """Each column's latest reply (what a follow-up continues), None before the first."""
        return list(self.rounds[-1].replies) if self.rounds else None

    def add_round(self, prompt: str, replies: Sequence[str]) -> None:
        if len(replies) != len(self.columns):
            raise ValueError("A round has one reply per column.")
        self.rounds.append(Round(prompt, list(replies)))

    def column_of(self, message_id: str) -> int | None:
        """The column a reply belongs to (any round), or None."""
        for round_ in reversed(self.rounds):
            if message_id in round_.replies:
                return round_.replies.index(message_id)
        return None

    def replace_reply(self, column: int, new_id: str) -> None:
        """A retried column's reply became a new message (its partial text kept as a branch)."""
        self.rounds[-1].replies[column] = new_id

    def set_model(self, column: int, model: str) -> None:
        """A column switched model (Switch model… on its retry banner)."""
        old = self.columns[column]
        self.columns[column] = ColumnSetup(model, old.params, old.system_prompt, old.preset)

    def shown_name(self, column: int) -> str:
        """What the column's header says: "Model B" while blind, else the model's short name."""
        if not self.revealed:
            return f"Model {LABELS[column]}"
        return self.columns[column].model.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class ColumnMetrics:
    """One reply's figures, from its stored records (None: not reported)."""

    status: str
    queue_wait: float | None = None
    ttft: float | None = None
    tokens_per_second: float | None = None
    tokens_estimated: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    neurons: float | None = None
    cost_usd: float | None = None
    cache_status: str | None = None
    finish_reason: str | None = None

    def lines(self, *, blind: bool = False) -> list[str]:
        """The figures as short lines for a column's footer ("TTFT 420 ms", "≈ $0.000120").

        ``blind``: without those that tell models apart at a glance (cost and neurons follow
        the model's price, the queue, TTFT and speed its size): a blind vote judges the reply.
        """
        parts: list[str] = []
        if not blind:
            parts += self._speed_lines()
        tokens = figures.tokens_text(prompt=self.prompt_tokens, completion=self.completion_tokens)
        parts += [tokens] if tokens else []
        if self.neurons is not None and not blind:
            parts.append(figures.neurons_text(self.neurons))
        if self.cost_usd is not None and not blind:
            parts.append(f"{meters.cost_text(self.cost_usd)} (estimate)")
        if self.cache_status:
            parts.append(f"cache {self.cache_status}")
        if self.finish_reason:
            parts.append(f"finish: {self.finish_reason}")
        return parts

    def _speed_lines(self) -> list[str]:
        parts: list[str] = []
        if self.queue_wait is not None:
            parts.append(f"queue {figures.format_duration(self.queue_wait)}")
        if self.ttft is not None:
            parts.append(figures.ttft_text(self.ttft))
        if self.tokens_per_second is not None:
            speed = self.tokens_per_second
            parts.append(figures.speed_text(speed, estimated=self.tokens_estimated))
        return parts


def estimate_cost(
    usage: Mapping[str, Any] | None, info: ModelInfo | None, *, neurons: float | None = None
) -> float | None:
    """Estimated USD for one reply: ``meters.reply_cost`` from the catalogue's prices, else the
    neurons billed at USD_PER_NEURON (a model the catalogue does not price); None when
    neither is known."""
    cost = meters.reply_cost(usage, info)
    if cost is None and neurons is not None:
        cost = neurons * USD_PER_NEURON
    return cost


def metrics_of(message: Message, info: ModelInfo | None = None) -> ColumnMetrics:
    """A reply's metrics from what its turn left behind (timings, usage, meta)."""
    timings, usage, meta = message.timings or {}, message.usage or {}, message.meta or {}
    neurons = figures.stored_number(meta.get("neurons"))
    neurons = neurons if neurons is not None else figures.stored_number(usage.get("neurons"))
    cache = meta.get("cache_status")
    return ColumnMetrics(
        status=message.status,
        queue_wait=figures.stored_number(timings.get("queue_wait")),
        ttft=figures.stored_number(timings.get("ttft")),
        tokens_per_second=figures.stored_number(timings.get("tokens_per_second")),
        tokens_estimated=bool(timings.get("tokens_estimated")),
        prompt_tokens=figures.stored_count(usage.get("prompt_tokens")),
        completion_tokens=figures.stored_count(usage.get("completion_tokens")),
        neurons=neurons,
        cost_usd=estimate_cost(usage, info, neurons=neurons),
        cache_status=cache if isinstance(cache, str) and cache else None,
        finish_reason=message.finish_reason,
    )

"""The emulator's queued batches (§11) and how fast polls move them on."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from flarechat.emulator.wire import ErrorSpec

__all__ = ["Batch", "BatchBook"]

#: Polls answered "queued", then "running", before the results (set_batch_pace changes it).
_DEFAULT_PACE = (0, 1)


@dataclass(slots=True)
class Batch:
    """One submitted batch: its items, how often it was polled, and its answers once done."""

    model: str
    items: list[dict[str, Any]]
    account: str
    token: str
    polls: int = 0
    responses: list[dict[str, Any]] | None = None
    usage: dict[str, int] = field(default_factory=dict)
    neurons: float = 0.0


class BatchBook:
    """Every batch this emulator has queued (kept for the whole run), and the pace of polls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: dict[str, Batch] = {}
        self._pace = _DEFAULT_PACE
        self._failing: dict[str, ErrorSpec] = {}

    def reset(self) -> None:
        with self._lock:
            self._batches.clear()
            self._pace = _DEFAULT_PACE
            self._failing.clear()

    def set_pace(self, queued: int, running: int) -> None:
        if queued < 0 or running < 0:
            raise ValueError(f"polls must be >= 0, not queued={queued} running={running}")
        with self._lock:
            self._pace = (queued, running)

    def fail_items(self, references: list[str], spec: ErrorSpec) -> None:
        with self._lock:
            self._failing.update(dict.fromkeys(references, spec))

    def failure_for(self, reference: object) -> ErrorSpec | None:
        with self._lock:
            return self._failing.get(reference) if isinstance(reference, str) else None

    def add(self, request_id: str, batch: Batch) -> None:
        with self._lock:
            self._batches[request_id] = batch

    def advance(self, request_id: str) -> tuple[Batch | None, str]:
        """The batch and its status after this poll: queued, running or done."""
        with self._lock:
            batch = self._batches.get(request_id)
            if batch is None:
                return None, ""
            batch.polls += 1
            queued, running = self._pace
            if batch.polls <= queued:
                return batch, "queued"
            return batch, "running" if batch.polls <= queued + running else "done"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._batches)

"""What every benchmark shares: the Result row, medians, and the GUI-thread heartbeat."""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass

__all__ = ["HEARTBEAT_MS", "Heartbeat", "Result", "median", "not_run"]

#: The heartbeat's period: its longest gap is the GUI thread's longest stall.
HEARTBEAT_MS = 5


@dataclass(frozen=True, slots=True)
class Result:
    """One measure. ``ratio`` is value / baseline; ``passed`` compares ``check`` to ``target``.

    ``check`` says what the target bounds: ``"ratio"`` (value relative to a baseline measured in
    the same run) or ``"value"`` (an absolute target, e.g. milliseconds).
    """

    name: str
    value: float
    baseline: float
    target: float
    unit: str
    check: str = "ratio"
    note: str = ""
    ran: bool = True

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("nan")

    @property
    def passed(self) -> bool:
        if not self.ran:
            return False
        measured = self.ratio if self.check == "ratio" else self.value
        return measured <= self.target

    def as_json(self) -> dict[str, object]:
        """The results.json row; numbers not measured are null (JSON has no NaN)."""
        row = asdict(self)
        return {
            "value": _number(row["value"]),
            "baseline": _number(row["baseline"]),
            "ratio": _number(self.ratio),
            "target": self.target,
            "unit": self.unit,
            "pass": self.passed,
            "check": self.check,
            "note": self.note,
        }


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def not_run(name: str, *, target: float, unit: str, reason: str, check: str = "value") -> Result:
    """A measure that could not be taken here: reported, and never a pass."""
    nan = float("nan")
    return Result(name, nan, nan, target, unit, check=check, note=reason, ran=False)


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


class Heartbeat:
    """A precise 5 ms QTimer on the GUI thread; the longest gap between ticks is the longest
    stall (nothing else can run while the thread is busy), and gaps give the p99 too."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.ticks: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))
        self.timer.start()

    def gaps(self, start: float, end: float) -> list[float]:
        """Gaps (seconds) from the last tick before ``start`` to the first one after ``end``."""
        before = [t for t in self.ticks if t <= start][-1:]
        after = [t for t in self.ticks if t >= end][:1]
        ticks = before + [t for t in self.ticks if start < t < end] + after
        return [b - a for a, b in itertools.pairwise(ticks)]

    def longest(self, start: float, end: float) -> float:
        return max(self.gaps(start, end), default=0.0)

    def p99(self, start: float, end: float) -> float:
        gaps = sorted(self.gaps(start, end))
        if not gaps:
            return 0.0
        return gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))]

    def stop(self) -> None:
        self.timer.stop()

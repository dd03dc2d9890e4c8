"""A 5 ms QTimer heartbeat on the GUI thread: the longest stall of the thread's own making.

A gap between beats counts only the time the GUI thread was not waiting for a CPU (Linux
``/proc/thread-self/schedstat``), so a busy machine does not look like a frozen window.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer

__all__ = ["BEAT_MS", "STALL_LIMIT", "Heartbeat"]

BEAT_MS = 5
#: The longest the GUI thread may be busy (or blocked) between two beats.
STALL_LIMIT = 0.1
_SCHEDSTAT = Path("/proc/thread-self/schedstat")


def _runqueue_wait() -> float:
    """Seconds this thread has spent ready to run but waiting for a CPU (0 if unknown)."""
    try:
        return int(_SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class Heartbeat:
    """Start it once the window is up, stop it before the checks; ``longest`` is the worst
    stall in seconds, ``beats`` how many beats came (a stopped loop has none)."""

    def __init__(self) -> None:
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(BEAT_MS)
        self._timer.timeout.connect(self._beat)
        self.longest = 0.0
        self.beats = 0
        self._last = (0.0, 0.0)

    def start(self) -> Heartbeat:
        self._last = (time.monotonic(), _runqueue_wait())
        self._timer.start()
        return self

    def _beat(self) -> None:
        now, waited = time.monotonic(), _runqueue_wait()
        last_now, last_waited = self._last
        stall = (now - last_now) - (waited - last_waited) - BEAT_MS / 1000
        self.longest = max(self.longest, stall)
        self.beats += 1
        self._last = (now, waited)

    def stop(self) -> float:
        self._timer.stop()
        self._beat()
        return self.longest

    def assert_responsive(self) -> None:
        longest = self.stop()
        assert self.beats > 1, "the GUI loop never ran"
        assert longest < STALL_LIMIT, f"the GUI thread stalled for {longest * 1000:.0f} ms"

"""Paint pacing: while replies stream, the window repaints at a steady frame rate, not on
every change."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

__all__ = [
    "FRAME_AFTER_STEP_MS",
    "STEP_AFTER_FRAME_MS",
    "PaintPacer",
    "ms_since_frame",
    "step_done",
]

#: While replies stream, the two heavy pieces of the GUI thread's work, a frame's paint
#: (~3-5 ms) and a settled Markdown step (~3-5 ms), keep apart: a step waits until this long
#: after a frame was let through, and a frame until FRAME_AFTER_STEP_MS after a step ended.
#: Back to back in one loop pass they were the worst waits a timer or a keystroke had while a
#: fast reply streamed (~12-17 ms with the read's slice); apart, the loop gets a turn between
#: them (p99 stall ~2 ms lower, the reply no slower: the read fills the wait).
STEP_AFTER_FRAME_MS = 6
FRAME_AFTER_STEP_MS = 5


class _Clock:
    """When the GUI thread last let a paced frame through (and of which window) and last
    ended a settled step (time.monotonic(); one for all windows: they share the one thread)."""

    frame_at = float("-inf")
    frame_window: weakref.ref[QWidget] | None = None
    step_at = float("-inf")


def ms_since_frame(widget: QWidget) -> float:
    """Milliseconds since a paced frame of ``widget``'s window was last let through to paint
    (infinite if its window is not the one that painted last)."""
    painted = _Clock.frame_window() if _Clock.frame_window is not None else None
    if painted is None or painted is not widget.window():
        return float("inf")
    return (time.monotonic() - _Clock.frame_at) * 1000


def step_done() -> None:
    """A settled Markdown step just ended: the next frame keeps FRAME_AFTER_STEP_MS away."""
    _Clock.step_at = time.monotonic()


class PaintPacer(QObject):
    """Lets ``widget``'s window repaint at most once per ``interval_ms`` while
    :meth:`start`-ed: every change in between (a flush, a settled Markdown step, the scroll
    that follows the bottom) is shown by the next frame's one paint.

    A fast reply changes the transcript on nearly every loop turn (a flush of new deltas, then
    a settled-Markdown step on each turn after it), and each change asks Qt for a paint of the
    window on the next turn: ~60 paints a second of text that grew by more than a screen each
    time, a quarter of the GUI thread's time on frames no one can see. Paced, an update request
    that comes sooner than a frame after the last paint is held back (Qt keeps gathering what
    changed) and asked again when the frame is due. :meth:`stop` lets the next request through;
    :meth:`finish` keeps pacing while a reply that ended still renders what it received (each
    catch-up step of its Markdown would otherwise be a paint of its own, ~40 for a fast reply),
    and lets the first request after that through at once.

    ``frames`` counts the paint passes let through and ``held`` the requests held back (tests).
    """

    def __init__(self, widget: QWidget, *, interval_ms: int) -> None:
        super().__init__(widget)
        self._widget = widget
        self._window: QWidget | None = None
        self._interval = interval_ms / 1000
        self._last_frame = 0.0
        self._held_since: float | None = None  # when the frame now held was first asked for
        self._busy: Callable[[], bool] | None = None
        self._due = QTimer(self)
        self._due.setSingleShot(True)
        self._due.timeout.connect(self._request)
        self.frames = 0
        self.held = 0

    def is_pacing(self) -> bool:
        return self._window is not None

    def is_holding(self) -> bool:
        """True while a paint is held back until the next frame."""
        return self._due.isActive()

    def start(self) -> None:
        """Pace the widget's window from now on (if not already)."""
        self._busy = None
        if self._window is not None:
            return
        self._window = self._widget.window()
        self._window.installEventFilter(self)

    def finish(self, busy: Callable[[], bool]) -> None:
        """Stop pacing once ``busy()`` is false (now, if it already is); until then frames
        stay paced, and the first update request that finds it false paints at once."""
        if self._window is None or not busy():
            self.stop()
            return
        self._busy = busy

    def stop(self) -> None:
        """Stop pacing; a paint held back is asked for now."""
        self._busy = None
        self._held_since = None
        window, self._window = self._window, None
        if window is None:
            return
        window.removeEventFilter(self)
        if self._due.isActive():
            self._due.stop()
            self._post(window)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        window = self._window
        if window is None or watched is not window or event.type() != QEvent.Type.UpdateRequest:
            return False
        if self._busy is not None and not self._busy():
            self._due.stop()  # this request paints what a held one would have
            self.stop()
            return False
        now = time.monotonic()
        frame_due = self._last_frame + self._interval
        after_step = _Clock.step_at + FRAME_AFTER_STEP_MS / 1000
        if self._held_since is not None:
            # Steps back to back (a reply's Markdown catching up) leave no gap after any of
            # them: a frame held already waits for one no longer than a frame more.
            after_step = min(after_step, max(frame_due, self._held_since) + self._interval)
        wait = max(frame_due, after_step) - now
        if wait <= 0:
            self._held_since = None
            self._last_frame = _Clock.frame_at = now
            _Clock.frame_window = weakref.ref(window)
            self.frames += 1
            return False
        self.held += 1
        if self._held_since is None:
            self._held_since = now
        if not self._due.isActive():
            self._due.start(max(1, round(wait * 1000)))
        return True  # Qt's dirty region stays; the frame's request paints it

    def _request(self) -> None:
        if self._window is not None:
            self._post(self._window)

    @staticmethod
    def _post(window: QWidget) -> None:
        QCoreApplication.postEvent(window, QEvent(QEvent.Type.UpdateRequest))

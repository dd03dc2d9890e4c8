"""Start-up has settled: what the app has built so far leaves the collector's full passes."""

from __future__ import annotations

import gc
import logging
import threading

__all__ = ["hold_collections", "start_up_settled"]

log = logging.getLogger(__name__)

_lock = threading.Lock()
_held = False


def hold_collections() -> None:
    """No garbage collection until start-up settles (issue #12).

    Start-up makes ~50,000 lasting objects (modules, classes, the window) and almost no
    garbage: ~110 collections ran before the first paint, 20-50 ms of the GUI thread, and
    freed ~600 objects. A collector someone else turned off is left off.
    """
    global _held
    with _lock:
        if gc.isenabled():
            gc.disable()
            _held = True


def start_up_settled(point: str) -> None:
    """Freeze what exists now (modules, the window, the session, Markdown's tables) out of the
    garbage collector's full passes: it lives as long as the app, and walking it in every full
    pass paused the window 80-180 ms mid-switch and mid-reply (issue #12).

    Called at each point where a burst of lasting objects has just been made: the first paint,
    the end of the keychain read, and the Markdown warm-up (which a reply's start or the first
    keystroke begins). The first of them ends :func:`hold_collections`: start-up's few cycles
    are collected then, not frozen for good. Safe on any thread; ``point`` names the caller
    in the debug log.
    """
    global _held
    with _lock:
        if _held:
            _held = False
            gc.enable()
            gc.collect(0)  # everything since the hold is still in the youngest generation
        gc.freeze()
    log.debug("start-up settled at %s", point)  # (counting the frozen objects walks them all)

"""Start-up has settled: what the app has built so far leaves the collector's full passes."""

from __future__ import annotations

import gc
import logging

__all__ = ["start_up_settled"]

log = logging.getLogger(__name__)


def start_up_settled(point: str) -> None:
    """Freeze what exists now (modules, the window, the session, Markdown's tables) out of the
    garbage collector's full passes: it lives as long as the app, and walking it in every full
    pass paused the window 80-180 ms mid-switch and mid-reply (issue #12).

    Called at each point where a burst of lasting objects has just been made: the first paint,
    the end of the keychain read, and the Markdown warm-up (which a reply's start or the first
    keystroke begins). Safe on any thread; ``point`` names the caller in the debug log.
    """
    gc.freeze()
    log.debug("start-up settled at %s", point)  # (counting the frozen objects walks them all)

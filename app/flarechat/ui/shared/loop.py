"""The asyncio event loop that runs inside Qt: qasync's QEventLoop plus asyncgen hooks.

qasync 0.28 does not install asyncio's async-generator hooks, so breaking out of an SSE
iterator (httpx-sse ``aiter_sse``) leaves a generator that is finalised with no running loop
("async generator ignored GeneratorExit"). Installing the base loop's hooks around
run_forever fixes it.
"""

from __future__ import annotations

import sys
from typing import Any

from qasync import QEventLoop

__all__ = ["FlareEventLoop"]


class FlareEventLoop(QEventLoop):  # type: ignore[misc]
    """QEventLoop that finalises async generators like a stock asyncio loop.

    It also kills its leftover Qt timers on close: qasync 0.28 leaves a cancelled
    ``call_later`` (e.g. the timeout of a finished ``asyncio.wait_for``) registered on its
    ``_SimpleTimer`` after ``close()``. If that QObject is then garbage-collected off the GUI
    thread (the cycle collector can run in an executor thread), the timer outlives it and Qt
    segfaults in QTimerInfoList::activateTimers.
    """

    _saved_asyncgen_hooks: Any = None

    def _before_run_forever(self) -> None:
        self._saved_asyncgen_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        super()._before_run_forever()

    def _after_run_forever(self) -> None:
        super()._after_run_forever()
        if self._saved_asyncgen_hooks is not None:
            sys.set_asyncgen_hooks(*self._saved_asyncgen_hooks)
            self._saved_asyncgen_hooks = None

    def close(self) -> None:
        super().close()
        timer = self._timer
        # Name-mangled private dict of qasync's _SimpleTimer: timer id -> handle.
        callbacks: dict[int, object] = timer._SimpleTimer__callbacks
        for timer_id in list(callbacks):
            timer.killTimer(timer_id)
        callbacks.clear()

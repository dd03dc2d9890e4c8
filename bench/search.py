"""Search: Ctrl+K over 200 conversations / 50,000 messages, keystroke to painted results.

The real window (gui.session) on a profile of 200 conversations of 250 messages. Ctrl+K focuses
the sidebar's search field; the query is typed but for its last letter, the results settle,
then the last keystroke is timed until the new results are in the list and painted. The target
is absolute (ms); the ratio is against the store's own search (ChatStore.search) for the same
query on the same file, measured in the same run.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from common import Result, median
from flarechat.emulator import EmulatorServer
from gui import PaintWaiter, run_in_app, session, settle
from profiles import make_profile

__all__ = ["run"]

CONVERSATIONS, MESSAGES = 200, 250
QUERY = "gateway"
REPEATS, QUICK_REPEATS = 7, 3
TARGET_MS = 50.0
#: Longer than any debounce the field may have, so each round starts from settled results.
SETTLE_S = 0.8
WAIT_S = 30.0


async def _round(shown: Any, waiter: PaintWaiter) -> float:
    """ms from the query's last keystroke to the painted results."""
    window, sidebar = shown.window, shown.window.sidebar
    QTest.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(sidebar.search_field, QUERY[:-1])
    await settle(SETTLE_S)
    got: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    def on_results(hits: list[Any]) -> None:
        if not got.done() and hits:
            got.set_result(time.perf_counter())

    shown.workspace.search_results.connect(on_results)
    start = time.perf_counter()
    QTest.keyClicks(sidebar.search_field, QUERY[-1])
    try:
        await asyncio.wait_for(got, WAIT_S)
    finally:
        shown.workspace.search_results.disconnect(on_results)
    end = await waiter.painted()
    QTest.keyClick(sidebar.search_field, Qt.Key.Key_Escape)
    sidebar.search_field.clear()
    return (end - start) * 1000


def _store_search_ms(repeats: int) -> float:
    from flarechat.core.store import ChatStore, default_path

    with ChatStore(default_path()) as store:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            store.search(QUERY)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def _measure(repeats: int, profile: Path) -> list[Result]:
    with EmulatorServer() as emu:
        async with session(profile, emu) as shown:
            await settle(0.5)
            waiter = PaintWaiter(shown.window.sidebar.results.viewport())
            await _round(shown, waiter)  # warm-up
            ours = [await _round(shown, waiter) for _ in range(repeats)]
    base = _store_search_ms(repeats)
    return [
        Result(
            "search.keystroke_to_results",
            median(ours),
            base,
            TARGET_MS,
            "ms",
            check="value",
            note=f"median of {repeats}; {CONVERSATIONS * MESSAGES:,} messages; "
            f"baseline: ChatStore.search({QUERY!r}) alone",
        ),
    ]


def run(quick: bool) -> list[Result]:
    repeats = QUICK_REPEATS if quick else REPEATS
    with tempfile.TemporaryDirectory() as home:
        make_profile(
            Path(home), conversations=CONVERSATIONS, messages=MESSAGES, last_messages=MESSAGES
        )
        return run_in_app(lambda: _measure(repeats, Path(home)))

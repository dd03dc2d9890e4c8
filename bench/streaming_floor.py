"""The streaming row's floor: where the window's time goes against the bare read, in one run.

Run on its own (not a row of run.py)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/streaming_floor.py [--repeats N]

Against the same emulator process (unpaced, as ``streaming.py``), it prints the median of:
1. ``bare``: httpx + httpx-sse reading the whole stream (``streaming.bare_read``);
2. ``client``: the app's own read path without a window: ``WorkersAIClient.stream_reply``
   through ``run_turn``, each event folded into the reply's ``TurnState`` as the session does,
   on a stock loop in a worker thread like (1);
3. ``render``: the finished reply's Markdown rendered once into a MarkdownView in a scroll
   area, the way a stream settles it (settled blocks a budget at a time on following loop
   turns, then the final render), until painted, on the GUI thread of an idle app;
4. ``window``: the real window streaming the reply until it is painted
   (``streaming._window_reply``);
each in ms and as a ratio to (1), with the CPU of (1)-(3); and the window's stalls, by the
wall clock (as ``streaming.py``) and by the GUI thread's own CPU time (what our work held it,
without the waits for a core that a busy machine adds). (2) - (1) is what our read
path adds; (3) is rendering 106 KB of Markdown on the one GUI thread; what (4) costs beyond
(2) + (3) is per-update work (tails, relayouts, paints) and the two sharing one thread.
It also prints the emulator's own CPU per reply (read from /proc during (1)), and the least
time any design could take on this machine: the CPU of the emulator, (2) and (3) spread over
every core with none idle.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from common import Heartbeat
from emulator_process import EmulatorProcess
from flarechat.emulator import DEMO_ACCOUNT_ID
from gui import MODEL, TOKEN, PaintWaiter, run_in_app, session, settle
from long_reply import BENCH_PROMPT, REPLY_TOKENS, long_answer
from streaming import PARALLEL, UNPACED_TOKENS_PER_SECOND, _window_reply, bare_read

__all__ = ["main"]

REPEATS = 3
P99 = 0.99
#: The scroll area the render step draws into: the bench window's transcript, about.
VIEW_WIDTH, VIEW_HEIGHT = 900, 700
RENDER_TIMEOUT_S = 120.0


def _in_thread(make: Callable[[], Coroutine[Any, Any, float]]) -> float:
    """The result of a coroutine run on a stock asyncio loop in a worker thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, make()).result()


def _with_cpu(read: Callable[[], float]) -> tuple[float, float]:
    """(wall, CPU) seconds of a read run in a worker thread; the CPU is this process's while
    it runs (the GUI thread waits idle meanwhile; the emulator is a process of its own)."""
    cpu = time.process_time()
    wall = read()
    return wall, time.process_time() - cpu


def bare(emulator: EmulatorProcess) -> tuple[float, float, float]:
    """(wall, reader CPU, emulator CPU) seconds of one bare read."""
    served = emulator.cpu_seconds()
    wall, cpu = _with_cpu(lambda: bare_read(emulator))
    return wall, cpu, emulator.cpu_seconds() - served


def client(emulator: EmulatorProcess) -> tuple[float, float]:
    """The app's client and the session's fold, no window: (wall, thread CPU) seconds."""
    from flarechat.api.client import WorkersAIClient
    from flarechat.api.config import ChatMessage, ChatRequest, Connection, SamplingParams, Secret
    from flarechat.api.retry import RetryPolicy
    from flarechat.core.turn import TurnState, fold, run_turn

    conn = Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret(TOKEN),
        api_base=emulator.api_base,
        gateway_base=emulator.gateway_base,
    )
    request = ChatRequest(
        model=MODEL,
        messages=(ChatMessage("user", BENCH_PROMPT),),
        params=SamplingParams(max_tokens=REPLY_TOKENS + 100),
    )

    async def read() -> float:
        async with WorkersAIClient() as api:
            start = time.perf_counter()
            state = TurnState(started_at=time.monotonic())
            async for event in run_turn(api, conn, request, policy=RetryPolicy()):
                state = fold(state, event, now=time.monotonic())
            wall = time.perf_counter() - start
        assert state.status == "done", state.status
        assert len(state.text) > REPLY_TOKENS
        return wall

    return _with_cpu(lambda: _in_thread(read))


async def render(text: str) -> tuple[float, float]:
    """The reply's Markdown rendered once into a shown MarkdownView in a scroll area, settled
    a budget at a time as a stream does, then finalised; until painted: (wall, CPU) s."""
    from PySide6.QtWidgets import QScrollArea

    from flarechat.ui.transcript.markdown_view import MarkdownView

    area = QScrollArea()
    area.setWidgetResizable(True)
    view = MarkdownView()
    area.setWidget(view)
    area.resize(VIEW_WIDTH, VIEW_HEIGHT)
    area.show()
    await settle()
    waiter = PaintWaiter(view)
    start, cpu = time.perf_counter(), time.thread_time()
    async with asyncio.timeout(RENDER_TIMEOUT_S):
        view.stream_markdown(text)
        await _rendered(view)
        view.set_markdown(text)
        await _rendered(view)
    area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
    end = await waiter.painted()
    used = time.thread_time() - cpu
    assert view.plain_text().count("Part ") >= text.count("## Part "), "not all rendered"
    area.close()
    area.deleteLater()
    await settle()
    return end - start, used


async def _rendered(view: Any) -> None:
    """Until the view has no settled text left to render, a loop turn at a time."""
    while view.is_rendering():  # noqa: ASYNC110 - no signal says so; the steps are loop turns
        await asyncio.sleep(0)


class CpuHeartbeat(Heartbeat):
    """The bench's heartbeat, also noting the GUI thread's CPU time at each tick: a gap's CPU
    is the work that held the thread, its wall time also counts waiting for a core (on a busy
    two-core machine, often most of a long gap)."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: dict[float, float] = {}
        self.timer.timeout.connect(self._note_cpu)

    def _note_cpu(self) -> None:
        if self.ticks:
            self.cpu[self.ticks[-1]] = time.thread_time()

    def cpu_gaps(self, start: float, end: float) -> list[float]:
        before = [t for t in self.ticks if t <= start][-1:]
        ticks = [*before, *(t for t in self.ticks if start < t <= end)]
        noted = [self.cpu[t] for t in ticks if t in self.cpu]
        return [b - a for a, b in itertools.pairwise(noted)]


def _p99(gaps: list[float]) -> float:
    ordered = sorted(gaps)
    return ordered[min(len(ordered) - 1, int(P99 * len(ordered)))] if ordered else 0.0


async def window(
    emulator: EmulatorProcess, profile: Path, repeats: int
) -> tuple[list[float], list[tuple[float, float, float, float]]]:
    """Send-to-painted seconds per reply, and its stalls: (longest, p99) wall and on-CPU."""
    walls: list[float] = []
    stalls: list[tuple[float, float, float, float]] = []
    async with session(profile, emulator, default_max_tokens=REPLY_TOKENS + 100) as shown:
        heartbeat = CpuHeartbeat()
        for _ in range(repeats):
            start = time.perf_counter()
            wall, longest, p99 = await _window_reply(shown, heartbeat)
            cpu = heartbeat.cpu_gaps(start, start + wall)
            walls.append(wall)
            stalls.append((longest, p99, max(cpu, default=0.0), _p99(cpu)))
        heartbeat.stop()
    return walls, stalls


async def _measure(
    repeats: int, profile: Path
) -> tuple[dict[str, tuple[float, float | None]], list[float]]:
    """{name: (median wall s, median CPU s or None)}, and the window's median stalls."""
    text = long_answer(REPLY_TOKENS)
    from flarechat.ui.transcript.warm_up import warm_up_in_background

    warm_up_in_background()  # Markdown and highlighting loaded, as in the window
    with EmulatorProcess(tokens_per_second=UNPACED_TOKENS_PER_SECOND, slots=PARALLEL * 2) as emu:
        await asyncio.to_thread(bare, emu)  # warm-up
        await asyncio.to_thread(client, emu)
        await render(text)
        bares, clients, renders = [], [], []
        for _ in range(repeats):
            bares.append(await asyncio.to_thread(bare, emu))
            clients.append(await asyncio.to_thread(client, emu))
            renders.append(await render(text))
        windows, stalls = await window(emu, profile, repeats)

    def med(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)

    results: dict[str, tuple[float, float | None]] = {
        "bare": med([(wall, cpu) for wall, cpu, _served in bares]),
        "emulator": (statistics.median(served for _w, _c, served in bares), None),
        "client": med(clients),
        "render": med(renders),
        "window": (statistics.median(windows), None),
    }
    return results, [statistics.median(s[i] for s in stalls) for i in range(4)]


def _report(
    results: dict[str, tuple[float, float | None]], stalls: list[float], repeats: int
) -> None:
    base = results["bare"][0]
    served = results.pop("emulator")[0]
    print(f"streaming floor: {REPLY_TOKENS:,} tokens unpaced, median of {repeats}")
    labels = {
        "bare": "1 bare httpx + httpx-sse read",
        "client": "2 app client + fold, no window",
        "render": "3 render the reply's Markdown once",
        "window": "4 window, send to painted",
    }
    for name, (wall, cpu) in results.items():
        used = f"{cpu * 1000:7.0f} ms CPU" if cpu is not None else " " * 14
        print(f"  {labels[name]:38s} {wall * 1000:7.0f} ms  {wall / base:5.2f}x   {used}")
    floor = max(results["client"][0], base) + results["render"][0]
    print(f"  (2) + (3), one thread does both:       {floor * 1000:7.0f} ms  {floor / base:5.2f}x")
    # The least any design could take here: the emulator serving the reply, the app's read and
    # one render are all CPU work, and this machine has this many cores for the three.
    cores = os.cpu_count() or 1
    least = (served + (results["client"][1] or 0.0) + (results["render"][1] or 0.0)) / cores
    print(
        f"  emulator CPU serving one reply {served * 1000:.0f} ms; (emulator + (2) + (3)) CPU "
        f"over {cores} cores, every core busy: {least * 1000:.0f} ms  {least / base:5.2f}x"
    )
    longest, p99, cpu_longest, cpu_p99 = (s * 1000 for s in stalls)
    print(
        f"  window stalls: longest {longest:.1f} ms, p99 {p99:.1f} ms (wall); "
        f"on the GUI thread's CPU: longest {cpu_longest:.1f} ms, p99 {cpu_p99:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as profile:
        results, stalls = run_in_app(lambda: _measure(args.repeats, Path(profile)))
    _report(results, stalls, args.repeats)


if __name__ == "__main__":
    main()

"""Streaming: a 20,000-token reply into the real window vs a bare httpx + httpx-sse reader.

The emulator streams as fast as it can (no pace) from a process of its own, as a real server
would (``emulator_process.py``: in a thread of this process it would take the GIL from the
window); it answers BENCH_PROMPT with REPLY_TOKENS tokens of Markdown (text, lists, tables,
code), so the emulator's real framing and SSE path are measured.
- time from send to the whole reply painted in the window, vs the bare client reading the
  same stream to its end (on a stock asyncio loop in a worker thread);
- the GUI thread's longest stall and p99 stall (5 ms heartbeat) during that reply;
- the longest stall with four replies streaming at once (four conversations).

Where the window's time goes against the bare read (the app's read path alone, one render of
the reply's Markdown, the whole window) is printed by ``streaming_floor.py``, run on its own.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from common import Heartbeat, Result, median
from emulator_process import EmulatorProcess
from flarechat.emulator import DEMO_ACCOUNT_ID
from gui import MODEL, TOKEN, PaintWaiter, run_in_app, session, settle
from long_reply import BENCH_PROMPT, REPLY_TOKENS

__all__ = ["run"]

REPEATS, QUICK_REPEATS = 5, 2
PARALLEL = 4
#: "As fast as it can": the emulator's pacing sleep is always already over.
UNPACED_TOKENS_PER_SECOND = 1e9
TARGET_RATIO = 1.25
TARGET_STALL_MS, TARGET_P99_MS, TARGET_PARALLEL_STALL_MS = 33.0, 16.0, 50.0
WAIT_S = 300.0
#: An unpaced reply not finished by then has hung (see HANG_NOTE); the rest runs paced.
HANG_S = 60.0
FALLBACK_TOKENS_PER_SECOND = 2_000.0
HANG_NOTE = (
    f"paced at {FALLBACK_TOKENS_PER_SECOND:,.0f} tok/s: the unpaced reply never finished "
    f"within {HANG_S:.0f} s"
)
#: Whitespace-only chunks merge when the text is re-tokenized: a few fewer events than tokens.
MIN_EVENT_SHARE = 0.95
#: How often the end of a reply's rendering is looked for (s): well under a frame.
RENDER_POLL_S = 0.001


def bare_read(emulator: EmulatorProcess) -> float:
    """Seconds for httpx + httpx-sse to read the whole stream, on a stock loop in a thread."""
    import httpx
    from httpx_sse import aconnect_sse

    url = f"{emulator.api_base}/accounts/{DEMO_ACCOUNT_ID}/ai/run/{MODEL}"
    body = {
        "messages": [{"role": "user", "content": BENCH_PROMPT}],
        "stream": True,
        "max_tokens": REPLY_TOKENS + 100,
    }

    async def read() -> float:
        async with httpx.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}) as client:
            start = time.perf_counter()
            events = 0
            async with aconnect_sse(client, "POST", url, json=body) as source:
                async for _event in source.aiter_sse():
                    events += 1
            assert events >= REPLY_TOKENS * MIN_EVENT_SHARE, f"only {events} events"
            return time.perf_counter() - start

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, read()).result()


async def _window_reply(
    shown: Any, heartbeat: Heartbeat, *, wait: float = WAIT_S
) -> tuple[float, float, float]:
    """(seconds send -> painted, longest stall, p99 stall) for one long reply."""
    chat = shown.chat
    waiter = PaintWaiter(shown.window.pane)  # the pane: always shown, the transcript within it
    done: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def finished(message_id: str, data: Any) -> None:
        if not done.done() and getattr(data, "status", "") == "done":
            done.set_result(message_id)

    chat.turn_finished.connect(finished)
    chat.new_conversation()
    await settle()
    start = time.perf_counter()
    chat.send(BENCH_PROMPT)
    try:
        reply = await asyncio.wait_for(done, wait)
    finally:
        chat.turn_finished.disconnect(finished)
    await _all_rendered(shown, [reply])
    end = await waiter.painted()
    return end - start, heartbeat.longest(start, end), heartbeat.p99(start, end)


async def _all_rendered(shown: Any, message_ids: list[str]) -> None:
    """Until the replies shown have rendered all their text: a reply's Markdown is rendered
    a budget at a time on loop turns, and may still be catching up when the stream ends (the
    row times the whole reply rendered, not only received)."""
    transcript = shown.window.pane.transcript
    deadline = time.perf_counter() + WAIT_S
    while any(_rendering(transcript.view_for(message_id)) for message_id in message_ids):
        if time.perf_counter() > deadline:
            raise TimeoutError("a reply was still rendering")
        await asyncio.sleep(RENDER_POLL_S)


def _rendering(view: Any) -> bool:
    """Whether a reply's widget (None: not shown, so nothing to render) is still rendering."""
    return view is not None and bool(view.body.is_rendering())


async def _parallel(shown: Any, heartbeat: Heartbeat) -> float:
    """Longest stall while PARALLEL replies stream at once, each in its own conversation."""
    chat = shown.chat
    finished: list[str] = []
    all_done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_finished(message_id: str, _data: Any) -> None:
        finished.append(message_id)
        if len(finished) == PARALLEL and not all_done.done():
            all_done.set_result(None)

    chat.turn_finished.connect(on_finished)
    start = time.perf_counter()
    for _ in range(PARALLEL):
        chat.new_conversation()
        chat.send(BENCH_PROMPT)
    await asyncio.wait_for(all_done, WAIT_S)
    await _all_rendered(shown, finished)
    end = await PaintWaiter(shown.window).painted()
    chat.turn_finished.disconnect(on_finished)
    return heartbeat.longest(start, end)


async def _unpaced_works(emu: EmulatorProcess, profile: Path) -> bool:
    """Whether the window gets through one unpaced reply (a hung one poisons its session)."""
    async with session(profile / "probe", emu, default_max_tokens=REPLY_TOKENS + 100) as shown:
        heartbeat = Heartbeat()
        try:
            await _window_reply(shown, heartbeat, wait=HANG_S)
        except TimeoutError:
            return False
        finally:
            heartbeat.stop()
    return True


def _emulator(tokens_per_second: float) -> EmulatorProcess:
    return EmulatorProcess(tokens_per_second=tokens_per_second, slots=PARALLEL * 2)


async def _measure(repeats: int, profile: Path) -> list[Result]:
    pace, tokens_per_second = "unpaced", UNPACED_TOKENS_PER_SECOND
    with _emulator(tokens_per_second) as emu:
        await asyncio.to_thread(bare_read, emu)  # warm-up
        if not await _unpaced_works(emu, profile):  # reported, then measured at a pace it survives
            pace, tokens_per_second = HANG_NOTE, FALLBACK_TOKENS_PER_SECOND
    with _emulator(tokens_per_second) as emu:
        async with session(profile / "run", emu, default_max_tokens=REPLY_TOKENS + 100) as shown:
            heartbeat = Heartbeat()
            bare: list[float] = []
            ours: list[tuple[float, float, float]] = []
            for _ in range(repeats):
                bare.append(await asyncio.to_thread(bare_read, emu))
                ours.append(await _window_reply(shown, heartbeat))
            parallel = [await _parallel(shown, heartbeat) for _ in range(max(1, repeats // 2))]
            heartbeat.stop()
    base = median(bare) * 1000
    note = f"median of {repeats}; {REPLY_TOKENS:,} tokens {pace}"
    rows = [
        Result(
            "streaming.reply_painted",
            median(o[0] for o in ours) * 1000,
            base,
            TARGET_RATIO,
            "ms",
            note=f"vs bare httpx+httpx-sse read; {note}",
        ),
        Result(
            "streaming.longest_stall",
            median(o[1] for o in ours) * 1000,
            base,
            TARGET_STALL_MS,
            "ms",
            check="value",
            note=f"5 ms heartbeat; {note}",
        ),
        Result(
            "streaming.p99_stall",
            median(o[2] for o in ours) * 1000,
            base,
            TARGET_P99_MS,
            "ms",
            check="value",
            note=f"5 ms heartbeat; {note}",
        ),
        Result(
            "streaming.four_at_once_stall",
            median(parallel) * 1000,
            base,
            TARGET_PARALLEL_STALL_MS,
            "ms",
            check="value",
            note=f"{PARALLEL} replies at once; baseline = one bare read",
        ),
    ]
    return rows


def run(quick: bool) -> list[Result]:
    repeats = QUICK_REPEATS if quick else REPEATS
    with tempfile.TemporaryDirectory() as profile:
        return run_in_app(lambda: _measure(repeats, Path(profile)))

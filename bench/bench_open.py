"""Benchmark: open a 5,000-message conversation in the real TranscriptView, against 40 messages.

Both conversations live in one real SQLite store (a throwaway FLARECHAT_HOME) and are opened the
way the window opens them, on the app's asyncio-in-Qt loop (FlareEventLoop), offscreen:

(a) AsyncChatStore.load_tree + tree.path() (the read runs on the store's worker thread);
    then the PathView over it (as ChatController.path_view: MessageData made when shown);
(b) TranscriptView.set_history(...) until the first page has filled in and been painted;
(c) the longest gap of a 10 ms QTimer heartbeat during the open: the GUI thread's longest
    stall, i.e. the visible pause;
(d) scroll_to a message 4,000 back (the oldest one for the baseline) until painted.

Each figure is the median of --repeats opens (alternating sizes, after one warm-up each), shown
with its ratio against the 40-message baseline measured in the same run. No thresholds
(machines differ). Run: /work/venv/bin/python bench/bench_open.py [--messages 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import AsyncChatStore, ChatStore, default_path
from flarechat.ui.control.presenting import message_data
from flarechat.ui.control.view_data import PathView
from flarechat.ui.shared.loop import FlareEventLoop
from flarechat.ui.shared.theme import apply_theme
from flarechat.ui.transcript.transcript import TranscriptView

DEFAULT_MESSAGES = 5_000
BASELINE_MESSAGES = 40
DEFAULT_REPEATS = 5
SCROLL_BACK = 4_000
HEARTBEAT_MS = 10
#: Ratios from here on are named in the closing line as growing with history.
GROWN_RATIO = 2
#: Let deleted widgets go and the last paint land before the next measurement starts.
SETTLE_S = 0.15
#: A paint that never comes means the view is broken, not slow.
PAINT_TIMEOUT_S = 10.0
WINDOW_SIZE = (900, 700)
FILL_TIMER_NAME = "transcriptPageFillTimer"
HOME_ENV = "FLARECHAT_HOME"
MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
SEED = 20_240_601
#: Every this many messages the user regenerated a reply once (real < 1/2 > branches).
BRANCH_EVERY = 50
#: Every this many assistant replies carries a fenced python block.
CODE_EVERY = 3
ASSISTANT_CHARS = (500, 3_000)
USER_SENTENCES = (1, 4)

SENTENCES = [
    "Workers AI streams each reply as server-sent events, a few tokens per event.",
    "The gateway adds caching, rate limits and a log id you can look up later.",
    "Keep the system prompt short: every token of it is billed on every turn.",
    "A model with a larger context window is slower to start, but it remembers more.",
    "Neurons are Cloudflare's unit of work; the free allocation resets daily at 00:00 UTC.",
    "If the model is busy, the request is queued or rejected, depending on the header.",
    "Quantised variants such as fp8 trade a little quality for a lot of speed.",
    "Reasoning models think first, so the first visible token can take a while.",
]
LIST_ITEMS = [
    "set `max_tokens` so a long answer is not cut off",
    "lower `temperature` for code, raise it for brainstorming",
    "pin the model id, e.g. `{model}`",
    "retry on **429** with the `Retry-After` delay",
    "measure TTFT and tokens per second separately",
    "cache identical prompts at the gateway",
]
CODE = """```python
async def ask_{n}(client, conn, prompt: str) -> str:
    request = ChatRequest(model="{model}", messages=[ChatMessage("user", prompt)])
    parts: list[str] = []
    async for event in client.stream_chat(conn, request):
        if isinstance(event, TextDelta):
            parts.append(event.text)
    return "".join(parts)  # reply {n}
```"""


# -- the conversation ----------------------------------------------------------------------------


def paragraph(rng: random.Random) -> str:
    return " ".join(rng.sample(SENTENCES, k=rng.randint(3, 5)))


def assistant_text(rng: random.Random, index: int) -> str:
    """A paragraph, a short list, every few replies a code block; more paragraphs to size."""
    target = rng.randint(*ASSISTANT_CHARS)
    items = [f"- {item.format(model=MODEL)}" for item in rng.sample(LIST_ITEMS, k=3)]
    parts = [paragraph(rng), "\n".join(items)]
    if (index // 2) % CODE_EVERY == 0:
        parts.append(CODE.format(n=index, model=MODEL))
    while sum(map(len, parts)) < target:
        parts.append(paragraph(rng))
    return "\n\n".join(parts)


def reply(conv_id: str, parent: str | None, *, index: int, rng: random.Random) -> Message:
    completion = rng.randint(100, 800)
    return Message(
        new_id(),
        conv_id,
        parent,
        ROLE_ASSISTANT,
        assistant_text(rng, index),
        created_at=float(index),
        model=MODEL,
        finish_reason="stop",
        request={"model": MODEL, "route": "direct"},
        usage={"prompt_tokens": 40 * index % 9_000, "completion_tokens": completion},
        meta={"log_id": new_id(), "cache_status": "MISS"},
        timings={"ttft": rng.uniform(0.2, 0.9), "tokens_per_second": rng.uniform(20, 90)},
    )


def build_tree(count: int, *, title: str) -> ConversationTree:
    """Alternating user/assistant messages; now and then an earlier, regenerated reply."""
    rng = random.Random(SEED + count)
    conv = Conversation(id=new_id(), title=title, model=MODEL)
    tree = ConversationTree(conv)
    parent: str | None = None
    for index in range(count):
        if index % 2 == 0:
            text = paragraph(rng)[: rng.randint(60, 400)]
            msg = Message(new_id(), conv.id, parent, ROLE_USER, text, created_at=float(index))
        else:
            if index % BRANCH_EVERY == 1:
                tree.add(reply(conv.id, parent, index=index, rng=rng))
            msg = reply(conv.id, parent, index=index, rng=rng)
        tree.add(msg)
        parent = msg.id
    return tree


def path_data(tree: ConversationTree) -> PathView:
    """What the controller hands to the transcript: a lazy view of the visible path."""
    path = tree.path()
    last = len(path) - 1
    return PathView([m.id for m in path], lambda i: message_data(tree, path[i], is_last=i == last))


# -- measuring instruments -----------------------------------------------------------------------


class Heartbeat:
    """A precise 10 ms QTimer; its longest gap over a span is the GUI thread's longest stall."""

    def __init__(self) -> None:
        self.ticks: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))
        self.timer.start()

    def longest_gap(self, start: float, end: float) -> float:
        """From the last tick before ``start`` to the first one after ``end`` (seconds)."""
        before = [t for t in self.ticks if t <= start][-1:]
        after = [t for t in self.ticks if t >= end][:1]
        ticks = before + [t for t in self.ticks if start < t < end] + after
        self.ticks = self.ticks[-1:]
        return max((b - a for a, b in itertools.pairwise(ticks)), default=0.0)


class PaintWatch(QObject):
    """Resolves with the time the transcript was painted after its page finished filling in."""

    def __init__(self, view: TranscriptView, heartbeat: Heartbeat) -> None:
        super().__init__(view)
        self._view = view
        content = view.scroll_area.widget()
        assert content is not None, "the transcript has no content widget"
        self._content = content
        self._future: asyncio.Future[float] | None = None
        self._armed = False
        for widget in (view.scroll_area.viewport(), self._content):
            widget.installEventFilter(self)
        fill_timer = view.findChild(QTimer, FILL_TIMER_NAME)
        if fill_timer is not None:  # right after each fill step; the heartbeat is the fallback
            fill_timer.timeout.connect(self._check)
        heartbeat.timer.timeout.connect(self._check)

    async def painted(self) -> float:
        """Call right after the action: waits for the first paint of the filled-in page."""
        self._future = asyncio.get_running_loop().create_future()
        self._armed = False
        self._check()
        return await asyncio.wait_for(self._future, PAINT_TIMEOUT_S)

    def _check(self) -> None:
        if self._future is None or self._armed or self._view.is_loading():
            return
        self._armed = True
        self._content.update()  # the filled-in page is on screen once this paint is done

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self._armed and event.type() == QEvent.Type.Paint:
            self._armed = False
            asyncio.get_running_loop().call_soon(self._resolve)  # after the whole paint pass
        return super().eventFilter(watched, event)

    def _resolve(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(time.perf_counter())
        self._future = None


# -- one open ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    """One open (seconds): each step, the whole open, and the longest stall during it."""

    load: float
    data: float
    history: float
    total: float
    stall: float
    scroll: float
    scroll_stall: float


@dataclass(slots=True)
class Bench:
    """The store, the shown transcript and the instruments shared by every open."""

    store: AsyncChatStore
    view: TranscriptView
    heartbeat: Heartbeat
    watch: PaintWatch


async def open_once(bench: Bench, conv_id: str) -> Sample:
    """Open the conversation in an emptied, settled view, then jump SCROLL_BACK messages back."""
    bench.view.clear()
    await asyncio.sleep(SETTLE_S)
    start = time.perf_counter()
    tree = await bench.store.load_tree(conv_id)
    path = tree.path()
    loaded = time.perf_counter()
    data = path_data(tree)
    built = time.perf_counter()
    bench.view.set_history(data)
    painted = await bench.watch.painted()
    await asyncio.sleep(SETTLE_S)
    stall = bench.heartbeat.longest_gap(start, painted)
    assert bench.view.message_count() == len(path), "the transcript lost messages"
    target = path[max(0, len(path) - 1 - SCROLL_BACK)].id
    jump = time.perf_counter()
    assert bench.view.scroll_to(target), "scroll_to did not find the message"
    shown = await bench.watch.painted()
    await asyncio.sleep(SETTLE_S)
    assert bench.view.view_for(target) is not None, "the message scrolled to has no widget"
    return Sample(
        load=loaded - start,
        data=built - loaded,
        history=painted - built,
        total=painted - start,
        stall=stall,
        scroll=shown - jump,
        scroll_stall=bench.heartbeat.longest_gap(jump, shown),
    )


def median_sample(samples: list[Sample]) -> Sample:
    def med(field: Callable[[Sample], float]) -> float:
        return statistics.median(field(s) for s in samples)

    return Sample(
        load=med(lambda s: s.load),
        data=med(lambda s: s.data),
        history=med(lambda s: s.history),
        total=med(lambda s: s.total),
        stall=med(lambda s: s.stall),
        scroll=med(lambda s: s.scroll),
        scroll_stall=med(lambda s: s.scroll_stall),
    )


async def measure(small_id: str, large_id: str, *, repeats: int) -> tuple[Sample, Sample]:
    """Median samples (baseline, large): a warm-up of each, then alternating opens."""
    store = await AsyncChatStore.open(default_path())
    view = TranscriptView()
    view.resize(*WINDOW_SIZE)
    view.show()
    heartbeat = Heartbeat()
    bench = Bench(store, view, heartbeat, PaintWatch(view, heartbeat))
    try:
        await open_once(bench, small_id)
        await open_once(bench, large_id)
        small: list[Sample] = []
        large: list[Sample] = []
        for _ in range(repeats):
            small.append(await open_once(bench, small_id))
            large.append(await open_once(bench, large_id))
    finally:
        heartbeat.timer.stop()
        view.close()
        view.deleteLater()
        await asyncio.sleep(SETTLE_S)
        await store.close()
    return median_sample(small), median_sample(large)


# -- report --------------------------------------------------------------------------------------


def report(base: Sample, large: Sample, *, messages: int) -> None:
    back = f"{min(SCROLL_BACK, messages - 1):,} back (base {BASELINE_MESSAGES - 1})"
    rows: list[tuple[str, str, Callable[[Sample], float]]] = [
        ("(a)", "load_tree + path()", lambda s: s.load),
        ("", "PathView for the path", lambda s: s.data),
        ("(b)", "set_history -> first page painted", lambda s: s.history),
        ("", "whole open: load -> painted", lambda s: s.total),
        ("(c)", f"longest GUI stall during open ({HEARTBEAT_MS} ms beat)", lambda s: s.stall),
        ("(d)", f"scroll_to {back} -> painted", lambda s: s.scroll),
        ("", "longest GUI stall during scroll_to", lambda s: s.scroll_stall),
    ]
    small_label, large_label = f"{BASELINE_MESSAGES} msgs", f"{messages:,} msgs"
    print(f"{'':<52} {small_label:>10} {large_label:>12} {'ratio':>8}")
    grown: list[str] = []
    for tag, name, field in rows:
        ratio = field(large) / field(base)
        before, after = field(base) * 1000, field(large) * 1000
        print(f"{tag:<3} {name:<48} {before:7.1f} ms {after:9.1f} ms {ratio:7.1f}x")
        if ratio >= GROWN_RATIO:
            grown.append(tag or name)
    note = f"; here >= {GROWN_RATIO}x: {', '.join(grown)}" if grown else ""
    print(f"ratio near 1 means opening cost does not grow with history{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # closing the view must not stop the loop
    apply_theme(app, "light")
    with tempfile.TemporaryDirectory() as home:
        os.environ[HOME_ENV] = home
        small = build_tree(BASELINE_MESSAGES, title="Baseline")
        large = build_tree(args.messages, title="Long history")
        default_path().parent.mkdir(parents=True, exist_ok=True)
        with ChatStore(default_path()) as store:
            store.insert_trees([small, large])
        size = sum(len(m.content) for m in large) / 1e6
        print(
            f"{len(large):,} stored messages ({size:.1f} MB of text, path {len(large.path()):,}) "
            f"vs {BASELINE_MESSAGES}; median of {args.repeats} opens, offscreen "
            f"{WINDOW_SIZE[0]}x{WINDOW_SIZE[1]}",
            flush=True,
        )
        with asyncio.Runner(loop_factory=lambda: FlareEventLoop(app)) as runner:
            base, long = runner.run(
                measure(small.conversation.id, large.conversation.id, repeats=args.repeats)
            )
    report(base, long, messages=args.messages)


if __name__ == "__main__":
    main()

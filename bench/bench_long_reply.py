"""Benchmark: the GUI thread's longest stall while a 1 MB / 5 MB reply streams into TranscriptView.

Deltas arrive DELTA_CHARS at a time; every DELTAS_PER_FLUSH deltas the view flushes (as its
33 ms timer would at a fast model's rate) and Qt lays out and paints (processEvents). Each
flush-plus-paint is timed; the longest one (and the 99th percentile) is the longest stall a
user would feel. As in the window (where it starts while the first message is typed), Markdown
and highlighting are warmed up first, and a short reply with code streams before the long one,
so one-time costs (imports, lexers, fonts) are not counted as a stall of the long one.
Baseline: a bare QTextEdit that appends the same text as plain text (no Markdown at all).
A stall counts only the time the thread was not waiting for a CPU (Linux schedstat, as the
fault suite's heartbeat does), so other work on a busy machine does not look like a freeze.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_long_reply.py [--sizes 1000000 5000000]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QTextEdit

from flarechat.ui.shared.theme import apply_theme
from flarechat.ui.transcript.message_view import MessageData
from flarechat.ui.transcript.transcript import TranscriptView
from flarechat.ui.transcript.warm_up import warm_up_in_background

_SCHEDSTAT = Path("/proc/thread-self/schedstat")
DEFAULT_SIZES = (1_000_000, 5_000_000)
WARM_UP_CHARS = 2_000
DELTA_CHARS = 40
DELTAS_PER_FLUSH = 25
WINDOW_SIZE = (900, 700)
MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
SECTION = """## Section {n}

Workers AI streams each reply as server-sent events; a renderer that redoes all the work per
event spends most of its time on text it already showed. Keep `settled` blocks, re-render the tail.

| Model | TTFT | tok/s |
|:--|--:|--:|
| llama-3.3-70b | 0.4{n} s | 3{n} |

- buffer deltas for ~33 ms
- highlight code when its fence closes

```python
def step_{n}(x):
    return x * {n}
```

"""


def reply_text(size: int) -> str:
    parts: list[str] = []
    total = n = 0
    while total < size:
        part = SECTION.format(n=n)
        parts.append(part)
        total += len(part)
        n += 1
    return "".join(parts)[:size]


def runqueue_wait() -> float:
    """Seconds this thread has waited for a CPU while ready to run (0 where unknown)."""
    try:
        return int(_SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def stream(
    app: QApplication, text: str, *, feed: Callable[[str], None], flush: Callable[[], None]
) -> tuple[float, float, float]:
    """(total seconds, longest flush+paint, 99th percentile) for ``text`` fed in deltas."""
    stalls: list[float] = []
    start = time.perf_counter()
    for index, offset in enumerate(range(0, len(text), DELTA_CHARS), 1):
        feed(text[offset : offset + DELTA_CHARS])
        if index % DELTAS_PER_FLUSH == 0 or offset + DELTA_CHARS >= len(text):
            began, waited = time.perf_counter(), runqueue_wait()
            flush()
            app.processEvents()
            stalls.append(time.perf_counter() - began - (runqueue_wait() - waited))
    stalls.sort()
    p99 = stalls[min(len(stalls) - 1, len(stalls) * 99 // 100)]
    return time.perf_counter() - start, stalls[-1], p99


def run_transcript(app: QApplication, text: str) -> tuple[float, float, float, float]:
    view = TranscriptView()
    view.resize(*WINDOW_SIZE)
    view.show()
    app.processEvents()
    view.begin_reply("warm-up", model=MODEL)
    view.append_text("warm-up", reply_text(WARM_UP_CHARS))
    view.flush()
    app.processEvents()
    view.begin_reply("r", model=MODEL)
    total, longest, p99 = stream(
        app, text, feed=lambda d: view.append_text("r", d), flush=view.flush
    )
    began = time.perf_counter()
    view.finish_reply("r", MessageData(id="r", role="assistant", content=text, model=MODEL))
    app.processEvents()
    finish = time.perf_counter() - began
    body = view.view_for("r")
    while body is not None and body.body.is_rendering():
        began = time.perf_counter()
        app.processEvents()
        finish = max(finish, time.perf_counter() - began)
    view.close()
    return total, longest, p99, finish


def run_baseline(app: QApplication, text: str) -> tuple[float, float, float]:
    edit = QTextEdit()
    edit.setReadOnly(True)
    edit.resize(*WINDOW_SIZE)
    edit.show()
    app.processEvents()
    pending: list[str] = []

    def flush() -> None:
        cursor = edit.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText("".join(pending))
        pending.clear()

    result = stream(app, text, feed=pending.append, flush=flush)
    edit.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    warm_up_in_background().join()
    print(f"{DELTA_CHARS}-char deltas, a flush + paint every {DELTAS_PER_FLUSH} deltas", flush=True)
    for size in args.sizes:
        text = reply_text(size)
        total, longest, p99, finish = run_transcript(app, text)
        base_total, base_longest, base_p99 = run_baseline(app, text)
        print(
            f"{size / 1e6:.1f} MB  transcript: {total:6.1f} s, "
            f"longest stall {longest * 1000:6.1f} ms (p99 {p99 * 1000:5.1f}), "
            f"finish {finish * 1000:6.1f} ms | bare QTextEdit append: {base_total:6.1f} s, "
            f"longest stall {base_longest * 1000:6.1f} ms (p99 {base_p99 * 1000:5.1f})",
            flush=True,
        )


if __name__ == "__main__":
    main()

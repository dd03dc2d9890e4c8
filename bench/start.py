"""Start-up: process start to the main window's first paint, and idle memory, vs a bare window.

Each run is a fresh process; its first paint is reported through FLARECHAT_BENCH_PAINT_FILE
(flarechat.ui.app.FirstPaint, bench/bare_window.py) as ``time.monotonic()``, compared with the
monotonic time taken just before the process was spawned. Idle RSS is VmRSS from
/proc/<pid>/status IDLE_S after the first paint. Runs alternate bare / fresh profile / large
profile (200 conversations, the newest with 5,000 messages, generated once per bench run).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import Result, median
from profiles import HOME_ENV, make_profile

__all__ = ["run"]

BENCH_DIR = Path(__file__).resolve().parent
PAINT_ENV = "FLARECHAT_BENCH_PAINT_FILE"
REPEATS, QUICK_REPEATS = 10, 3
#: How long after the first paint the idle memory is read.
IDLE_S = 5.0
POLL_S = 0.002
#: A window that never paints is broken, not slow.
PAINT_TIMEOUT_S = 60.0
EXIT_TIMEOUT_S = 15.0
LARGE_CONVERSATIONS, LARGE_MESSAGES, LARGE_LAST = 200, 40, 5_000
TARGET_START_RATIO = 2.5
TARGET_RSS_RATIO = 1.8


@dataclass(frozen=True, slots=True)
class Launch:
    """One process: seconds from spawn to first paint, and idle VmRSS in KiB."""

    paint_s: float
    rss_kib: float


def _rss_kib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def _wait_paint(paint_file: Path, proc: subprocess.Popen[bytes]) -> float:
    deadline = time.monotonic() + PAINT_TIMEOUT_S
    while time.monotonic() < deadline:
        text = paint_file.read_text() if paint_file.exists() else ""
        if text.endswith("\n"):
            return float(text.split()[0])
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before its first paint")
        time.sleep(POLL_S)
    raise RuntimeError("no first paint within the timeout")


def _environment(paint_file: Path, pycache: Path) -> dict[str, str]:
    """Offscreen, and bytecode cached as an installed app has it (the dev shell may set
    PYTHONDONTWRITEBYTECODE, which would add compiling every module to each start)."""
    env = {**os.environ, PAINT_ENV: str(paint_file), "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def launch(argv: list[str], *, home: Path | None, pycache: Path) -> Launch:
    """Spawn ``argv``, time its first paint, read its idle RSS, then stop it with SIGTERM."""
    with tempfile.TemporaryDirectory() as tmp:
        paint_file = Path(tmp) / "paint"
        env = _environment(paint_file, pycache)
        if home is not None:
            env[HOME_ENV] = str(home)
        start = time.monotonic()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            painted = _wait_paint(paint_file, proc)
            time.sleep(IDLE_S)
            rss = _rss_kib(proc.pid)
        except BaseException:
            proc.kill()
            _out, err = proc.communicate()
            sys.stderr.write(err.decode(errors="replace")[-2000:])
            raise
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        return Launch(painted - start, rss)


def run(quick: bool) -> list[Result]:
    repeats = QUICK_REPEATS if quick else REPEATS
    bare_argv = [sys.executable, str(BENCH_DIR / "bare_window.py")]
    app_argv = [sys.executable, "-m", "flarechat"]
    with tempfile.TemporaryDirectory() as large_home, tempfile.TemporaryDirectory() as pyc:
        pycache = Path(pyc)
        make_profile(
            Path(large_home),
            conversations=LARGE_CONVERSATIONS,
            messages=LARGE_MESSAGES,
            last_messages=LARGE_LAST,
        )
        bare: list[Launch] = []
        fresh: list[Launch] = []
        large: list[Launch] = []
        # Warm-ups: fill the bytecode cache and the page cache for both.
        launch(app_argv, home=Path(large_home), pycache=pycache)
        launch(bare_argv, home=None, pycache=pycache)
        for _ in range(repeats):
            bare.append(launch(bare_argv, home=None, pycache=pycache))
            with tempfile.TemporaryDirectory() as fresh_home:
                fresh.append(launch(app_argv, home=Path(fresh_home), pycache=pycache))
            large.append(launch(app_argv, home=Path(large_home), pycache=pycache))
    paint = {k: median(x.paint_s * 1000 for x in v) for k, v in _named(bare, fresh, large)}
    rss = {k: median(x.rss_kib / 1024 for x in v) for k, v in _named(bare, fresh, large)}
    note = f"median of {repeats} alternating runs vs a bare QMainWindow"
    return [
        Result(
            "start.first_paint.fresh",
            paint["fresh"],
            paint["bare"],
            TARGET_START_RATIO,
            "ms",
            note=note,
        ),
        Result(
            "start.first_paint.200conv",
            paint["large"],
            paint["bare"],
            TARGET_START_RATIO,
            "ms",
            note=note,
        ),
        Result(
            "start.idle_rss.fresh",
            rss["fresh"],
            rss["bare"],
            TARGET_RSS_RATIO,
            "MiB",
            note=f"VmRSS {IDLE_S:.0f} s after show; {note}",
        ),
        Result(
            "start.idle_rss.200conv",
            rss["large"],
            rss["bare"],
            TARGET_RSS_RATIO,
            "MiB",
            note=f"VmRSS {IDLE_S:.0f} s after show; {note}",
        ),
    ]


def _named(
    bare: list[Launch], fresh: list[Launch], large: list[Launch]
) -> list[tuple[str, list[Launch]]]:
    return [("bare", bare), ("fresh", fresh), ("large", large)]

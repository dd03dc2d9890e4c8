"""The one benchmark command: every benchmark against its same-run baseline, one table.

    python bench/run.py [--quick] [--only NAME ...] [--build]

Each benchmark is a module here with ``run(quick) -> list[Result]``, run in its own process
(a clean QApplication and heap each). Prints name, value, baseline, ratio, target, unit, pass
and writes bench/results.json as ``{name: {"value", "baseline", "ratio", "target", "unit",
"pass", ...}}``. ``--only`` takes benchmark names (start, streaming, switching, search,
experiments, size) or result-name prefixes. Exit code is 0 whatever passes: benchmarks are
reports, not tests.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from common import Result, not_run

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results.json"
BENCHMARKS = ("start", "streaming", "switching", "search", "experiments", "size")
#: Set for the size benchmark by --build (building the bundle takes minutes).
BUILD_ENV = "FLARECHAT_BENCH_BUILD"
CHILD_MARK = "BENCH-RESULTS "


def _run_child(name: str, *, quick: bool) -> list[Result]:
    """Run one benchmark module in a fresh interpreter; a crash becomes a not-run row."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    argv += ["--quick"] if quick else []
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith(CHILD_MARK):
            return [Result(**row) for row in json.loads(line[len(CHILD_MARK) :])]
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
    sys.stderr.write(proc.stderr[-4000:])
    return [not_run(f"{name}.error", target=0, unit="", reason=f"crashed: {tail[0]}")]


def _child(name: str, *, quick: bool) -> None:
    module = importlib.import_module(name)
    try:
        results: list[Result] = module.run(quick)
    except Exception as error:  # noqa: BLE001 - the table reports it, the other benchmarks run
        traceback.print_exc()
        results = [not_run(f"{name}.error", target=0, unit="", reason=repr(error)[:200])]
    rows = [
        {f: getattr(r, f) for f in ("name", "value", "baseline", "target", "unit", "check")}
        | {"note": r.note, "ran": r.ran}
        for r in results
    ]
    sys.stdout.write(CHILD_MARK + json.dumps(rows) + "\n")


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3g}" if abs(value) < 10 else f"{value:,.0f}"


def print_table(results: list[Result]) -> None:
    head = ("name", "value", "baseline", "ratio", "target", "unit", "pass")
    rows = [
        (
            r.name,
            _fmt(r.value),
            _fmt(r.baseline),
            _fmt(r.ratio),
            ("≤" + _fmt(r.target) + ("x" if r.check == "ratio" else "")),
            r.unit,
            "yes" if r.passed else ("NOT RUN" if not r.ran else "NO"),
        )
        for r in results
    ]
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head))]
    for row in [head, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    notes = [f"  {r.name}: {r.note}" for r in results if r.note]
    if notes:
        print("notes:")
        print("\n".join(notes))


def _selected(only: list[str]) -> tuple[list[str], list[str]]:
    """Benchmarks to run, and result-name prefixes to keep (empty: keep all)."""
    if not only:
        return list(BENCHMARKS), []
    names = [n for n in BENCHMARKS if any(o == n or o.startswith(n + ".") for o in only)]
    unknown = [o for o in only if o.split(".")[0] not in BENCHMARKS]
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {unknown}; choose from {', '.join(BENCHMARKS)}")
    return names, [o for o in only if "." in o]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (3 per measure)")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME")
    parser.add_argument("--build", action="store_true", help="build the bundle for 'size'")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, quick=args.quick)
        return 0
    if args.build:
        os.environ[BUILD_ENV] = "1"
    names, prefixes = _selected(args.only)
    results: list[Result] = []
    for name in names:
        began = time.monotonic()
        print(f"running {name}…", file=sys.stderr, flush=True)
        found = _run_child(name, quick=args.quick)
        results += [r for r in found if not prefixes or r.name.startswith(tuple(prefixes))]
        print(f"  {name}: {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    print_table(results)
    RESULTS.write_text(json.dumps({r.name: r.as_json() for r in results}, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""bench/run.py runs end to end and writes results.json in the documented shape.

Only the shape is checked: benchmark figures are reports, never part of the suite's pass/fail.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "bench" / "run.py"
RESULTS = ROOT / "bench" / "results.json"
KEYS = {"value", "baseline", "ratio", "target", "unit", "pass"}
#: The cheapest benchmark: it reads sizes of what packaging/out holds, builds nothing.
CHEAP = "size"


def test_quick_run_of_one_benchmark_writes_results_in_shape(tmp_path: Path) -> None:
    before = RESULTS.read_bytes() if RESULTS.exists() else None
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FLARECHAT_HOME": str(tmp_path)}
    try:
        proc = subprocess.run(
            [sys.executable, str(RUN), "--quick", "--only", CHEAP],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        results = json.loads(RESULTS.read_text("utf-8"))
    finally:
        if before is not None:  # leave the last full run's table in place
            RESULTS.write_bytes(before)
    assert results, "no results written"
    for name, row in results.items():
        assert name.startswith(f"{CHEAP}."), name
        assert set(row) >= KEYS, f"{name} lacks {KEYS - set(row)}"
        assert isinstance(row["pass"], bool)
        assert isinstance(row["unit"], str)
        assert isinstance(row["target"], int | float)
        for key in ("value", "baseline", "ratio"):
            assert row[key] is None or isinstance(row[key], int | float), (name, key)
        assert name in proc.stdout, "the table does not list the measure"


def test_only_takes_a_switching_row_by_its_name() -> None:
    """``--only switching.reopen_5000`` runs the switching benchmark and keeps that row."""
    sys.path.insert(0, str(RUN.parent))  # bench/run.py imports its neighbours by name
    try:
        run = importlib.import_module("run")
        names, prefixes = run._selected(["switching.reopen_5000"])
    finally:
        sys.path.remove(str(RUN.parent))
    assert names == ["switching"]
    assert prefixes == ["switching.reopen_5000"]
    assert '"switching.reopen_5000"' in (RUN.parent / "switching.py").read_text("utf-8")

"""A Python snippet run in a fresh, offscreen interpreter: for what only a new process shows
(import order, classes PySide6 has not made yet); its stdout, or the test fails with stderr."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["FRESH_TIMEOUT_S", "run_fresh"]

#: A new interpreter importing PySide6 on a busy machine.
FRESH_TIMEOUT_S = 120


def run_fresh(script: str, *args: str) -> str:
    """Run ``python -c script args`` with QT_QPA_PLATFORM=offscreen; what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=FRESH_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout

"""The SIGKILL driver: run the real app (``python -m flarechat``, offscreen, its own profile) as
a subprocess, kill it mid-reply, and read back what its database kept."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from flarechat.emulator import DEMO_ACCOUNT_ID

__all__ = [
    "PATIENCE",
    "SavedRow",
    "app_env",
    "running_app",
    "runqueue_wait",
    "saved_rows",
    "sigkill",
]

NS_PER_S = 1e9
#: Bound on waiting for the app to start or die (never a timing assertion).
PATIENCE = 60.0
APP = (sys.executable, "-m", "flarechat")
Output = int | IO[bytes] | None


@dataclass(frozen=True)
class SavedRow:
    id: str
    role: str
    content: str
    status: str


def app_env(profile: Path, api_base: str, *, token: str, autosend: str) -> dict[str, str]:
    """The app's environment: its own profile, no keychain, this server, and
    FLARECHAT_TEST_AUTOSEND (a test-only hook) so the window sends ``autosend`` at start."""
    env = dict(os.environ)
    env.update(
        {
            "FLARECHAT_HOME": str(profile),
            "QT_QPA_PLATFORM": "offscreen",
            "LANG": "C.UTF-8",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "CLOUDFLARE_ACCOUNT_ID": DEMO_ACCOUNT_ID,
            "CLOUDFLARE_API_TOKEN": token,
            "FLARECHAT_API_BASE": api_base,
            "FLARECHAT_TEST_AUTOSEND": autosend,
        }
    )
    return env


@contextmanager
def running_app(
    env: dict[str, str], *, stdout: Output = subprocess.DEVNULL, stderr: Output = subprocess.DEVNULL
) -> Iterator[subprocess.Popen[bytes]]:
    """The app as a subprocess; killed on the way out if the test left it running (a failed
    assertion must not leave a window behind), its pipes closed and its exit reaped."""
    with subprocess.Popen(APP, env=env, stdout=stdout, stderr=stderr) as app:
        try:
            yield app
        finally:
            if app.poll() is None:
                app.kill()


def sigkill(app: subprocess.Popen[bytes]) -> None:
    """Kill the app outright, as a power cut or the OOM killer would."""
    app.send_signal(signal.SIGKILL)
    assert app.wait(PATIENCE) == -signal.SIGKILL


def runqueue_wait(pid: int) -> float:
    """Seconds the process's threads have spent runnable but waiting for a CPU, summed.

    On an idle machine this barely moves; when other jobs hold the CPUs it is the time the app
    could not run, which a bound measured on the wall clock must not blame on the app. Summed
    over threads, it is an upper bound (threads can wait at once). Threads that end between
    listing and reading are skipped. Linux's /proc/<pid>/task/<tid>/schedstat, field 2 (ns).
    """
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(task.read_text().split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return total / NS_PER_S


def saved_rows(db: Path) -> list[SavedRow]:
    """Every message the database holds, in order, after checking the file is sound."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute("SELECT id, role, content, status FROM messages ORDER BY seq")
        return [SavedRow(*(str(value) for value in row)) for row in rows.fetchall()]
    finally:
        conn.close()

"""Nothing is lost: SIGKILL the app while a reply streams; the saved part survives the restart.

The app runs in a subprocess (offscreen, its own FLARECHAT_HOME) against a standalone emulator
subprocess that streams slowly. FLARECHAT_TEST_AUTOSEND (a test-only hook) makes the window
send one message at start.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat.core.store import DB_FILENAME, open_store
from support.kill import app_env, running_app, saved_rows, sigkill

pytestmark = pytest.mark.slow

PROMPT = "Please explain AI Gateway caching in detail."
TOKEN = "tok-durability-5c1e7d2b9a40"
#: Slow enough that the kill lands mid-reply, fast enough to save a batch within a second.
EMULATOR_TPS = "6"
STARTUP_TIMEOUT = 30.0
STREAM_TIMEOUT = 60.0
POLL = 0.1
#: Bound on an orderly shutdown after SIGTERM (never a timing assertion).
SHUTDOWN_TIMEOUT = 60.0


@pytest.fixture
def slow_emulator() -> Iterator[str]:
    """A standalone emulator process; yields its API base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "flarechat.emulator", "--port", "0", "--tps", EMULATOR_TPS],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        api_base = ""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not api_base and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            if line.strip().startswith("FLARECHAT_API_BASE="):
                api_base = line.strip().split("=", 1)[1]
        assert api_base, "the emulator did not start"
        yield api_base
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def _partial_reply(db: Path) -> tuple[str, str] | None:
    """(status, content) of the streaming assistant row once it has saved text, else None."""
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT status, content FROM messages WHERE role = 'assistant'"
        ).fetchone()
    except sqlite3.Error:  # not created yet, or mid-migration: look again
        return None
    finally:
        conn.close()
    if row is None or not row[1]:
        return None
    return str(row[0]), str(row[1])


def _wait_for_partial(app: subprocess.Popen[bytes], db: Path) -> tuple[str, str]:
    deadline = time.monotonic() + STREAM_TIMEOUT
    while time.monotonic() < deadline:
        assert app.poll() is None, "the app exited before the reply streamed"
        found = _partial_reply(db)
        if found is not None:
            return found
        time.sleep(POLL)
    raise AssertionError("no partial reply was saved")


def test_sigkill_while_streaming_keeps_the_saved_reply(slow_emulator: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    db = profile / "data" / DB_FILENAME
    env = app_env(profile, slow_emulator, token=TOKEN, autosend=PROMPT)
    with (
        (tmp_path / "app.log").open("wb") as log,
        running_app(env, stdout=log, stderr=subprocess.STDOUT) as app,
    ):
        status, seen = _wait_for_partial(app, db)
        assert status == "streaming"
        sigkill(app)
    store = open_store(db)
    try:
        assert store.report.interrupted == 1
        assert store.check_integrity() == []
        (summary,) = store.list_conversations()
        user, reply = store.load_tree(summary.id).path()
        assert (user.role, user.content, user.status) == ("user", PROMPT, "done")
        assert reply.role == "assistant"
        assert reply.status == "interrupted"
        assert reply.content.startswith(seen)  # at least what we saw saved, never less
    finally:
        store.close()
    assert saved_rows(db)  # the file itself passes SQLite's own integrity check
    profile_text = b"".join(p.read_bytes() for p in profile.rglob("*") if p.is_file())
    assert TOKEN.encode() not in profile_text


def test_sigterm_while_streaming_shuts_down_in_order(slow_emulator: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    db = profile / "data" / DB_FILENAME
    env = app_env(profile, slow_emulator, token=TOKEN, autosend=PROMPT)
    with running_app(env, stderr=subprocess.PIPE) as app:
        _wait_for_partial(app, db)
        app.send_signal(signal.SIGTERM)
        _, errors = app.communicate(timeout=SHUTDOWN_TIMEOUT)
    assert app.returncode == 0, errors.decode(errors="replace")
    assert b"Traceback" not in errors
    store = open_store(db)
    try:
        assert store.report.interrupted == 0  # nothing was left half-written
        (summary,) = store.list_conversations()
        reply = store.load_tree(summary.id).path()[-1]
        assert reply.status == "stopped"
        assert reply.content
    finally:
        store.close()
    assert (profile / "config" / "settings.json").is_file()  # saved on the way out

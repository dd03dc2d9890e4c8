"""SIGKILL the real window again and again at random moments of a paced stream, pauses included:
no committed message is ever lost, and each kill loses at most 0.5 s of the reply.

The app (``python -m flarechat``, offscreen, FLARECHAT_TEST_AUTOSEND) streams from the suite's
hostile server, which sends one word every ``PACE`` seconds with a long pause, and notes when
each word left. After a kill the saved reply is compared with what had been sent: the words
sent more than ``SAVE_EVERY`` (+ one word of slack) before the kill must all be saved.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hostile import HostileServer, http_head
from leaks import assert_no_secret

from flarechat.core.store import DB_FILENAME
from flarechat.emulator import DEMO_ACCOUNT_ID

pytestmark = pytest.mark.slow

KILLS = 20
TOKEN = "tok-sigkill-loop-5d8e1a"
PROMPT = "Tell me a long story, slowly."
#: Seconds between two words of the reply, and the pause in the middle of it.
PACE = 0.1
PAUSE_AFTER = 8  # words before the pause
PAUSE = 1.2
WORDS = 40
#: The app saves streamed text at least this often (issue 13: at most 0.5 s lost per kill).
SAVE_EVERY = 0.5
#: Waits for the app to start or die (never a timing assertion).
PATIENCE = 60.0
SEED = 13


@dataclass
class Stream:
    """What the server sent on one chat request: each word and when it left."""

    sent: list[tuple[float, str]] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    paused: threading.Event = field(default_factory=threading.Event)

    def text_until(self, moment: float) -> str:
        return "".join(word for at, word in list(self.sent) if at <= moment)


class PacedServer:
    """The hostile server's script: GETs get a 503 (the app falls back to its catalogue); each
    POST streams ``WORDS`` words at ``PACE`` with a ``PAUSE``, recording a :class:`Stream`."""

    def __init__(self) -> None:
        self.streams: list[Stream] = []
        self.new_stream = threading.Event()

    async def __call__(
        self, server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head = await server.read_request(reader)
        if not head.startswith(b"POST "):
            body = b'{"success": false, "errors": [{"code": 7000, "message": "busy"}]}'
            writer.write(http_head(503, {"content-length": str(len(body))}) + body)
            await writer.drain()
            return
        stream = Stream()
        self.streams.append(stream)
        self.new_stream.set()
        writer.write(http_head(200, {"content-type": "text/event-stream", "connection": "close"}))
        for index in range(WORDS):
            if index == PAUSE_AFTER:
                stream.paused.set()
                await asyncio.sleep(PAUSE)
            word = f"w{index:02d} "
            writer.write(f"data: {json.dumps({'response': word})}\n\n".encode())
            await writer.drain()
            stream.sent.append((time.monotonic(), word))
            stream.started.set()
            await asyncio.sleep(PACE)
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()


def _env(profile: Path, api_base: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "FLARECHAT_HOME": str(profile),
            "QT_QPA_PLATFORM": "offscreen",
            "LANG": "C.UTF-8",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "CLOUDFLARE_ACCOUNT_ID": DEMO_ACCOUNT_ID,
            "CLOUDFLARE_API_TOKEN": TOKEN,
            "FLARECHAT_API_BASE": api_base,
            "FLARECHAT_TEST_AUTOSEND": PROMPT,
        }
    )
    return env


def _rows(db: Path) -> list[tuple[str, str, str, str]]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = conn.execute("SELECT id, role, content, status FROM messages ORDER BY seq")
        return [(str(i), str(r), str(c), str(s)) for i, r, c, s in rows.fetchall()]
    finally:
        conn.close()


def _kill_moment(stream: Stream, rng: random.Random, kill: int) -> None:
    """Wait (on the server's own signals) for a random moment of the stream: every third kill
    lands inside the pause, well after the last word before it."""
    assert stream.started.wait(PATIENCE), "the stream never started"
    if kill % 3 == 0:
        assert stream.paused.wait(PATIENCE), "the stream never paused"
        time.sleep(rng.uniform(SAVE_EVERY + PACE, PAUSE - PACE))
    else:
        time.sleep(rng.uniform(0.0, PAUSE_AFTER * PACE + PAUSE + 0.3))


def test_twenty_sigkills_lose_no_message_and_at_most_half_a_second_of_reply(
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    profile = tmp_path / "profile"
    db = profile / "data" / DB_FILENAME
    paced = PacedServer()
    committed: dict[str, str] = {}  # user message id -> text, once seen on disk
    with HostileServer(paced) as server:
        for kill in range(KILLS):
            paced.new_stream.clear()
            app = subprocess.Popen(
                [sys.executable, "-m", "flarechat"],
                env=_env(profile, server.api_base),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                assert paced.new_stream.wait(PATIENCE), "the app never sent its message"
                stream = paced.streams[-1]
                _kill_moment(stream, rng, kill)
                killed_at = time.monotonic()
                app.send_signal(signal.SIGKILL)
                assert app.wait(PATIENCE) == -signal.SIGKILL
            finally:
                if app.poll() is None:
                    app.kill()
                    app.wait()
            rows = _rows(db)
            users = {i: c for i, r, c, _s in rows if r == "user"}
            lost = {i for i in committed if committed[i] != users.get(i)}
            assert not lost, f"kill {kill}: committed user messages lost: {lost}"
            committed.update(users)
            assert PROMPT in users.values()
            reply = [c for _i, r, c, _s in rows if r == "assistant"][-1]
            sent = stream.text_until(killed_at)
            must_have = stream.text_until(killed_at - SAVE_EVERY - PACE)
            assert sent.startswith(reply), f"kill {kill}: saved text was never sent: {reply!r}"
            assert reply.startswith(must_have), (
                f"kill {kill}: more than {SAVE_EVERY} s of reply lost: saved {len(reply)} "
                f"chars of {len(sent)} sent, {len(must_have)} sent over {SAVE_EVERY} s before"
            )
    assert len(committed) == KILLS
    assert_no_secret(TOKEN, paths=[profile])

"""SIGKILL the real window again and again at random moments of a paced stream, pauses included:
no committed message is ever lost, and each kill loses at most 0.5 s of the reply.

The app (``python -m flarechat``, offscreen, FLARECHAT_TEST_AUTOSEND) streams from the suite's
hostile server, which sends one word every ``PACE`` seconds with a long pause, and notes when
each word left. After a kill the saved reply is compared with what had been sent: the words
sent more than ``SAVE_EVERY`` (+ one word of slack) before the kill must all be saved. That span
is measured in the app's own time: the wall clock less the time the app sat waiting for a CPU
(from /proc), so other jobs on the machine cannot fail the test, while on an idle machine the
bound is the wall-clock one.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from leaks import assert_no_secret

from flarechat.core.store import DB_FILENAME
from support.hostile import HostileServer, http_head, sse_data
from support.kill import PATIENCE, app_env, running_app, runqueue_wait, saved_rows, sigkill

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
SEED = 13


@dataclass(frozen=True)
class Moment:
    """A moment on two clocks: the wall clock, and the time the app had spent waiting for a CPU
    by then (:func:`runqueue_wait`), so a span can be measured in the app's own time."""

    at: float
    app_waited: float

    @classmethod
    def now(cls, app_pid: int) -> Moment:
        return cls(time.monotonic(), runqueue_wait(app_pid))

    def app_time_until(self, later: Moment) -> float:
        """Seconds from this moment to ``later`` that the app could run: other jobs holding the
        machine's CPUs are not the app's fault (on an idle machine, the wall-clock span)."""
        return (later.at - self.at) - (later.app_waited - self.app_waited)


@dataclass
class Stream:
    """What the server sent to one app on one chat request: each word and when it left."""

    app_pid: int
    sent: list[tuple[Moment, str]] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    paused: threading.Event = field(default_factory=threading.Event)

    def text_until(self, moment: float) -> str:
        return "".join(word for at, word in list(self.sent) if at.at <= moment)

    def text_older_than(self, span: float, killed: Moment) -> str:
        """The words sent over ``span`` of the app's own time before ``killed``, and those
        before them (what is saved is a prefix of the reply)."""
        sent = list(self.sent)
        old = [i for i, (at, _word) in enumerate(sent) if at.app_time_until(killed) > span]
        return "".join(word for _at, word in sent[: max(old, default=-1) + 1])


class PacedServer:
    """The hostile server's script: GETs get a 503 (the app falls back to its catalogue); each
    POST streams ``WORDS`` words at ``PACE`` with a ``PAUSE``, recording a :class:`Stream`.
    ``app_pid`` is the app the next stream goes to."""

    def __init__(self) -> None:
        self.streams: list[Stream] = []
        self.new_stream = threading.Event()
        self.app_pid = 0

    async def __call__(
        self, server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head = await server.read_request(reader)
        if not head.startswith(b"POST "):
            body = b'{"success": false, "errors": [{"code": 7000, "message": "busy"}]}'
            writer.write(http_head(503, {"content-length": str(len(body))}) + body)
            await writer.drain()
            return
        stream = Stream(self.app_pid)
        self.streams.append(stream)
        self.new_stream.set()
        writer.write(http_head(200, {"content-type": "text/event-stream", "connection": "close"}))
        for index in range(WORDS):
            if index == PAUSE_AFTER:
                stream.paused.set()
                await asyncio.sleep(PAUSE)
            word = f"w{index:02d} "
            await server.send(writer, sse_data(word))
            stream.sent.append((Moment.now(stream.app_pid), word))
            stream.started.set()
            await asyncio.sleep(PACE)
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()


def _kill_delay(stream: Stream, rng: random.Random, kill: int) -> float:
    """Wait (on the server's own signals) for the stream to start, and pick a random moment of
    it, in seconds from now: every third kill lands inside the pause, well after the last word
    before it."""
    assert stream.started.wait(PATIENCE), "the stream never started"
    if kill % 3 == 0:
        assert stream.paused.wait(PATIENCE), "the stream never paused"
        return rng.uniform(SAVE_EVERY + PACE, PAUSE - PACE)
    return rng.uniform(0.0, PAUSE_AFTER * PACE + PAUSE + 0.3)


def _kill_after(app: subprocess.Popen[bytes], delay: float) -> Moment:
    time.sleep(delay)
    killed = Moment.now(app.pid)
    sigkill(app)
    return killed


def test_twenty_sigkills_lose_no_message_and_at_most_half_a_second_of_reply(
    tmp_path: Path,
) -> None:
    rng = random.Random(SEED)
    profile = tmp_path / "profile"
    db = profile / "data" / DB_FILENAME
    paced = PacedServer()
    committed: dict[str, str] = {}  # user message id -> text, once seen on disk
    with HostileServer(paced) as server:
        env = app_env(profile, server.api_base, token=TOKEN, autosend=PROMPT)
        for kill in range(KILLS):
            paced.new_stream.clear()
            with running_app(env) as app:
                paced.app_pid = app.pid
                assert paced.new_stream.wait(PATIENCE), "the app never sent its message"
                stream = paced.streams[-1]
                killed = _kill_after(app, _kill_delay(stream, rng, kill))
            rows = saved_rows(db)
            users = {row.id: row.content for row in rows if row.role == "user"}
            lost = {i for i in committed if committed[i] != users.get(i)}
            assert not lost, f"kill {kill}: committed user messages lost: {lost}"
            committed.update(users)
            assert PROMPT in users.values()
            reply = [row.content for row in rows if row.role == "assistant"][-1]
            sent = stream.text_until(killed.at)
            must_have = stream.text_older_than(SAVE_EVERY + PACE, killed)
            assert sent.startswith(reply), f"kill {kill}: saved text was never sent: {reply!r}"
            assert reply.startswith(must_have), (
                f"kill {kill}: more than {SAVE_EVERY} s of reply lost: saved {len(reply)} "
                f"chars of {len(sent)} sent, {len(must_have)} sent over {SAVE_EVERY} s (of the "
                "app's own time) before"
            )
    assert len(committed) == KILLS
    assert_no_secret(TOKEN, paths=[profile])

"""Driving the window through one fault and checking the four promises: a clear message,
a responsive window, nothing lost, no secret anywhere."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from heartbeat import Heartbeat
from leaks import assert_no_secret
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from shell_helpers import TOKEN, ChatEnv, Recorder
from window_helpers import window

from flarechat.emulator import EmulatorServer
from flarechat.ui.transcript.warm_up import warm_up_in_background
from flarechat.ui.window.main_window import MainWindow

__all__ = [
    "DB_NAME",
    "TRACEBACK_WORDS",
    "Outcome",
    "Run",
    "assert_plain",
    "faulty_window",
    "saved",
]

#: chat_env keeps the conversation database here, in the profile folder.
DB_NAME = "chat.sqlite3"
#: What a message meant for people never contains.
TRACEBACK_WORDS = ("Traceback", "Error:", "Exception", 'File "', "errno")


@dataclass
class Outcome:
    """How one reply ended: its final ``data``, and ``kind``/``message`` when it failed."""

    reply_id: str
    data: Any = None
    kind: str | None = None
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Run:
    env: ChatEnv
    main: MainWindow
    seen: Recorder
    heartbeat: Heartbeat
    profile: Path
    #: position in the signal record where the current reply's story starts
    mark: int = 0

    async def send(self, text: str) -> str:
        """Type into the composer and press Enter, as a user would; the reply's id."""
        mark = self.mark = self.env.recorder.mark()
        self.main.pane.composer.set_text(text)
        QTest.keyClick(self.main.pane.composer.editor, Qt.Key.Key_Return)
        started = await self.env.recorder.wait("turn_started", after=mark)
        return str(started[1])

    async def outcome(self, reply_id: str) -> Outcome:
        """Wait for the reply to end (a positive signal, never a sleep); a failed or cut-off
        reply also carries the failure the banner shows. Only what came after the last
        :meth:`send` (or :attr:`mark`) counts."""
        recorder, after = self.env.recorder, self.mark
        args = await recorder.wait("turn_finished", lambda m, _d: m == reply_id, after=after)
        data = args[1]
        if data.status not in ("failed", "interrupted"):
            return Outcome(reply_id, data=data)
        failed = await recorder.wait("turn_failed", lambda m, *_: m == reply_id, after=after)
        _, kind, message, extra = failed
        return Outcome(reply_id, data=data, kind=kind, message=message, extra=extra)

    async def ask(self, text: str) -> Outcome:
        return await self.outcome(await self.send(text))

    def banner(self) -> tuple[str, str]:
        """(title, text) of the banner on show; fails when none is."""
        pane = self.main.pane
        for banner in (pane.retry_banner, pane.notice_banner):
            if banner.isVisible():
                return banner.title, banner.text
        raise AssertionError("no banner is shown")

    def shown(self) -> list[tuple[str, str, str]]:
        return [(m.role, m.content, m.status) for m in self.main.pane.transcript.messages()]

    async def settle(self) -> list[tuple[str, str, str]]:
        """Every reply and store write done; what the database file then holds."""
        await self.env.chat.drain()
        return saved(self.profile / DB_NAME)


def saved(db: Path) -> list[tuple[str, str, str]]:
    """(role, content, status) of every message in the SQLite file, in order."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT role, content, status FROM messages ORDER BY seq").fetchall()
    finally:
        conn.close()
    return [(str(r), str(c), str(s)) for r, c, s in rows]


def assert_plain(*texts: str) -> None:
    """Messages for people: non-empty, and never a traceback or an exception's name."""
    for text in texts:
        assert text.strip()
        for word in TRACEBACK_WORDS:
            assert word not in text, f"{word!r} in {text!r}"


@asynccontextmanager
async def faulty_window(
    emulator: EmulatorServer,
    profile: Path,
    logged: pytest.LogCaptureFixture,
    *,
    texts: Iterable[str] = (),
    **options: Any,
) -> AsyncIterator[Run]:
    """The window (as the UI tests compose it) with a heartbeat running while the test acts;
    afterwards, the profile, the log and the banners are scanned for the token."""
    async with window(emulator, profile, **options) as (env, main, seen):
        # What earlier tests left in this process is not the app's: a full collection of it
        # would stall the GUI thread here, so it is collected now and frozen out of later ones.
        gc.collect()
        gc.freeze()
        # The window loads Markdown and highlighting while the first message is typed
        # (ComposerWidget); a test types instantly, so it waits for that here.
        warm_up_in_background().join()
        run = Run(env, main, seen, Heartbeat().start(), profile)
        try:
            yield run
        finally:
            gc.unfreeze()
        run.heartbeat.assert_responsive()
        await env.chat.drain()
        shown = [main.pane.notice_banner.text, main.pane.retry_banner.text]
        assert_no_secret(
            options.get("token") or TOKEN,
            paths=[profile],
            texts=[logged.text, *shown, *texts],
        )

"""Hostile streams in the window: replies the emulator does not script (a ``<think>`` that never
closes, 10,000 tool calls, a call with 1 MB of arguments…), sent raw by the suite's hostile
server. The reply ends, everything that came is stored whole, what is rendered is capped (with
a way to see the rest), and the window stays responsive and leaks no token.

Case names start with the item of issue 25 they cover (``item6-…``) where there is one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from drive import DB_NAME, Run, faulty_window
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel

from flarechat.emulator import EmulatorServer
from flarechat.ui.shared.capped import RENDERED_CHARS, VIEWER_LINE_CHARS
from flarechat.ui.transcript.message_view import ALL_REASONING_NOTE, MessageView
from support.hostile import HostileServer, chat_replies

pytestmark = pytest.mark.asyncio

#: 5 MB of reasoning, in 100 chunks of 50,000 characters.
THINK_CHUNK = ("a long thought, going on and on " * 1563)[:49_999] + "\n"
THINK_CHUNKS = 100


def _text(text: str) -> bytes:
    return json.dumps({"response": text}).encode()


def _stored(profile: Path, column: str) -> list[str]:
    """``column`` of every assistant message in the database file, in order."""
    conn = sqlite3.connect(f"file:{profile / DB_NAME}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            f"SELECT {column} FROM messages WHERE role = 'assistant' ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return [str(row[0]) for row in rows]


def _view(run: Run, reply_id: str) -> MessageView:
    view = run.main.pane.transcript.view_for(reply_id)
    assert view is not None
    return view


def _marker(view: MessageView) -> str:
    """The muted marker under a message, "" when none is shown."""
    label = view.findChild(QLabel, "statusMarker")
    return label.text() if isinstance(label, QLabel) and label.isVisibleTo(view) else ""


# -- item 8: a <think> that never closes, followed by 5 MB -----------------------------------


async def test_item8_an_unclosed_think_of_5_mb_is_stored_whole_and_rendered_capped(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    reasoning = THINK_CHUNK * THINK_CHUNKS
    stream = [_text("<think>"), *(_text(THINK_CHUNK) for _ in range(THINK_CHUNKS))]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Think?")
            assert outcome.kind is None, outcome
            await run.settle()
            section = _view(run, outcome.reply_id).reasoning
            assert section.text == reasoning
            assert section.expanded  # all there is: shown without a click
            assert 0 < len(section.rendered_text) <= RENDERED_CHARS
            assert reasoning.startswith(section.rendered_text)
            assert section.show_all.isVisibleTo(section)
            assert f"Show all {len(reasoning):,} characters" in section.show_all.text()
            assert _marker(_view(run, outcome.reply_id)) == ALL_REASONING_NOTE
            viewer = section.show_all.open_viewer()
            shown = viewer.view.toPlainText()  # long lines broken for showing, nothing else
            assert shown.replace("\n", "") == reasoning.replace("\n", "")
            assert max(len(line) for line in shown.split("\n")) <= VIEWER_LINE_CHARS
            viewer.copy_all()
            assert QGuiApplication.clipboard().text() == reasoning
            viewer.close()
    assert _stored(isolated_profile, "reasoning") == [reasoning]
    assert _stored(isolated_profile, "content") == [""]


async def test_item8_reasoning_then_an_answer_collapses_and_keeps_both(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    reasoning = THINK_CHUNK * 10
    stream = [_text("<think>"), *(_text(THINK_CHUNK) for _ in range(10)), _text("</think>42")]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Think, then answer")
            assert outcome.kind is None, outcome
            await run.settle()
            view = _view(run, outcome.reply_id)
            assert view.reasoning.text == reasoning
            assert not view.reasoning.expanded
            assert len(view.reasoning.rendered_text) <= RENDERED_CHARS
            assert _marker(view) == ""
            assert ("assistant", "42", "done") in run.shown()
    assert _stored(isolated_profile, "reasoning") == [reasoning]

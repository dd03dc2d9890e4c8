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
from shell_helpers import TOKEN

from flarechat.emulator import EmulatorServer
from flarechat.ui.capabilities.tool_cards import NO_NAME, ToolCallsPanel, pretty_arguments
from flarechat.ui.shared.capped import PAGE_ITEMS, RENDERED_CHARS, VIEWER_LINE_CHARS
from flarechat.ui.transcript.message_view import ALL_REASONING_NOTE, MessageView
from support.hostile import HostileServer, chat_replies

pytestmark = pytest.mark.asyncio

#: 5 MB of reasoning, in 100 chunks of 50,000 characters.
THINK_CHUNK = ("a long thought, going on and on " * 1563)[:49_999] + "\n"
THINK_CHUNKS = 100
MANY_CALLS = 10_000
#: Whole calls in one chunk: reading 500 KB of JSON into 10,000 calls is ~0.1 s of Python on
#: its own (one read, before the window sees any of it), the heartbeat's whole budget.
WHOLE_CALLS = 5_000
BOM = b"\xef\xbb\xbf"
BIG_ARGUMENTS = json.dumps({"blob": "x" * 1_000_000})


def _text(text: str) -> bytes:
    return json.dumps({"response": text}).encode()


def _call(index: int, *, name: str | None, arguments: str, call_id: str | None = None) -> bytes:
    """One streamed OpenAI tool-call fragment (``name``/``call_id`` None: a later fragment)."""
    function: dict[str, str] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    entry: dict[str, object] = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        entry["id"] = call_id
    return json.dumps({"choices": [{"delta": {"tool_calls": [entry]}}]}).encode()


def _streamed_calls(count: int) -> list[bytes]:
    """``count`` calls, each in two fragments: its id and name, then its arguments."""
    out: list[bytes] = []
    for index in range(count):
        out.append(_call(index, name="look", call_id=f"c{index}", arguments=""))
        out.append(_call(index, name=None, arguments=json.dumps({"n": index})))
    return out


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


def _panel(view: MessageView) -> ToolCallsPanel:
    panels = view.findChildren(ToolCallsPanel)
    assert len(panels) == 1
    return panels[0]


def _stored_calls(profile: Path) -> list[dict[str, object]]:
    [calls] = _stored(profile, "tool_calls_json")
    found = json.loads(calls)
    assert isinstance(found, list)
    return found


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


# -- item 6: 10,000 tool calls, or one with 1 MB of arguments --------------------------------


async def _check_a_page_of_many_calls(run: Run, reply_id: str, *, count: int) -> None:
    panel = _panel(_view(run, reply_id))
    assert [card.call.id for card in panel.cards] == [f"c{i}" for i in range(PAGE_ITEMS)]
    assert panel.more_button.isVisibleTo(panel)
    assert f"({count - PAGE_ITEMS:,} not shown)" in panel.more_button.text()
    panel.cards[0].result.setPlainText("typed before Show more")
    panel.show_more()
    assert len(panel.cards) == 2 * PAGE_ITEMS
    assert panel.cards[-1].call.id == f"c{2 * PAGE_ITEMS - 1}"
    assert panel.cards[0].result_text() == "typed before Show more"  # kept, not rebuilt


async def test_item6_10000_streamed_tool_calls_end_all_stored_and_a_page_of_cards_shown(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    stream = [_text("Looking them all up."), *_streamed_calls(MANY_CALLS)]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Look up everything")
            assert outcome.kind is None, outcome
            await run.settle()
            await _check_a_page_of_many_calls(run, outcome.reply_id, count=MANY_CALLS)
    calls = _stored_calls(isolated_profile)
    assert [c["id"] for c in calls] == [f"c{i}" for i in range(MANY_CALLS)]
    assert calls[-1]["arguments"] == json.dumps({"n": MANY_CALLS - 1})


async def test_item6_5000_whole_tool_calls_in_one_chunk_end_all_stored_and_a_page_shown(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    whole = [{"id": f"c{i}", "name": "look", "arguments": {"n": i}} for i in range(WHOLE_CALLS)]
    chunk = json.dumps({"response": "Looking.", "tool_calls": whole}).encode()
    with HostileServer(chat_replies([chunk])) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Look up everything at once")
            assert outcome.kind is None, outcome
            await run.settle()
            await _check_a_page_of_many_calls(run, outcome.reply_id, count=WHOLE_CALLS)
    calls = _stored_calls(isolated_profile)
    assert len(calls) == WHOLE_CALLS
    assert json.loads(str(calls[-1]["arguments"])) == {"n": WHOLE_CALLS - 1}


async def test_item6_a_tool_call_with_1_mb_of_arguments_is_stored_whole_and_shown_capped(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    stream = [_call(0, name="store", call_id="big", arguments=BIG_ARGUMENTS)]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Store this")
            assert outcome.kind is None, outcome
            await run.settle()
            [card] = _panel(_view(run, outcome.reply_id)).cards
            pretty = pretty_arguments(BIG_ARGUMENTS)
            assert card.arguments_text == pretty
            assert 0 < len(card.arguments.text()) <= RENDERED_CHARS
            assert pretty.startswith(card.arguments.text())
            assert card.show_all.isVisibleTo(card)
            viewer = card.show_all.open_viewer()
            assert viewer.view.toPlainText().replace("\n", "") == pretty.replace("\n", "")
            assert viewer.view.font().family() == card.arguments.font().family()  # monospace
            viewer.copy_all()
            assert QGuiApplication.clipboard().text() == pretty
            viewer.close()
    [call] = _stored_calls(isolated_profile)
    assert call["arguments"] == BIG_ARGUMENTS


async def test_a_streamed_tool_call_echoing_the_token_is_stored_and_shown_redacted(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    echo = json.dumps({"query": f"Bearer {TOKEN}", "again": TOKEN})
    stream = [
        _call(0, name="look", call_id="c0", arguments=echo[:20]),
        _call(0, name=None, arguments=echo[20:]),  # the token split across two fragments
    ]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Look?")
            assert outcome.kind is None, outcome
            await run.settle()
            [card] = _panel(_view(run, outcome.reply_id)).cards
            assert "[REDACTED]" in card.arguments_text
            assert TOKEN not in card.arguments_text
    [call] = _stored_calls(isolated_profile)
    assert "[REDACTED]" in str(call["arguments"])


# -- odd tool calls, framing and figures ------------------------------------------------------


async def test_a_tool_call_with_no_name_and_arguments_not_json_is_shown_saying_so(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    stream = [_call(0, name=None, call_id="c0", arguments="{city: Paris")]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Call something")
            assert outcome.kind is None, outcome
            await run.settle()
            [card] = _panel(_view(run, outcome.reply_id)).cards
            title = card.findChild(QLabel, "toolName")
            assert isinstance(title, QLabel)
            assert NO_NAME in title.text()
            assert card.arguments.text() == "{city: Paris"  # as it came
    [call] = _stored_calls(isolated_profile)
    assert (call["name"], call["arguments"]) == ("", "{city: Paris")


async def test_a_byte_order_mark_before_the_stream_loses_no_text_in_the_window(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    with HostileServer(chat_replies([_text("Hello"), _text(" there")], preamble=BOM)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Hi?")
            assert outcome.kind is None, outcome
            rows = await run.settle()
            assert ("assistant", "Hello there", "done") in run.shown()
    assert rows[-1] == ("assistant", "Hello there", "done")


async def test_nul_bytes_in_reply_text_are_stored_and_shown(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    with HostileServer(chat_replies([_text("a\u0000b"), _text(" c")])) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Hi?")
            assert outcome.kind is None, outcome
            rows = await run.settle()
            [(_role, shown, _status)] = [m for m in run.shown() if m[0] == "assistant"]
    assert rows[-1][1] == shown
    assert shown.replace("\x00", "") == "ab c"


async def test_absurd_usage_numbers_never_reach_the_meta_line_or_the_database(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    usage = {"prompt_tokens": -5, "completion_tokens": 10**30, "total_tokens": "many"}
    stream = [_text("Hi"), json.dumps({"response": "", "usage": usage}).encode()]
    with HostileServer(chat_replies(stream)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Hi?")
            assert outcome.kind is None, outcome
            await run.settle()
            meta = _view(run, outcome.reply_id).data.meta_line
            assert meta
            assert "-5" not in meta
            assert "000,000,000" not in meta  # no count past any reply's
    [stored] = _stored(isolated_profile, "usage_json")
    numbers = [v for v in json.loads(stored).values() if isinstance(v, int | float)]
    assert all(0 <= v < 10**12 for v in numbers), stored

"""Hostile streams on the command line: replies the emulator does not script (a ``<think>`` that
never closes, thousands of tool calls, odd SSE framing…), sent raw by the suite's hostile
server. Each ends cleanly, prints what arrived, says what happened and leaks no token.

Case names start with the item of issue 25 they cover (``item8-…``) where there is one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_cli import Run, cli_against_hostile

from support.cli import FAST
from support.hostile import HostileServer, Script, answer, http_head

TOKEN = "tok-faults-stream-9e4d21b7c3"
STREAM_HEAD = {"content-type": "text/event-stream", "connection": "close"}
#: 5 MB of reasoning, in 100 chunks of 50,000 characters.
THINK_CHUNK = ("a long thought, going on and on " * 1563)[:49_999] + "\n"
THINK_CHUNKS = 100


def _sse(*payloads: bytes) -> bytes:
    return http_head(200, STREAM_HEAD) + b"".join(b"data: " + p + b"\n\n" for p in payloads)


def _text(text: str) -> bytes:
    return json.dumps({"response": text}).encode()


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> Iterator[Run]:
    """``run(capsys, server, *argv)``: ``flarechat`` in-process against ``server``; then no
    form of the token in what it printed, logged (at DEBUG) or wrote to the profile."""
    with cli_against_hostile(
        monkeypatch, isolated_profile, logged, token=TOKEN, policy=FAST
    ) as run:
        yield run


# -- item 8: a <think> that never closes -----------------------------------------------------


def _unclosed_think() -> bytes:
    return _sse(_text("<think>"), *(_text(THINK_CHUNK) for _ in range(THINK_CHUNKS)), b"[DONE]")


def test_item8_an_unclosed_think_prints_the_reasoning_labelled_and_says_why_stdout_is_empty(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(_unclosed_think())) as server:
        code, out, err = cli(capsys, server, "ask", "Think?")
    assert code == 0, err[-500:]
    assert out == ""  # stdout is the answer, and there was none
    assert "flarechat: the reply's reasoning (5,000,000 characters):" in err
    assert THINK_CHUNK * THINK_CHUNKS in err  # every character that came
    assert "all reasoning (its <think> block was never closed)" in err


def test_item8_an_unclosed_think_with_show_reasoning_is_printed_once_and_noted(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(_unclosed_think())) as server:
        code, out, err = cli(capsys, server, "ask", "--show-reasoning", "Think?")
    assert code == 0, err[-500:]
    assert out == ""
    assert err.count(THINK_CHUNK) == THINK_CHUNKS  # streamed as it came, not again at the end
    assert "reasoning (5,000,000 characters)" not in err
    assert "all reasoning (its <think> block was never closed)" in err


def test_item8_a_think_opened_across_chunks_and_never_closed_is_still_noted(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(_text(" <th"), _text("ink>"), _text("Pondering"), _text(" </thi"), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Think?")
    assert code == 0, err
    assert out == ""
    assert "Pondering </thi" in err  # a half close tag is reasoning too, kept as it came
    assert "its <think> block was never closed" in err


def test_item8_a_closed_think_with_no_answer_after_it_says_so(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(_text("<think>Hmm, nothing to say.</think>"), _text("  "), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Think?")
    assert code == 0, err
    assert out.strip() == ""
    assert "Hmm, nothing to say." in err
    assert "all reasoning (no answer followed it)" in err


def test_item8_ask_json_keeps_all_the_unclosed_reasoning_in_the_record(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(_unclosed_think())) as server:
        code, out, err = cli(capsys, server, "ask", "--json", "Think?")
    assert code == 0, err
    record = json.loads(out)
    assert record["text"] == ""
    assert record["reasoning"] == THINK_CHUNK * THINK_CHUNKS
    assert record["reasoning_unclosed"] is True


# -- tool calls ----------------------------------------------------------------------------


def _call(index: int, *, name: str | None, arguments: str, call_id: str | None = None) -> bytes:
    """One streamed OpenAI tool-call fragment (``name``/``call_id`` None: a later fragment)."""
    function: dict[str, str] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    entry: dict[str, object] = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        entry["id"] = call_id
    return json.dumps({"choices": [{"delta": {"tool_calls": [entry]}}]}).encode()


def test_a_streamed_tool_call_echoing_the_token_is_printed_redacted(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    echo = json.dumps({"query": f"Bearer {TOKEN}", "again": TOKEN})
    data = _sse(
        _call(0, name="look", call_id="c0", arguments=echo[:20]),
        _call(0, name=None, arguments=echo[20:]),  # the token split across two fragments
        b"[DONE]",
    )
    with HostileServer(answer(data)) as server:
        code, _out, err = cli(capsys, server, "ask", "Look?")
        _code, out_json, _err = cli(capsys, server, "ask", "--json", "Look?")
    assert code == 0, err
    assert "tool call: look(" in err
    assert "[REDACTED]" in err
    [call] = json.loads(out_json)["tool_calls"]
    assert call["name"] == "look"
    assert "[REDACTED]" in json.dumps(call)


def test_item6_10000_streamed_tool_calls_are_each_printed(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []
    for index in range(10_000):
        calls.append(_call(index, name="look", call_id=f"c{index}", arguments=""))
        calls.append(_call(index, name=None, arguments=json.dumps({"n": index})))
    with HostileServer(answer(_sse(*calls, b"[DONE]"))) as server:
        code, _out, err = cli(capsys, server, "ask", "Look everything up")
    assert code == 0, err[-500:]
    lines = [line for line in err.splitlines() if line.startswith("tool call: ")]
    assert len(lines) == 10_000
    assert lines[-1] == 'tool call: look({"n": 9999})'


def test_tool_call_arguments_that_are_not_json_are_printed_as_they_came(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(_call(0, name="look", call_id="c0", arguments="{city: Paris"), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, _out, err = cli(capsys, server, "ask", "Look?")
        _code, out_json, _err = cli(capsys, server, "ask", "--json", "Look?")
    assert code == 0, err
    assert "tool call: look({city: Paris)" in err
    [call] = json.loads(out_json)["tool_calls"]
    assert call["arguments"] == "{city: Paris"


def test_a_tool_call_with_no_name_is_printed_saying_so(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(_call(0, name=None, call_id="c0", arguments='{"q": 1}'), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, _out, err = cli(capsys, server, "ask", "Look?")
    assert code == 0, err
    assert 'tool call with no name: {"q": 1}' in err


# -- SSE framing the emulator never sends ----------------------------------------------------

HELLO = (_text("Hello"), _text(" there"), b"[DONE]")
FRAMINGS = {
    "crlf-line-endings": b"".join(b"data: " + p + b"\r\n\r\n" for p in HELLO),
    "cr-only-line-endings": b"".join(b"data: " + p + b"\r\r" for p in HELLO),
    "mixed-line-endings": b"data: "
    + HELLO[0]
    + b"\r\n\n"
    + b"data: "
    + HELLO[1]
    + b"\r\r"
    + b"data: [DONE]\n\n",
    "byte-order-mark-first": b"\xef\xbb\xbf" + b"".join(b"data: " + p + b"\n\n" for p in HELLO),
    "events-with-no-data": b"event: ping\n\n: keep-alive\n\nid: 7\n\nretry: 10\n\n"
    + b"".join(b"data: " + p + b"\n\n" for p in HELLO),
    "data-without-a-space": b"".join(b"data:" + p + b"\n\n" for p in HELLO),
    "a-body-after-done": b"".join(b"data: " + p + b"\n\n" for p in HELLO)
    + b'data: {"response": " and more"}\n\ngarbage \x00\xff after the end\n\n',
}


@pytest.mark.parametrize("name", list(FRAMINGS))
def test_sse_framings_the_emulator_never_sends_give_the_reply_exactly(
    name: str, cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(http_head(200, STREAM_HEAD) + FRAMINGS[name])) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 0, err
    assert out == "Hello there\n"


def _dribble(data: bytes) -> Script:
    """Read the request, then send ``data`` one byte per write."""

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        for i in range(len(data)):
            await server.send(writer, data[i : i + 1])

    return script


def test_a_stream_sent_one_byte_at_a_time_gives_the_reply_exactly(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(_text("<think>Hm</think>Héllo"), _text(" 🌍 there"), b"[DONE]")
    with HostileServer(_dribble(data)) as server:
        code, out, err = cli(capsys, server, "ask", "--show-reasoning", "Hi?")
    assert code == 0, err
    assert out == "Héllo 🌍 there\n"
    assert "Hm" in err


def test_a_stream_that_closes_cleanly_without_done_keeps_the_text_and_says_it_was_cut(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(_sse(_text("Hello"), _text(" th")))) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 10, err
    assert out.startswith("Hello th")
    assert "cut off" in err


def test_nul_and_control_bytes_in_reply_text_never_reach_the_terminal_raw(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(_text("a\u0000b\u001b[31mred\u0007"), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 0, err
    assert "a" in out
    assert "red" in out
    for raw in ("\x00", "\x1b", "\x07"):
        assert raw not in out


def test_a_200_whose_stream_is_an_error_envelope_is_that_error(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    envelope = b'{"success": false, "errors": [{"code": 3040, "message": "Capacity"}]}'
    with HostileServer(answer(_sse(envelope))) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
        assert server.connections >= 2, "a capacity error is retried"
    assert code == 4, err
    assert out.strip() == ""
    assert "capacity" in err.lower()


def test_absurd_usage_numbers_never_reach_the_summary(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    usage = {"prompt_tokens": -5, "completion_tokens": 10**30, "total_tokens": "many"}
    data = _sse(_text("Hi"), json.dumps({"response": "", "usage": usage}).encode(), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 0, err
    assert out == "Hi\n"
    assert "-5" not in err
    assert str(10**30) not in err


# -- HTTP the emulator never sends ------------------------------------------------------------

CAPACITY = b'{"success": false, "errors": [{"code": 3040, "message": "Capacity exceeded"}]}'


def _busy_then_hello(retry_after: str) -> Script:
    """The first request gets a 429 with ``Retry-After: retry_after``, later ones a reply."""

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        if server.connections == 1:
            head = {
                "content-type": "application/json",
                "content-length": str(len(CAPACITY)),
                "retry-after": retry_after,
            }
            await server.send(writer, http_head(429, head) + CAPACITY)
            return
        await server.send(writer, _sse(*HELLO))

    return script


@pytest.mark.parametrize(
    "retry_after", ["-5", "soon", "Wed, 21 Oct 2015 07:28:00 GMT", "1e309", "0x10"]
)
def test_a_retry_after_that_is_negative_past_or_unreadable_is_retried_by_the_policy(
    retry_after: str, cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(_busy_then_hello(retry_after)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
        assert server.connections == 2
    assert code == 0, err
    assert out == "Hello there\n"


def test_a_retry_after_of_a_century_is_not_waited_and_says_when(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(_busy_then_hello(str(100 * 365 * 24 * 3600))) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
        assert server.connections == 1  # past the cap: given up at once, not waited out
    assert code == 4, err
    assert out == ""
    assert err.startswith("flarechat: ")


#: A body the client cannot read: (headers over the stream's own, body or None for the reply,
#: exit code, words in the last line).
BROKEN_HTTP = {
    "gzip-declared-not-gzipped": ({"content-encoding": "gzip"}, None, 11, "could not read"),
    "not-sse-content-type": ({"content-type": "text/plain"}, None, 11, "could not read"),
    "bad-chunk-size": (
        {"transfer-encoding": "chunked"},
        b"zz\r\nHello\r\n0\r\n\r\n",
        10,
        "cut off",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN_HTTP))
def test_broken_http_framing_ends_with_a_plain_message(
    name: str, cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    head, body, exit_code, words = BROKEN_HTTP[name]
    payload = b"".join(b"data: " + p + b"\n\n" for p in HELLO) if body is None else body
    headers = {**STREAM_HEAD, **head}
    if "transfer-encoding" not in headers:
        headers["content-length"] = str(len(payload))
    with HostileServer(answer(http_head(200, headers) + payload)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == exit_code, err
    assert out.strip() == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("flarechat: ")
    assert words in last


def test_an_enormous_response_header_says_so_not_that_the_server_is_not_http(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = b"".join(b"data: " + p + b"\n\n" for p in HELLO)
    head = {**STREAM_HEAD, "x-padding": "p" * 200_000, "content-length": str(len(payload))}
    with HostileServer(answer(http_head(200, head) + payload)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
        assert server.connections == 1  # not retried: it would send the same again
    assert code != 0
    assert out == ""
    assert "response headers too large to read" in err
    assert "did not answer in HTTP" not in err

"""Issue 25, hostile JSON and hostile text on the command line: a server (or a file) that nests
JSON 100,000 deep, sends lone surrogates, echoes the token in encodings, puts terminal escapes
in model names or keeps a stream alive with comments only. Each ends cleanly, says what
happened, prints nothing raw and leaks no token.

Case names start with the item they cover (``item10-…``) so the fault count reads per item."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hostile_cli import Run, cli_against_hostile

from flarechat.emulator.app import CONTROL_PATH
from flarechat.emulator.guard import CONTROL_HEADER
from flarechat.emulator.server import EmulatorServer
from support.hostile import HostileServer, Script, answer, http_head

TOKEN = "tok-faults-json-5c81e07d2a"
DEEP = 100_000
STREAM_HEAD = {"content-type": "text/event-stream", "connection": "close"}
#: The shortest idle timeout `ask --idle-timeout` takes; the pings come many times inside it.
IDLE = 5
PING_EVERY = 0.05


def _json_reply(body: bytes, *, status: int = 200) -> bytes:
    head = {"content-type": "application/json", "content-length": str(len(body))}
    return http_head(status, head) + body


def _sse(*payloads: bytes) -> bytes:
    return http_head(200, STREAM_HEAD) + b"".join(b"data: " + p + b"\n\n" for p in payloads)


def _deep(opener: bytes = b"[", closer: bytes = b"]", *, depth: int = DEEP) -> bytes:
    return opener * depth + b"1" + closer * depth


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> Iterator[Run]:
    """``run(capsys, server, *argv)``: ``flarechat`` in-process against ``server``; then no
    form of the token in what it printed, logged (at DEBUG) or wrote to the profile."""
    with cli_against_hostile(monkeypatch, isolated_profile, logged, token=TOKEN) as run:
        yield run


# -- item 7 and 10: JSON nested 100,000 deep -------------------------------------------------


def test_item7_a_stream_chunk_nested_100000_deep_is_skipped_and_the_reply_ends(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(b'{"response": "Hello"}', _deep(), b'{"response": " there"}', b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 0, err
    assert out == "Hello there\n"


def test_item7_a_reply_body_nested_100000_deep_ends_the_reply_with_a_message(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    body = b'{"result": ' + _deep(b'{"a":', b"}") + b"}"
    with HostileServer(answer(_json_reply(body))) as server:
        code, out, err = cli(capsys, server, "ask", "--json", "Hi?")
    assert code != 0
    assert json.loads(out)["status"] == "failed"
    assert "could not be read" in err or "unreadable" in err.lower() or "not" in err


def test_item10_a_catalogue_nested_100000_deep_is_an_unreadable_reply(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    body = b'{"success": true, "result": ' + _deep() + b"}"
    with HostileServer(answer(_json_reply(body))) as server:
        code, out, err = cli(capsys, server, "models")
    assert code != 0
    assert out == ""
    assert err.startswith("flarechat: ")


@pytest.mark.parametrize("flag", ["--json-schema", "--tools"])
def test_item10_a_file_nested_100000_deep_is_refused_saying_so(
    flag: str, cli: Run, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "deep.json"
    # 5,000 deep: under the 1 MB a file may have, and far past the C stack's recursion guard.
    path.write_bytes(_deep(b'{"type": "object", "properties": {"a": ', b"}}", depth=5000))
    with HostileServer(answer(b"")) as server:
        code, _out, err = cli(capsys, server, "ask", flag, str(path), "Hi?")
        assert server.connections == 0, "nothing is sent for a refused file"
    assert code == 2, err
    assert "nested more than 64 levels deep" in err
    assert str(path) in err


# -- item 11: a lone surrogate in a tool call's arguments ------------------------------------


def test_item11_ask_json_with_a_lone_surrogate_tool_call_prints_a_record(
    cli: Run, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "look", "description": "Looks."}]), encoding="utf-8")
    call = b'{"name": "look", "arguments": "{\\"q\\": \\"a\\ud800b\\"}"}'
    body = b'{"result": {"response": "", "tool_calls": [' + call + b'], "success": true}}'
    with HostileServer(answer(_json_reply(body))) as server:
        code, out, err = cli(capsys, server, "ask", "--json", "--tools", str(tools), "Look?")
    assert code == 0, err
    record = json.loads(out)
    assert record["tool_calls"][0]["name"] == "look"
    out.encode("utf-8")  # printable: raises if a lone surrogate got through


# -- item 13: the token base64-encoded at any alignment in an error body -----------------------


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_item13_a_base64_bearer_header_at_any_alignment_is_redacted_everywhere(
    pad: int, cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    blob = base64.b64encode(b"x" * pad + f"Authorization: Bearer {TOKEN}".encode()).decode()
    body = json.dumps({"success": False, "errors": [{"code": 9999, "message": blob}]})
    with HostileServer(answer(_json_reply(body.encode(), status=400))) as server:
        code, _out, err = cli(capsys, server, "ask", "--json", "-v", "Hi?")
    assert code != 0
    assert "Cloudflare said" in err
    assert "[REDACTED]" in err  # and the fixture's scan finds no form of the token


# -- item 14: a catalogue and a reply that echo the token --------------------------------------


def test_item14_a_catalogue_echoing_the_token_is_redacted_in_models_json(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    model = {"name": "@cf/x/echo", "description": f"Bearer {TOKEN} and {TOKEN}", "task": {}}
    body = json.dumps({"success": True, "result": [model], "result_info": {"total_count": 1}})
    with HostileServer(answer(_json_reply(body.encode()))) as server:
        code, out, err = cli(capsys, server, "models", "--json")
    assert code == 0, err
    assert json.loads(out)[0]["name"] == "@cf/x/echo"
    assert "[REDACTED]" in out


def test_item14_reply_text_echoing_the_token_across_chunks_is_redacted_on_stdout(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    pieces = ["Your token is ", TOKEN[:5], TOKEN[5:13], TOKEN[13:], " and b64 ", _b64(TOKEN), "."]
    data = _sse(*(json.dumps({"response": p}).encode() for p in pieces), b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 0, err
    assert out == "Your token is [REDACTED] and b64 [REDACTED].\n"


def _b64(text: str) -> str:
    return base64.b64encode(f"Bearer {text}".encode()).decode()


# -- item 15: terminal escapes in what a server sends ----------------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_item15_models_strips_terminal_escapes_from_model_names(
    as_json: bool, cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "@cf/evil/\x1b]0;owned\x07\x1b[2J\x1b[31mred\x9b1m\r\x00model"
    model = {"name": name, "description": "d\x1b[5m", "task": {}}
    body = json.dumps({"success": True, "result": [model], "result_info": {"total_count": 1}})
    argv = ["models", "--json"] if as_json else ["models"]
    with HostileServer(answer(_json_reply(body.encode()))) as server:
        code, out, err = cli(capsys, server, *argv)
    assert code == 0, err
    for control in ("\x1b", "\x07", "\x9b", "\r", "\x00"):
        assert control not in out
    assert "@cf/evil/" in out
    assert "model" in out


def test_item15_reply_text_is_printed_without_terminal_escapes(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _sse(b'{"response": "a\\u001b[2Jb\\u0007c\\nd\\te"}', b"[DONE]")
    with HostileServer(answer(data)) as server:
        code, out, err = cli(capsys, server, "ask", "Hi?")
    assert code == 0, err
    assert out == "a[2Jbc\nd\te\n"  # the escape sequence is inert without its ESC


# -- item 16: keep-alive comments and nothing else -------------------------------------------


def _pings_forever() -> Script:
    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        await server.send(writer, http_head(200, STREAM_HEAD))
        while True:
            await server.send(writer, b": keep-alive\n\n")
            await asyncio.sleep(PING_EVERY)

    return script


def test_item16_an_idle_stall_after_the_request_was_accepted_is_retried_once(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(_pings_forever()) as server:
        code, out, err = cli(capsys, server, "ask", "--idle-timeout", str(IDLE), "Hi?")
        connections = server.connections
    assert connections == 2, err
    assert code != 0
    assert out == ""
    assert "sent nothing" in err


def test_item10_the_emulator_control_endpoint_refuses_json_nested_100000_deep(
    emulator: EmulatorServer,
) -> None:
    headers = {CONTROL_HEADER: emulator.control_token, "Content-Type": "application/json"}
    body = b'{"action": "requests", "x": ' + _deep() + b"}"
    reply = httpx.post(emulator.base_url + CONTROL_PATH, content=body, headers=headers)
    assert reply.status_code == 400
    assert reply.json()["ok"] is False


def test_item10_a_catalogue_of_wrong_types_lists_what_it_can(
    cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [{"name": ["@cf/x/list"]}, {"name": {"a": 1}}, "x", None, {"name": "@cf/x/ok"}]
    body = json.dumps({"success": True, "result": items, "result_info": [1]})
    with HostileServer(answer(_json_reply(body.encode()))) as server:
        code, out, err = cli(capsys, server, "models", "--json")
    assert code == 0, err
    assert [model["name"] for model in json.loads(out)] == ["@cf/x/ok"]

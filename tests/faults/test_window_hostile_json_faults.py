"""Issue 25, hostile JSON in the window: a tool call whose arguments hold a lone surrogate, and
a stream chunk nested 100,000 deep. The reply ends, what came is stored (and the message after
it too), and the window stays responsive and leaks no token.

Case names start with the item they cover (``item4-…``) so the fault count reads per item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from drive import faulty_window

from flarechat.emulator import EmulatorServer
from support.hostile import HostileServer, chat_replies

pytestmark = pytest.mark.asyncio

#: The arguments as a server sends them: the escape is in the chunk's own JSON text, so the
#: decoded arguments string holds a lone surrogate (UTF-8 cannot encode it).
LONE_SURROGATE_CALL = (
    b'{"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", '
    b'"function": {"name": "look", "arguments": "{\\"q\\": \\"a\\ud800b\\"}"}}]}}]}'
)
DEEP = b"[" * 100_000 + b"]" * 100_000


def _text(text: str) -> bytes:
    return json.dumps({"response": text}).encode()


async def test_item4_a_tool_call_with_a_lone_surrogate_is_stored_and_so_is_the_next_message(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    first = [_text("Looking it up."), LONE_SURROGATE_CALL]
    with HostileServer(chat_replies(first, [_text("Done.")])) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Look it up")
            assert outcome.kind is None, outcome
            assert await run.settle()
            outcome = await run.ask("And then?")
            assert outcome.kind is None, outcome
            rows = await run.settle()
    assert [(role, content) for role, content, _status in rows] == [
        ("user", "Look it up"),
        ("assistant", "Looking it up."),
        ("user", "And then?"),
        ("assistant", "Done."),
    ]
    calls = _stored_tool_calls(isolated_profile)
    assert json.loads(calls[0])[0]["name"] == "look"
    assert "a\ufffdb" in calls[0]


async def test_item7_a_stream_chunk_nested_100000_deep_does_not_end_the_window_reply(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    reply = [_text("Before"), DEEP, _text(" after")]
    with HostileServer(chat_replies(reply)) as server:
        options = {"api_base": server.api_base}
        async with faulty_window(emulator, isolated_profile, logged, **options) as run:
            outcome = await run.ask("Deep?")
            assert outcome.kind is None, outcome
            rows = await run.settle()
            assert ("assistant", "Before after", "done") in run.shown()
    assert rows[-1] == ("assistant", "Before after", "done")


def _stored_tool_calls(profile: Path) -> list[str]:
    import sqlite3

    from drive import DB_NAME

    conn = sqlite3.connect(f"file:{profile / DB_NAME}?mode=ro", uri=True)
    try:
        found = conn.execute(
            "SELECT tool_calls_json FROM messages WHERE tool_calls_json IS NOT NULL"
        ).fetchall()
    finally:
        conn.close()
    return [str(row[0]) for row in found]

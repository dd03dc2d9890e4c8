"""A fast reply: it always finishes, and its text is relayed per turn of the event loop."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from shell_helpers import ChatEnv, chat_env

from flarechat.api import _transport
from flarechat.core.session import running
from flarechat.emulator import EmulatorServer, replies
from flarechat.ui.control.chat import DeltaBuffer

#: "As fast as it can": the emulator's pacing sleep is always already over.
UNPACED = 1e9
#: A GUI thread held this long (a slow paint) lets the emulator send the whole reply meanwhile.
HELD_S = 0.5
LONG_PROMPT = "stream the very long test reply"
LONG_TOKENS = 6_000
LINE = "Fast servers send **many** tokens per read; the window paints once per batch.\n"


@pytest.fixture
def long_reply(monkeypatch: pytest.MonkeyPatch) -> str:
    """The emulator answers LONG_PROMPT with LONG_TOKENS tokens of Markdown."""
    text = LINE * (LONG_TOKENS // len(replies.tokenize(LINE)) + 1)
    answer = "".join(replies.tokenize(text)[:LONG_TOKENS])
    compose = replies.compose

    def long_compose(model: str, question: str, **kwargs: object) -> replies.Reply:
        if question.strip() == LONG_PROMPT:
            return replies.Reply("", answer)
        return compose(model, question, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(replies, "compose", long_compose)
    return answer


def test_the_buffer_joins_runs_per_message_and_kind_in_order() -> None:
    buffer = DeltaBuffer()
    for message_id, text, reasoning in [
        ("a", "Think", True),
        ("a", "ing.", True),
        ("a", "Hello ", False),
        ("a", "there", False),
        ("b", "Other", False),
        ("a", "!", False),
    ]:
        buffer.add(message_id, text, reasoning=reasoning)
    assert buffer.take() == [
        ("a", True, "Thinking."),
        ("a", False, "Hello there"),
        ("b", False, "Other"),
        ("a", False, "!"),
    ]
    assert not buffer
    assert buffer.take() == []


async def _burst_while_busy(env: ChatEnv) -> tuple[str, Any]:
    """Send; the first text holds the GUI thread (a slow paint) while the emulator sends the
    rest, which is then read in one loop turn. (reply id, its final MessageData)."""
    held: list[bool] = []

    def slow_paint(_message_id: str, _text: str) -> None:
        if not held:
            held.append(True)
            time.sleep(HELD_S)

    env.chat.turn_text_appended.connect(slow_paint)
    env.chat.new_conversation()
    reply_id = env.chat.send("Hello there")
    assert reply_id is not None
    return reply_id, await env.finished(reply_id)


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_a_reply_read_in_one_burst_still_finishes(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The autosave's cancel used to be lost when its store write finished in the same loop
    turn (Python 3.11's wait_for swallows it), and the reply waited on it forever."""
    emulator.state.tokens_per_second = UNPACED
    monkeypatch.setattr(running, "YIELD_EVERY", 60.0)  # the burst is read in one loop turn
    async with chat_env(emulator, tmp_path) as env:
        reply_id, data = await _burst_while_busy(env)
        assert data.status == "done"
        tree = await env.store.load_tree(str(env.chat.current_id))
        assert tree.get(reply_id).content == data.content
        assert tree.get(reply_id).status == "done"
        assert not env.chat.running_turns()


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_text_that_came_while_the_window_was_busy_is_one_signal(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.state.tokens_per_second = UNPACED
    monkeypatch.setattr(running, "YIELD_EVERY", 60.0)  # the burst is read in one loop turn
    monkeypatch.setattr(_transport, "READ_SLICE_S", 60.0)
    async with chat_env(emulator, tmp_path) as env:
        reply_id, data = await _burst_while_busy(env)
        names = [name for name, _args in env.recorder.events]
        texts = [t for m, t in env.recorder.args("turn_text_appended") if m == reply_id]
        assert data.status == "done"
        assert "".join(texts) == data.content
        assert len(texts) <= 3  # the first token(s), then one signal for the whole burst
        assert len(replies.tokenize(data.content)) > 100  # a burst of many tokens it was
        last_text = max(i for i, name in enumerate(names) if name == "turn_text_appended")
        assert names.index("turn_finished") > last_text


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_an_unpaced_long_reply_finishes_whole(
    emulator: EmulatorServer, tmp_path: Path, long_reply: str
) -> None:
    emulator.state.tokens_per_second = UNPACED
    async with chat_env(emulator, tmp_path, default_max_tokens=LONG_TOKENS + 100) as env:
        env.chat.new_conversation()
        reply_id = env.chat.send(LONG_PROMPT)
        assert reply_id is not None
        data = await env.finished(reply_id)
        assert (data.status, data.content) == ("done", long_reply)
        texts = [t for m, t in env.recorder.args("turn_text_appended") if m == reply_id]
        assert "".join(texts) == long_reply
        tree = await env.store.load_tree(str(env.chat.current_id))
        assert tree.get(reply_id).content == long_reply

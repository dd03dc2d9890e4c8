"""The conversation usage meter when switching: summed once per state of the conversation, a
long one's off the GUI thread (it held up the paint of a 5,000-message open; issue #12)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from shell_helpers import MODEL
from window_helpers import until, window

from flarechat.core import meters
from flarechat.core.conversation import (
    Conversation,
    ConversationTree,
    new_id,
)
from flarechat.emulator import EmulatorServer
from flarechat.ui.lab.controller import USAGE_INLINE_MAX
from support.conversations import chain, save

pytestmark = pytest.mark.asyncio(loop_scope="function")


def stored_conversation(path: Path, count: int) -> str:
    """A stored conversation of ``count`` messages, each reply billed 2 neurons."""
    conversation = Conversation(id=new_id(), title=f"{count} messages")
    messages = chain(conversation, [f"m{index}" for index in range(count)])
    for reply in messages[1::2]:
        reply.usage = {"prompt_tokens": 10, "completion_tokens": 5, "neurons": 2.0}
    save(path, [ConversationTree(conversation, messages)])
    return conversation.id


def count_sums(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The thread's name for each summing of a conversation's usage."""
    threads: list[str] = []
    real = meters.conversation_usage

    def counted(tree: ConversationTree, prices: Any) -> meters.UsageTotal:
        threads.append(threading.current_thread().name)
        return real(tree, prices)

    monkeypatch.setattr(meters, "conversation_usage", counted)
    return threads


def off_gui(threads: list[str]) -> list[str]:
    """The summings on another thread than the GUI's (long conversations)."""
    return [name for name in threads if name != threading.main_thread().name]


async def test_a_long_conversation_is_summed_once_off_the_gui_thread(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = 2 * USAGE_INLINE_MAX + 2
    conversation_id = await asyncio.to_thread(stored_conversation, tmp_path / "chat.sqlite3", count)
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab = main.lab_hooks.lab
        await until(lambda: lab.model_info(MODEL) is not None, "the catalogue (prices)")
        threads = count_sums(monkeypatch)
        assert await env.chat.open_conversation(conversation_id)
        assert lab.conversation_usage() == meters.UsageTotal()  # not summed yet: nothing held up
        await until(lambda: lab.conversation_usage().replies > 0, "the usage to be summed")
        totals = [lab.conversation_usage() for _ in range(3)]
        assert (
            totals
            == [
                meters.UsageTotal(
                    neurons=2.0 * (count // 2), replies=count // 2, unpriced=count // 2
                )
            ]
            * 3
        )
        assert len(threads) == 1
        assert threads[0] != threading.main_thread().name


async def test_a_long_conversation_left_before_its_sum_starts_is_not_summed(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sum waits for the open's widgets and paint; flipping on meanwhile sums only the
    conversation shown (issue #12: the summing thread slowed a cold open of 5,000)."""
    count = 2 * USAGE_INLINE_MAX + 2
    path = tmp_path / "chat.sqlite3"
    left = await asyncio.to_thread(stored_conversation, path, count)
    shown = await asyncio.to_thread(stored_conversation, path, count + 2)
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab = main.lab_hooks.lab
        threads = count_sums(monkeypatch)
        assert await env.chat.open_conversation(left)
        assert lab.conversation_usage() == meters.UsageTotal()
        assert await env.chat.open_conversation(shown)
        await until(lambda: lab.conversation_usage().replies > 0, "the usage to be summed")
        assert lab.conversation_usage().replies == (count + 2) // 2
        await lab.drain()
        assert len(off_gui(threads)) == 1


async def test_switching_back_to_a_long_conversation_does_not_sum_it_again(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its total is kept with the last few: summed again on each return, the summing thread
    held the GIL against the user's first scroll (issue #12)."""
    count = 2 * USAGE_INLINE_MAX + 2
    path = tmp_path / "chat.sqlite3"
    long_one = await asyncio.to_thread(stored_conversation, path, count)
    small = await asyncio.to_thread(stored_conversation, path, 4)
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab = main.lab_hooks.lab
        threads = count_sums(monkeypatch)
        assert await env.chat.open_conversation(long_one)
        await until(lambda: lab.conversation_usage().replies > 0, "the usage to be summed")
        assert await env.chat.open_conversation(small)
        assert lab.conversation_usage().replies == 2
        assert await env.chat.open_conversation(long_one)
        assert lab.conversation_usage().replies == count // 2
        await lab.drain()
        assert len(off_gui(threads)) == 1


async def test_a_small_conversation_is_summed_at_once_and_again_after_a_reply(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversation_id = await asyncio.to_thread(stored_conversation, tmp_path / "chat.sqlite3", 4)
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab = main.lab_hooks.lab
        threads = count_sums(monkeypatch)
        assert await env.chat.open_conversation(conversation_id)
        assert [lab.conversation_usage() for _ in range(3)] == [
            meters.UsageTotal(neurons=4.0, replies=2, unpriced=2)
        ] * 3
        assert threads == [threading.main_thread().name]
        lab.on_turn_finished()  # a reply's usage came in: summed again
        lab.conversation_usage()
        assert len(threads) == 2
        await lab.drain()

"""SessionBook keeps the last few conversations left in memory and shows one again only while
nothing of it was written since: renamed, deleted, edited elsewhere or by another connection,
it is read again; a reply that finished while it was away is shown as saved."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from session_helpers import Events, Settings, emulator_conn, fast_policy

from flarechat.api.client import WorkersAIClient
from flarechat.core.conversation import STATUS_DONE, Conversation, ConversationTree, new_id
from flarechat.core.session import book as book_module
from flarechat.core.session.book import SessionBook
from flarechat.core.store import AsyncChatStore, ChatStore
from flarechat.emulator.server import EmulatorServer
from support.conversations import chain

DB = "chat.sqlite3"


@dataclass
class Env:
    book: SessionBook
    store: AsyncChatStore
    events: Events

    async def chat(self, title: str, count: int = 4) -> str:
        """A stored conversation of ``count`` messages; its id."""
        conv = Conversation(id=new_id(), title=title)
        tree = ConversationTree(conv, chain(conv, [f"{title} {i}" for i in range(count)]))
        await self.store.run(ChatStore.insert_trees, [tree])
        return conv.id

    async def open(self, conversation_id: str) -> object:
        session = await self.book.open_conversation(conversation_id)
        assert session is not None
        return session


@asynccontextmanager
async def book_env(emulator: EmulatorServer, tmp_path: Path) -> AsyncIterator[Env]:
    store = await AsyncChatStore.open(tmp_path / DB)
    client = WorkersAIClient()
    events = Events()
    book = SessionBook(
        client=client,
        store=store,
        settings=Settings(emulator_conn(emulator)),
        listener=events,
        policy_factory=fast_policy(),
    )
    try:
        yield Env(book, store, events)
    finally:
        await book.shutdown()
        await client.aclose()
        await store.close()


@pytest.mark.asyncio
async def test_a_conversation_just_left_is_shown_again_from_memory(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        shown = await env.open(first)
        await env.open(second)
        assert env.book.session(first) is None  # off screen: not a session of the book
        assert await env.open(first) is shown


@pytest.mark.asyncio
async def test_a_conversation_renamed_while_away_is_read_again(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        shown = await env.open(first)
        await env.open(second)
        await env.store.update_conversation(first, title="Renamed")  # as the sidebar does
        again = await env.book.open_conversation(first)
        assert again is not None
        assert again is not shown
        assert again.tree.conversation.title == "Renamed"


@pytest.mark.asyncio
async def test_a_conversation_deleted_while_away_is_never_shown_from_memory(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        shown = await env.open(first)
        await env.open(second)
        await env.store.delete_conversation(first)
        env.book.forget(first)
        await env.store.restore_conversation(first)  # Undo
        assert await env.open(first) is not shown
        await env.open(second)
        await env.store.delete_conversation(first)  # without forget: the revision tells
        again = await env.book.open_conversation(first)
        assert again is not None
        assert again.tree.conversation.deleted_at is not None


@pytest.mark.asyncio
async def test_a_conversation_another_connection_edited_is_read_again(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        shown = await env.open(first)
        edited = shown.tree.path()[0].id  # type: ignore[attr-defined]
        await env.open(second)
        with sqlite3.connect(tmp_path / DB) as elsewhere:  # another window or process
            elsewhere.execute("UPDATE messages SET content = 'edited' WHERE id = ?", (edited,))
        elsewhere.close()
        again = await env.book.open_conversation(first)
        assert again is not None
        assert again is not shown
        assert again.tree.get(edited).content == "edited"


@pytest.mark.asyncio
async def test_an_edit_made_before_leaving_is_shown_again_from_memory(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        session = await env.book.open_conversation(first)
        assert session is not None
        user = session.tree.path()[-2]
        session.start_edit(user.id)
        reply = session.send("Edited question")
        assert reply is not None
        await env.events.finished(reply, STATUS_DONE)
        await session.drain()
        await env.open(second)
        assert await env.open(first) is session
        stored = await env.store.load_tree(first)
        assert [m.content for m in session.tree.path()] == [m.content for m in stored.path()]
        assert stored.path()[-2].content == "Edited question"


@pytest.mark.asyncio
async def test_a_reply_that_finished_while_away_is_shown_as_saved(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    emulator.state.set_tokens_per_second(200)
    async with book_env(emulator, tmp_path) as env:
        first, second, third = [await env.chat(t) for t in ("first", "second", "third")]
        session = await env.book.open_conversation(first)
        assert session is not None
        reply = session.send("Tell me a long story")
        assert reply is not None
        await env.open(second)  # left while its reply runs: kept as a session of the book
        assert env.book.session(first) is session
        await env.events.finished(reply, STATUS_DONE)
        await session.drain()
        await env.open(third)  # now idle: dropped, kept as left
        again = await env.book.open_conversation(first)
        stored = await env.store.load_tree(first)
        assert again is not None
        assert again.tree.get(reply).status == STATUS_DONE
        assert again.tree.get(reply).content == stored.get(reply).content
        assert [m.id for m in again.tree.path()] == [m.id for m in stored.path()]


@pytest.mark.asyncio
async def test_left_conversations_are_bounded_by_messages_and_count(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(book_module, "RECENT_MESSAGES", 10)
    async with book_env(emulator, tmp_path) as env:
        a, b, c = [await env.chat(t, count=6) for t in ("a", "b", "c")]
        shown_a = await env.open(a)
        shown_b = await env.open(b)
        assert await env.open(a) is shown_a  # left: b (6 messages)
        await env.open(c)  # left: b, a (12 > 10): b, the older, goes
        assert await env.open(b) is not shown_b
        monkeypatch.setattr(book_module, "RECENT_MESSAGES", 1_000)
        monkeypatch.setattr(book_module, "RECENT_CONVERSATIONS", 1)
        shown_c = await env.open(c)  # left: b (a went: one at most)
        await env.open(a)
        assert await env.open(c) is shown_c
        assert await env.open(b) is not shown_b


@pytest.mark.asyncio
async def test_forget_left_makes_the_next_open_read_the_store(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        shown = await env.open(first)
        await env.open(second)
        env.book.forget_left()
        assert await env.open(first) is not shown


@pytest.mark.asyncio
async def test_a_conversation_another_connection_edited_while_on_screen_is_read_again(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with book_env(emulator, tmp_path) as env:
        first, second = await env.chat("first"), await env.chat("second")
        shown = await env.open(first)
        edited = shown.tree.path()[0].id  # type: ignore[attr-defined]
        with sqlite3.connect(tmp_path / DB) as elsewhere:  # while it is on screen
            elsewhere.execute("UPDATE messages SET content = 'edited' WHERE id = ?", (edited,))
        elsewhere.close()
        await env.open(second)
        again = await env.book.open_conversation(first)
        assert again is not None
        assert again is not shown
        assert again.tree.get(edited).content == "edited"


@pytest.mark.asyncio
async def test_a_long_chat_just_left_drops_every_older_one_over_the_budget(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(book_module, "RECENT_MESSAGES", 11)
    async with book_env(emulator, tmp_path) as env:
        a, b = await env.chat("a", count=2), await env.chat("b", count=8)
        c, d = await env.chat("c", count=9), await env.chat("d", count=2)
        shown = {key: await env.open(key) for key in (a, b, c)}  # left: a (2), b (8)
        await env.open(d)  # left, newest first: c (9), b (17 > 11: goes), a (goes too)
        assert await env.open(c) is shown[c]
        assert await env.open(b) is not shown[b]
        assert await env.open(a) is not shown[a]

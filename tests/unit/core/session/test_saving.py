"""ConversationSaver's ordering: a newer version handed in while an older one is being written
is written too (the store copies a message when the write starts, not when it ends)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    STATUS_DONE,
    STATUS_STREAMING,
    Conversation,
    Message,
    auto_title,
)
from flarechat.core.session import saving
from flarechat.core.session.saving import ConversationSaver
from flarechat.core.store import DB_FILENAME, AsyncChatStore, ChatStore, NotFound, StoreBusy


class SlowStore:
    """Stores copies, as AsyncChatStore does; the first finalise waits until released."""

    def __init__(self) -> None:
        self.rows: dict[str, Message] = {}
        self.release = asyncio.Event()
        self.writing = asyncio.Event()
        self.writes = 0

    async def create_conversation(self, conversation: Conversation | None = None) -> Conversation:
        assert conversation is not None
        return conversation

    async def add_message(self, message: Message) -> None:
        self.rows[message.id] = copy.deepcopy(message)

    async def save_partial(self, message_id: str, content: str, reasoning: str) -> None:
        if message_id not in self.rows:
            raise NotFound(message_id)
        self.rows[message_id].content, self.rows[message_id].reasoning = content, reasoning

    async def finalise_message(self, message: Message) -> None:
        kept = copy.deepcopy(message)  # taken when the write starts
        self.writes += 1
        if self.writes == 1:
            self.writing.set()
            await self.release.wait()
        if message.id not in self.rows:
            raise NotFound(message.id)
        self.rows[message.id] = kept

    async def update_conversation(self, conversation_id: str, **fields: Any) -> object:
        return None


@pytest.mark.asyncio
async def test_a_final_record_handed_in_during_an_older_write_is_written() -> None:
    store = SlowStore()
    conversation = Conversation(id="c1")
    reply = Message("m1", "c1", None, ROLE_ASSISTANT, "", status=STATUS_STREAMING)
    store.rows[reply.id] = copy.deepcopy(reply)
    saver = ConversationSaver(store, conversation, stored=True, report=lambda *_: None)
    first = asyncio.create_task(saver.finalise(reply))  # "streaming", held mid-write
    await store.writing.wait()
    reply.status, reply.content = STATUS_DONE, "The whole answer."
    second = asyncio.create_task(saver.finalise(reply))
    await asyncio.sleep(0)
    store.release.set()
    await asyncio.gather(first, second)
    assert (store.rows["m1"].status, store.rows["m1"].content) == (STATUS_DONE, "The whole answer.")
    assert saver.unsaved == 0


class FailingPartialStore(SlowStore):
    """save_partial fails once (a locked or full database), then everything works."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 1  # never hold a finalise
        self.partial_failures = 1

    async def save_partial(self, message_id: str, content: str, reasoning: str) -> None:
        if self.partial_failures:
            self.partial_failures -= 1
            raise StoreBusy(Path("chat.sqlite3"))
        await super().save_partial(message_id, content, reasoning)


@pytest.mark.asyncio
async def test_a_final_record_after_a_kept_partial_is_written_whole() -> None:
    store = FailingPartialStore()
    reply = Message("m1", "c1", None, ROLE_ASSISTANT, "par", status=STATUS_STREAMING)
    store.rows[reply.id] = copy.deepcopy(reply)
    troubles: list[str | None] = []
    saver = ConversationSaver(
        store, Conversation(id="c1"), stored=True, report=lambda p, _n: troubles.append(p)
    )
    await saver.save_partial(reply)  # fails: kept in memory
    assert saver.unsaved == 1
    reply.status, reply.content = STATUS_DONE, "partial and the rest"
    await saver.finalise(reply)
    assert (store.rows["m1"].status, store.rows["m1"].content) == (STATUS_DONE, reply.content)
    assert saver.unsaved == 0
    assert troubles[-1] is None  # recovered


@pytest.mark.asyncio
async def test_a_megabyte_first_message_is_titled_from_its_start_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The title reads the first words; the whole 1 MB text is never scanned for it (that
    held the GUI thread over 50 ms when a 1 MB paste was sent)."""
    store = SlowStore()
    store.release.set()  # no write is held
    conversation = Conversation(id="c1")
    paste = "  \n Summarise   this log:\n" + "x " * 500_000
    read: list[int] = []

    def counting_title(text: str) -> str:
        read.append(len(text))
        return auto_title(text)

    monkeypatch.setattr(saving, "auto_title", counting_title)
    saver = ConversationSaver(store, conversation, stored=False, report=lambda *_: None)
    await saver.add([Message("m1", "c1", None, ROLE_USER, paste)])
    assert conversation.title == auto_title(paste)
    assert read == [saving.TITLE_SOURCE_CHARS]
    assert store.rows["m1"].content == paste  # the message itself is kept whole


@pytest.mark.asyncio
async def test_a_record_the_database_cannot_hold_does_not_stop_the_next(tmp_path: Path) -> None:
    # Issue 25 item 4: one record's failure must never stop the next. A record SQLite refuses
    # (here a number past 64 bits) stayed first in line, so every later message waited on it.
    store = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME))
    problems: list[str | None] = []
    try:
        conversation = Conversation(id="c1")
        saver = ConversationSaver(
            store, conversation, stored=False, report=lambda text, _n: problems.append(text)
        )
        question = Message("u1", "c1", None, ROLE_USER, "Look it up")
        await saver.add([question])
        broken = Message("a1", "c1", "u1", ROLE_ASSISTANT, "x", created_at=10**30)
        await saver.add([broken])
        follow_up = Message("u2", "c1", "a1", ROLE_USER, "And then?")
        await saver.add([follow_up])
        tree = await store.load_tree("c1")
    finally:
        await store.close()
    assert {m.id for m in tree} == {"u1", "u2"}
    assert tree.get("u2").parent_id == "u1", "under the nearest stored message"
    assert saver.unsaved == 0
    assert not saver.failing
    assert problems == [problems[0]], "said once"
    assert problems[0] is not None
    assert "could not store one message" in problems[0]

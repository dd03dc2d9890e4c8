"""ChatStore.revision: every write to a conversation moves its revision and no other's; reads
move nothing; a commit through another connection moves every revision."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    STATUS_DONE,
    STATUS_STREAMING,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import DB_FILENAME, ChatStore
from support.conversations import chain

Write = Callable[[ChatStore, Conversation, list[Message]], object]


def _reply(conv: Conversation, parent: Message) -> Message:
    return Message(new_id(), conv.id, parent.id, ROLE_ASSISTANT, "hi", status=STATUS_STREAMING)


def _finalised(store: ChatStore, conv: Conversation, messages: list[Message]) -> None:
    messages[-1].content = "changed"
    messages[-1].status = STATUS_DONE
    store.finalise_message(messages[-1])


WRITES: dict[str, Write] = {
    "rename": lambda s, c, _m: s.update_conversation(c.id, title="New"),
    "pin": lambda s, c, _m: s.update_conversation(c.id, pinned=True),
    "select": lambda s, c, m: s.update_conversation(c.id, selected={None: m[0].id}),
    "delete": lambda s, c, _m: s.delete_conversation(c.id),
    "add": lambda s, c, m: s.add_message(_reply(c, m[-1])),
    "partial": lambda s, _c, m: s.save_partial(m[-1].id, "so far", ""),
    "finalise": _finalised,
    "save_pending": lambda s, c, m: s.save_pending(c, [_reply(c, m[-1])]),
}


@pytest.fixture
def stored(tmp_path: Path) -> tuple[ChatStore, list[tuple[Conversation, list[Message]]]]:
    store = ChatStore(tmp_path / DB_FILENAME)
    pairs = []
    for title in ("shown", "other"):
        conv = Conversation(id=new_id(), title=title)
        messages = chain(conv, ["one", "two", "three"])
        store.insert_trees([ConversationTree(conv, messages)])
        pairs.append((conv, messages))
    return store, pairs


@pytest.mark.parametrize("name", list(WRITES))
def test_a_write_moves_its_conversations_revision_and_no_other(
    stored: tuple[ChatStore, list[tuple[Conversation, list[Message]]]], name: str
) -> None:
    store, [(conv, messages), (other, _)] = stored
    before, other_before = store.revision(conv.id), store.revision(other.id)
    WRITES[name](store, conv, messages)
    assert store.revision(conv.id) != before
    assert store.revision(other.id) == other_before
    store.close()


def test_reads_and_restore_move_what_they_should(
    stored: tuple[ChatStore, list[tuple[Conversation, list[Message]]]],
) -> None:
    store, [(conv, _), _other] = stored
    before = store.revision(conv.id)
    store.load_tree(conv.id)
    store.list_conversations()
    store.search("two")
    store.get_conversation(conv.id)
    assert store.revision(conv.id) == before
    store.delete_conversation(conv.id)
    deleted = store.revision(conv.id)
    store.restore_conversation(conv.id)
    assert store.revision(conv.id) != deleted
    store.close()


def test_writes_to_every_conversation_move_every_revision(
    stored: tuple[ChatStore, list[tuple[Conversation, list[Message]]]],
) -> None:
    store, [(conv, _), (other, _)] = stored
    before = store.revision(other.id)
    store.mark_unfinished_as_interrupted()
    after_recovery = store.revision(other.id)
    assert after_recovery != before
    store.delete_conversation(conv.id)
    store.purge_deleted(older_than=-1)
    assert store.revision(other.id) != after_recovery
    store.close()


def test_a_commit_through_another_connection_moves_the_revision(
    stored: tuple[ChatStore, list[tuple[Conversation, list[Message]]]],
) -> None:
    store, [(conv, messages), _other] = stored
    before = store.revision(conv.id)
    with sqlite3.connect(store.path) as elsewhere:  # another window or process
        elsewhere.execute("UPDATE messages SET content = 'edited' WHERE id = ?", (messages[0].id,))
    elsewhere.close()
    assert store.revision(conv.id) != before
    store.close()


def test_a_reopened_store_never_repeats_a_revision(tmp_path: Path) -> None:
    conv = Conversation(id=new_id())
    with ChatStore(tmp_path / DB_FILENAME) as store:
        store.create_conversation(conv)
        first = store.revision(conv.id)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        store.create_conversation(Conversation(id=new_id()))
        assert store.revision(conv.id) != first

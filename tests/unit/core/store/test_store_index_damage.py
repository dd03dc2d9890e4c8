"""A search index damaged at rest (found by a search, not at start): rebuilt, never the file
moved aside, no message lost; read-only, a plain sentence instead of "the database is damaged"."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from flarechat.core.conversation import ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import (
    DB_FILENAME,
    ChatStore,
    StoreCorrupt,
    StoreError,
    open_store,
)
from support.damage import damage_search_index

MESSAGES = 40
INDEX_REBUILT = "The search index was damaged and has been rebuilt; no message was lost."


def _filled(path: Path) -> tuple[str, list[str]]:
    """A cleanly closed database: one conversation titled "Heron notes", MESSAGES messages."""
    with ChatStore(path) as store:
        conv = store.create_conversation(Conversation(id=new_id(), title="Heron notes"))
        parent, ids = None, []
        for index in range(MESSAGES):
            msg = Message(new_id(), conv.id, parent, ROLE_USER, f"heron sighting {index} " * 10)
            store.add_message(msg)
            parent = msg.id
            ids.append(msg.id)
    return conv.id, ids


def _stored_texts(path: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [str(row[0]) for row in conn.execute("SELECT content FROM messages ORDER BY seq")]
    finally:
        conn.close()


@pytest.mark.parametrize("table", ["messages_fts", "titles_fts"])
def test_a_search_that_meets_a_damaged_index_rebuilds_it_and_is_answered(
    tmp_path: Path, table: str
) -> None:
    path = tmp_path / DB_FILENAME
    _conv_id, ids = _filled(path)
    before = _stored_texts(path)
    damage_search_index(path, table)
    with open_store(path) as store:
        assert store.report.problems == []  # a clean close: the quick check cannot see it
        hits = store.search("heron", None)
        assert [h.message_id for h in hits] == [None, *reversed(ids)]  # the title, then all
        assert INDEX_REBUILT in store.report.problems
        assert store.check_integrity() == []
        assert store.report.moved_aside is None
    assert _stored_texts(path) == before


def test_find_in_a_conversation_rebuilds_a_damaged_index(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conv_id, ids = _filled(path)
    damage_search_index(path)
    with open_store(path) as store:
        hits = store.search("sighting", None, conversation_id=conv_id)
        assert [h.message_id for h in hits] == ids
        assert store.search("sighting 7", None)  # and the next search needs no rebuild
        assert store.report.problems.count(INDEX_REBUILT) == 1


def test_writes_that_meet_a_damaged_index_are_saved(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conv_id, ids = _filled(path)
    damage_search_index(path)
    with open_store(path) as store:
        store.update_conversation(conv_id, title="Egret notes")  # deletes from titles_fts
        store.save_partial(ids[0], "an egret instead", "")  # deletes from messages_fts
        assert [h.message_id for h in store.search("egret", None)] == [None, ids[0]]
    assert _stored_texts(path)[0] == "an egret instead"


def test_a_read_only_database_says_its_search_index_is_damaged_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / DB_FILENAME
    conv_id, _ids = _filled(path)
    damage_search_index(path)
    before = path.read_bytes()
    with open_store(path, read_only=True) as store:
        with pytest.raises(StoreError) as raised:
            store.search("heron", None)
        assert not isinstance(raised.value, StoreCorrupt)  # nothing may move the file aside
        text = str(raised.value)
        assert "search index" in text
        assert "read-only" in text
        assert "No message was lost" in text
        assert len(store.load_tree(conv_id)) == MESSAGES  # the chats still open
    assert path.read_bytes() == before

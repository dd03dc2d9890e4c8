"""Which integrity check opening runs: quick after a clean close, full after an unclean one."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from flarechat.core.conversation import ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import DB_FILENAME, ChatStore, open_store
from support.unclean import die_mid_session

NOW = 1_700_000_000.0
PAGE = 4096
FULL_CHECK = "PRAGMA integrity_check"
QUICK_CHECK = "PRAGMA quick_check"
SEARCH_CHECK = "'integrity-check'"


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL statement the stores opened from here on run (SQLite's trace callback)."""
    seen: list[str] = []
    connect = ChatStore._connect

    def traced(store: ChatStore) -> object:
        conn = connect(store)
        conn.set_trace_callback(seen.append)
        return conn

    monkeypatch.setattr(ChatStore, "_connect", traced)
    return seen


def _filled(path: Path, count: int, *, text: str = "message") -> None:
    with ChatStore(path) as store:
        conv = store.create_conversation(Conversation(id=new_id(), title="Filled"))
        parent = None
        for index in range(count):
            msg = Message(new_id(), conv.id, parent, ROLE_USER, f"{text} {index} " * 20)
            store.add_message(msg)
            parent = msg.id


def _ran(statements: list[str], needle: str) -> bool:
    return any(needle in statement for statement in statements)


def test_a_clean_close_is_followed_by_the_quick_check_only(
    tmp_path: Path, statements: list[str]
) -> None:
    path = tmp_path / DB_FILENAME
    _filled(path, 5)
    statements.clear()
    with open_store(path) as store:
        assert store.report.problems == []
    assert _ran(statements, QUICK_CHECK)
    assert not _ran(statements, FULL_CHECK)
    assert not _ran(statements, SEARCH_CHECK)


def test_an_unclean_close_is_followed_by_the_full_checks(
    tmp_path: Path, statements: list[str]
) -> None:
    path = tmp_path / DB_FILENAME
    _filled(path, 5)
    die_mid_session(path)  # SQLite's -wal stays behind
    statements.clear()
    with open_store(path) as store:
        assert store.report.problems == []
        assert len(store.list_conversations()) == 2  # the dying session's write was kept
    assert _ran(statements, FULL_CHECK)
    assert _ran(statements, SEARCH_CHECK)
    assert not _ran(statements, QUICK_CHECK)


def test_the_start_after_the_full_check_is_quick_again(
    tmp_path: Path, statements: list[str]
) -> None:
    path = tmp_path / DB_FILENAME
    _filled(path, 5)
    die_mid_session(path)
    open_store(path).close()
    statements.clear()
    open_store(path).close()
    assert _ran(statements, QUICK_CHECK)
    assert not _ran(statements, FULL_CHECK)


def test_the_quick_check_still_finds_damaged_pages_after_a_clean_close(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    _filled(path, 300)
    data = bytearray(path.read_bytes())
    rng = random.Random(3)
    for offset in range(PAGE * 3, PAGE * 6):  # keep the header: only the content is damaged
        data[offset] = rng.randrange(256)
    path.write_bytes(bytes(data))
    with open_store(path, clock=lambda: NOW) as store:
        assert store.report.moved_aside is not None
        assert store.report.moved_aside.read_bytes() == bytes(data)
        assert store.list_conversations() == []


def test_a_search_index_drifted_before_a_killed_session_is_rebuilt_not_moved(
    tmp_path: Path,
) -> None:
    path = tmp_path / DB_FILENAME
    _filled(path, 3, text="heron")
    with ChatStore(path) as store:
        # make the index drift from the text, as a bug or an interrupted tool might
        store._conn.execute("DROP TRIGGER messages_fts_update")
        store._conn.execute("UPDATE messages SET content = 'egret'")
        assert store.check_integrity()[0].startswith("messages_fts:")
    with ChatStore(path) as store:  # put the trigger back (as a fixed version would)
        store._conn.execute(
            "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN "
            "INSERT INTO messages_fts(messages_fts, rowid, content) "
            "VALUES ('delete', old.seq, old.content); "
            "INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content); END"
        )
    die_mid_session(path)
    with open_store(path) as store:
        assert store.report.moved_aside is None
        assert "search index" in store.report.problems[0]
        assert store.check_integrity() == []
        assert len(store.search("egret")) == 3
        assert store.search("heron") == []

"""The store under hostile conditions: read-only and full files at open, odd rows, file modes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import (
    DB_FILENAME,
    AsyncChatStore,
    ChatStore,
    NotFound,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreUnavailable,
    open_store,
)
from support.unclean import die_mid_session

_real_connect: Callable[..., sqlite3.Connection] = sqlite3.connect


def fill(path: Path, count: int = 3) -> Conversation:
    with ChatStore(path) as store:
        conv = store.create_conversation(Conversation(id=new_id(), title="Kept"))
        parent = None
        for index in range(count):
            msg = Message(new_id(), conv.id, parent, ROLE_USER, f"message {index}")
            store.add_message(msg)
            parent = msg.id
    return conv


def os_refuses_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every plain (non-URI) open of a database comes back read-only.

    Tests run as root, and root ignores chmod 0444 / 0555, so the permission bits alone cannot
    make this meaningful. When a non-root process opens a 0444 file (or one in a 0555 folder
    whose -wal cannot be created), SQLite's unix VFS retries the open with O_RDONLY and hands
    back a connection on which every write fails with SQLITE_READONLY. Opening through a
    ``mode=ro`` URI produces exactly that connection, so this injects the real sqlite condition
    rather than a fake error; the chmod is kept so the test also means it when run unprivileged.
    """

    def connect(database: Any, *args: Any, uri: bool = False, **kwargs: Any) -> sqlite3.Connection:
        if not uri:
            database, uri = f"{Path(database).resolve().as_uri()}?mode=ro", True
        return _real_connect(database, *args, uri=uri, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


def disk_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection is capped at the file's current size: a write that needs a page fails
    with SQLITE_FULL, as on a full disk (max_page_count is SQLite's own size cap)."""

    def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = _real_connect(database, *args, **kwargs)
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1):d}")
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)


# -- 3: a read-only or full database opens read-only --------------------------------------------


def test_write_protected_file_opens_read_only_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / DB_FILENAME
    conv = fill(path)
    path.chmod(0o444)
    os_refuses_writes(monkeypatch)
    with open_store(path) as store:
        assert store.read_only
        assert store.report.read_only
        assert store.report.read_only_reason is not None
        assert "read-only" in store.report.read_only_reason
        assert store.report.moved_aside is None  # not taken for damage
        assert len(store.load_tree(conv.id)) == 3
        with pytest.raises(StoreReadOnly):
            store.create_conversation()
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_write_protected_folder_opens_read_only_instead_of_failing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / DB_FILENAME
    conv = fill(path)
    folder.chmod(0o555)
    os_refuses_writes(monkeypatch)
    try:
        with open_store(path) as store:
            assert store.report.read_only
            assert store.list_conversations()[0].id == conv.id
    finally:
        folder.chmod(0o700)


def test_full_disk_with_a_damaged_index_opens_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / DB_FILENAME
    conv = fill(path, count=40)
    conn = sqlite3.connect(path, isolation_level=None)
    # The index drifts from the text (as after a bug): it holds far less than the text now has,
    conn.execute("DROP TRIGGER messages_fts_update")
    conn.execute("UPDATE messages SET content = content || ' ' || hex(randomblob(4000))")
    conn.execute("VACUUM")  # and no free page is left, so a rebuild needs the disk to grow.
    conn.close()
    die_mid_session(path)  # the full checks (which find the drift) run after an unclean close
    disk_is_full(monkeypatch)
    with open_store(path) as store:
        assert store.report.read_only
        assert store.report.read_only_reason is not None
        assert "disk is full" in store.report.read_only_reason
        assert store.report.moved_aside is None
        assert len(store.load_tree(conv.id)) == 40
        with pytest.raises((StoreFull, StoreReadOnly)):
            store.add_message(Message(new_id(), conv.id, None, ROLE_ASSISTANT, "more"))


# -- 2: odd paths and odd rows give messages, not tracebacks ------------------------------------


def test_database_path_that_is_a_folder_is_a_plain_store_error(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    path.mkdir()
    for opener in (open_store, ChatStore):
        with pytest.raises(StoreUnavailable, match="is a folder") as caught:
            opener(path)
        assert str(path) in str(caught.value)
    assert path.is_dir()  # nothing was moved or created


def orphan_rows(path: Path, conv: Conversation) -> list[str]:
    """Rows a file written without foreign keys can hold: a lost parent, a loop, no chat."""
    a, b, lost = new_id(), new_id(), new_id()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = OFF")
    columns = "id, conversation_id, parent_id, role, content, status, created_at"
    rows = [
        (lost, conv.id, new_id(), ROLE_USER, "parent gone", "complete", 5.0),
        (a, conv.id, b, ROLE_USER, "loop a", "complete", 6.0),
        (b, conv.id, a, ROLE_ASSISTANT, "loop b", "complete", 7.0),
        (new_id(), new_id(), None, ROLE_USER, "conversation gone", "complete", 8.0),
    ]
    conn.executemany(f"INSERT INTO messages ({columns}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    conn.close()
    return [lost, a, b]


def test_orphan_rows_are_reattached_and_reported_not_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conv = fill(path, count=2)
    kept = orphan_rows(path, conv)
    with open_store(path) as store:
        tree = store.load_tree(conv.id)
        assert len(tree) == 2 + 3
        assert all(message_id in tree for message_id in kept)
        assert tree.get(kept[0]).parent_id is None
        assert [tree.get(kept[1]).parent_id, tree.get(kept[2]).parent_id].count(None) == 1
        assert any("separate branches" in p for p in store.report.problems)
        assert [hit.conversation_id for hit in store.search("gone")] == [conv.id]
        assert [s.id for s in store.list_conversations()] == [conv.id]


def test_bad_json_in_a_record_column_reads_as_empty(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / DB_FILENAME
    conv = fill(path, count=1)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE messages SET meta_json = '{not json', usage_json = ?", ("[" * 100_000,))
    conn.execute("UPDATE conversations SET params_json = 'nope', selected_json = '{'")
    conn.close()
    with open_store(path) as store:
        tree = store.load_tree(conv.id)
        only = next(iter(tree))
        assert (only.meta, only.usage) == (None, None)
        assert tree.conversation.params == {}
    assert "not valid JSON" in caplog.text


# -- 5: a failed write is never silent; save_pending re-saves what memory kept ------------------


def test_message_whose_parent_is_gone_raises_not_found(tmp_path: Path) -> None:
    with ChatStore(tmp_path / DB_FILENAME) as store:
        conv = store.create_conversation()
        other = store.create_conversation()
        elsewhere = Message(new_id(), other.id, None, ROLE_USER, "in the other chat")
        store.add_message(elsewhere)
        for parent in (new_id(), elsewhere.id):
            with pytest.raises(NotFound, match="not saved"):
                store.add_message(Message(new_id(), conv.id, parent, ROLE_USER, "hi"))
        with pytest.raises(NotFound):
            store.add_message(Message(new_id(), new_id(), None, ROLE_USER, "no chat"))
        assert len(store.load_tree(conv.id)) == 0


def test_every_write_error_is_a_store_error(tmp_path: Path) -> None:
    with ChatStore(tmp_path / DB_FILENAME) as store:
        conv = store.create_conversation()
        with pytest.raises(StoreError, match="already in the chat database"):
            store.create_conversation(Conversation(id=conv.id))
        msg = Message(new_id(), conv.id, None, ROLE_USER, "hi")
        store.add_message(msg)
        with pytest.raises(StoreError, match="already in the chat database"):
            store.add_message(msg)
        huge = Message(new_id(), conv.id, None, ROLE_USER, "x", created_at=10**30)
        with pytest.raises(StoreError, match="could not store this"):
            store.add_message(huge)
        with pytest.raises(NotFound):
            store.save_partial(new_id(), "text", "")
        with pytest.raises(NotFound):
            store.finalise_message(Message(new_id(), conv.id, None, ROLE_ASSISTANT, "x"))
        assert [m.id for m in store.load_tree(conv.id)] == [msg.id]


def pending_chat() -> tuple[Conversation, list[Message]]:
    conv = Conversation(id=new_id(), title="Kept in memory", created_at=1.0, updated_at=3.0)
    question = Message(new_id(), conv.id, None, ROLE_USER, "question", created_at=2.0)
    answer = Message(
        new_id(),
        conv.id,
        question.id,
        ROLE_ASSISTANT,
        "answer",
        status="done",
        created_at=3.0,
        usage={"prompt_tokens": 3},
    )
    return conv, [answer, question]  # any order


def test_save_pending_writes_everything_once_and_is_idempotent(tmp_path: Path) -> None:
    conv, messages = pending_chat()
    with ChatStore(tmp_path / DB_FILENAME) as store:
        assert store.save_pending(conv, messages) == 2
        assert store.save_pending(conv, messages) == 0
        tree = store.load_tree(conv.id)
        assert [m.content for m in tree.path()] == ["question", "answer"]
        assert tree.conversation.title == "Kept in memory"
        messages[0].content = "answer, finished later"
        conv.title = "Renamed meanwhile"
        assert store.save_pending(conv, messages) == 0
        tree = store.load_tree(conv.id)
        assert tree.get(messages[0].id).content == "answer, finished later"
        assert tree.conversation.title == "Renamed meanwhile"
        assert len(tree) == 2
        assert len(store.search("question")) == 1


def test_save_pending_after_a_full_disk_recovers_the_conversation(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conv, messages = pending_chat()
    with ChatStore(path) as store:
        store.create_conversation(conv)  # the conversation made it; the messages did not
        pages = int(store._conn.execute("PRAGMA page_count").fetchone()[0])
    with ChatStore(path, max_page_count=pages) as store:
        big = [Message(new_id(), conv.id, None, ROLE_USER, "x" * 100_000), *messages]
        with pytest.raises(StoreFull):
            store.save_pending(conv, big)
        assert len(store.load_tree(conv.id)) == 0  # all or nothing
    with ChatStore(path) as store:  # the disk has room again
        assert store.save_pending(conv, big) == 3
        assert len(store.load_tree(conv.id)) == 3


def test_save_pending_refuses_a_message_of_another_chat_and_writes_nothing(
    tmp_path: Path,
) -> None:
    conv, messages = pending_chat()
    stray = Message(new_id(), conv.id, new_id(), ROLE_USER, "parent nowhere")
    with ChatStore(tmp_path / DB_FILENAME) as store:
        with pytest.raises(NotFound):
            store.save_pending(conv, [*messages, stray])
        assert store.list_conversations() == []


@pytest.mark.asyncio
async def test_async_save_pending(tmp_path: Path) -> None:
    conv, messages = pending_chat()
    store = await AsyncChatStore.open(tmp_path / DB_FILENAME)
    try:
        assert await store.save_pending(conv, messages) == 2
        assert len(await store.load_tree(conv.id)) == 2
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_async_store_says_it_is_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / DB_FILENAME
    fill(path)
    os_refuses_writes(monkeypatch)
    store = await AsyncChatStore.open(path)
    try:
        assert store.read_only
        assert store.report.read_only_reason is not None
        with pytest.raises(StoreReadOnly):
            await store.create_conversation()
    finally:
        await store.close()


def test_text_with_lone_surrogates_is_stored_with_replacement_characters(tmp_path: Path) -> None:
    # Issue 25 item 4: any text a server sends must be storable. UTF-8 cannot encode a lone
    # surrogate, so SQLite refused the whole row (and the saver stopped at it).
    with ChatStore(tmp_path / DB_FILENAME) as store:
        conv = store.create_conversation(Conversation(id=new_id(), title="t\ud800"))
        call = {"id": "1", "name": "look\udc00", "arguments_json": '{"q": "a\ud800b"}'}
        reply = Message(
            new_id(),
            conv.id,
            None,
            ROLE_ASSISTANT,
            "text \ud83d alone",
            reasoning="r\udfff",
            tool_calls=[call],
            meta={"note": "m\ud800"},
        )
        store.add_message(reply)
        store.save_partial(reply.id, "more \ud800", "\udc00")
        store.finalise_message(reply)
        tree = store.load_tree(conv.id)
    kept = tree.get(reply.id)
    assert tree.conversation.title == "t\ufffd"
    assert kept.content == "text \ufffd alone"
    assert kept.reasoning == "r\ufffd"
    assert kept.tool_calls[0]["arguments_json"] == '{"q": "a\ufffdb"}'
    assert kept.tool_calls[0]["name"] == "look\ufffd"
    assert kept.meta == {"note": "m\ufffd"}

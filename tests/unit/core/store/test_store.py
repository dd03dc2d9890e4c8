"""ChatStore on real SQLite files: conversations, messages, streaming saves, trash."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    STATUS_DONE,
    STATUS_INTERRUPTED,
    STATUS_STOPPED,
    STATUS_STREAMING,
    Conversation,
    Message,
    new_id,
)
from flarechat.core.store import (
    DB_FILENAME,
    SCHEMA_VERSION,
    STREAM_SAVE_INTERVAL,
    ChatStore,
    NotFound,
    StoreError,
    default_path,
    open_store,
)


class Clock:
    """A hand-moved clock so ordering and purge tests never sleep."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = 1.0) -> float:
        self.now += seconds
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> Iterator[ChatStore]:
    with ChatStore(tmp_path / DB_FILENAME, clock=clock) as s:
        yield s


def conversation(clock: Clock, **fields: object) -> Conversation:
    at = clock.tick()
    return Conversation(id=new_id(), created_at=at, updated_at=at, **fields)  # type: ignore[arg-type]


def message(conv: Conversation, parent: Message | None, clock: Clock, **fields: object) -> Message:
    values: dict[str, object] = {"role": ROLE_USER, "content": "hello"} | fields
    return Message(
        id=new_id(),
        conversation_id=conv.id,
        parent_id=None if parent is None else parent.id,
        created_at=clock.tick(),
        **values,  # type: ignore[arg-type]
    )


def raw(path: Path, sql: str, *args: object) -> list[tuple[object, ...]]:
    """Look at the file with a separate plain connection (what another process would see)."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.execute(sql, args))
    finally:
        conn.close()


def test_fresh_file_gets_wal_and_current_schema(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path, clock=clock) as s:
        assert s.report.migration is not None
        assert s.report.migration.to_version == SCHEMA_VERSION
        assert s.report.migration.backup is None  # nothing to back up in a new file
    assert raw(path, "PRAGMA journal_mode") == [("wal",)]
    assert raw(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


def test_connection_pragmas(store: ChatStore) -> None:
    conn = store._conn  # the pragmas are per connection, so ask this one
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_default_path_is_in_profile_data_dir(isolated_profile: Path) -> None:
    assert default_path() == isolated_profile / "data" / DB_FILENAME
    assert STREAM_SAVE_INTERVAL <= 1.0  # the issue promises a save at least once a second


def test_conversation_round_trip(store: ChatStore, clock: Clock) -> None:
    conv = conversation(
        clock, title="Trip", model="@cf/m", system_prompt="Be brief", params={"temperature": 0.2}
    )
    store.create_conversation(conv)
    assert store.get_conversation(conv.id) == conv


def test_create_default_conversation(store: ChatStore) -> None:
    conv = store.create_conversation()
    assert store.get_conversation(conv.id).title == conv.title


def test_update_changes_only_given_fields(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock, model="@cf/a", system_prompt="S"))
    updated = store.update_conversation(conv.id, title="Renamed", pinned=True, params={"top_p": 1})
    assert (updated.title, updated.pinned, updated.params) == ("Renamed", True, {"top_p": 1})
    assert (updated.model, updated.system_prompt) == ("@cf/a", "S")
    assert updated.updated_at == conv.updated_at  # renaming does not reorder the sidebar
    assert store.update_conversation(conv.id, model=None).model is None


def test_unknown_ids_raise_not_found(store: ChatStore, clock: Clock) -> None:
    with pytest.raises(NotFound):
        store.get_conversation("nope")
    with pytest.raises(NotFound):
        store.update_conversation("nope", title="x")
    with pytest.raises(NotFound):
        store.delete_conversation("nope")
    with pytest.raises(NotFound):
        store.load_tree("nope")
    with pytest.raises(NotFound):
        store.save_partial("nope", "a", "")
    orphan = message(Conversation(id="nope"), None, clock)
    with pytest.raises(NotFound):
        store.add_message(orphan)


def test_list_pinned_first_then_recent(store: ChatStore, clock: Clock) -> None:
    old, mid, new = (store.create_conversation(conversation(clock)) for _ in range(3))
    store.update_conversation(old.id, pinned=True)
    clock.tick()
    store.add_message(message(mid, None, clock))  # activity moves mid above new
    assert [s.id for s in store.list_conversations()] == [old.id, mid.id, new.id]
    summary = store.list_conversations()[0]
    assert (summary.pinned, summary.title, summary.created_at) == (True, old.title, old.created_at)


def test_messages_round_trip_with_records(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock))
    user = message(conv, None, clock, content="Hi ✓ 日本")
    reply = message(
        conv,
        user,
        clock,
        role=ROLE_ASSISTANT,
        content="Hello",
        reasoning="think",
        model="@cf/m",
        finish_reason="stop",
        request={"model": "@cf/m", "params": {"max_tokens": 2048}},
        usage={"prompt_tokens": 3, "completion_tokens": 1, "neurons": 0.5},
        meta={"log_id": "L", "cache_status": "HIT"},
        timings={"ttft": 0.1, "duration": 0.9},
    )
    store.add_message(user)
    store.add_message(reply)
    tree = store.load_tree(conv.id)
    assert tree.path() == [user, reply]


def test_add_message_bumps_conversation_and_persists_selection(
    store: ChatStore, clock: Clock
) -> None:
    conv = store.create_conversation(conversation(clock))
    user = message(conv, None, clock)
    first = message(conv, user, clock, role=ROLE_ASSISTANT, content="one")
    second = message(conv, user, clock, role=ROLE_ASSISTANT, content="two")
    for item in (user, first, second):
        store.add_message(item)
    assert store.get_conversation(conv.id).updated_at == clock.now
    store.update_conversation(conv.id, selected={None: user.id, user.id: first.id})
    assert [m.content for m in store.load_tree(conv.id).path()] == ["hello", "one"]
    regenerated = message(conv, user, clock, role=ROLE_ASSISTANT, content="three")
    store.add_message(regenerated)  # a regenerate must show, even after an older choice
    tree = store.load_tree(conv.id)
    assert [m.content for m in tree.path()] == ["hello", "three"]
    assert [m.content for m in tree.siblings(first.id)] == ["one", "two", "three"]


def test_streaming_saves_then_finalise(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock))
    user = message(conv, None, clock)
    reply = message(conv, user, clock, role=ROLE_ASSISTANT, content="", status=STATUS_STREAMING)
    store.add_message(user)
    store.add_message(reply)
    store.save_partial(reply.id, "Hel", "hmm")
    store.save_partial(reply.id, "Hello wor", "hmm, ok")
    saved = store.load_tree(conv.id).get(reply.id)
    assert (saved.content, saved.reasoning, saved.status) == ("Hello wor", "hmm, ok", "streaming")
    reply.content, reply.reasoning, reply.status = "Hello world", "hmm, ok", STATUS_STOPPED
    reply.usage, reply.finish_reason = {"total_tokens": 9}, "stop"
    reply.error = {"kind": "cancelled", "message": "Stopped by you"}
    store.finalise_message(reply)
    assert store.load_tree(conv.id).get(reply.id) == reply


def test_finalise_unknown_message(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock))
    with pytest.raises(NotFound):
        store.finalise_message(message(conv, None, clock))


def test_crashed_stream_becomes_interrupted_and_keeps_text(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path, clock=clock) as first:
        conv = first.create_conversation(conversation(clock))
        user = message(conv, None, clock)
        reply = message(conv, user, clock, role=ROLE_ASSISTANT, status=STATUS_STREAMING)
        first.add_message(user)
        first.add_message(reply)
        first.save_partial(reply.id, "partial answer", "")
    # the app "crashed": nobody finalised. The next start marks it.
    reopened = open_store(path, clock=clock)
    try:
        assert reopened.report.interrupted == 1
        saved = reopened.load_tree(conv.id).get(reply.id)
        assert (saved.status, saved.content) == (STATUS_INTERRUPTED, "partial answer")
        assert reopened.load_tree(conv.id).get(user.id).status == STATUS_DONE
        assert reopened.mark_unfinished_as_interrupted() == 0
        reopened.save_partial(
            reply.id, "partial answer, more", ""
        )  # its writer was alive after all
        assert reopened.load_tree(conv.id).get(reply.id).status == STATUS_STREAMING
    finally:
        reopened.close()


def test_delete_restore_purge(store: ChatStore, clock: Clock) -> None:
    keep, gone = (store.create_conversation(conversation(clock)) for _ in range(2))
    store.add_message(message(gone, None, clock))
    store.delete_conversation(gone.id)
    assert [s.id for s in store.list_conversations()] == [keep.id]
    assert store.get_conversation(gone.id).deleted_at == clock.now
    store.restore_conversation(gone.id)
    assert {s.id for s in store.list_conversations()} == {keep.id, gone.id}
    store.delete_conversation(gone.id)
    clock.tick(100)
    assert store.purge_deleted(older_than=1000) == 0  # still inside the undo window
    assert store.purge_deleted(older_than=50) == 1
    with pytest.raises(NotFound):
        store.get_conversation(gone.id)
    assert raw(store.path, "SELECT count(*) FROM messages") == [(0,)]  # cascade
    assert store.check_integrity() == []


def test_tokens_in_request_records_are_scrubbed_on_storing(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock))
    request = {
        "model": "@cf/m",
        "max_tokens": 2048,
        "api_token": "tok-SECRET-1",
        "headers": {"Authorization": "Bearer tok-SECRET-2", "cf-aig-authorization": "x"},
        "curl": "curl -H 'Authorization: Bearer tok-SECRET-3' https://example",
        "gateway": {"gateway_token": "tok-SECRET-4", "Api-Key": "tok-SECRET-5"},
    }
    user = message(conv, None, clock, request=request)
    store.add_message(user)
    user.request = request
    store.finalise_message(user)
    dump = "\n".join(str(row) for row in raw(store.path, "SELECT * FROM messages"))
    assert "tok-SECRET" not in dump
    stored = store.load_tree(conv.id).get(user.id).request
    assert stored is not None
    assert (stored["model"], stored["max_tokens"]) == ("@cf/m", 2048)
    assert stored["headers"]["Authorization"] == "[redacted]"


def test_every_write_is_one_transaction(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock))
    user = message(conv, None, clock)
    store.add_message(user)
    duplicate = message(conv, None, clock)
    duplicate.id = user.id
    with pytest.raises(StoreError, match="already in the chat database"):
        store.add_message(duplicate)  # the insert fails: the updated_at bump must roll back too
    assert store.get_conversation(conv.id).updated_at < clock.now
    assert not store._conn.in_transaction


def test_store_built_on_one_thread_works_on_another(tmp_path: Path) -> None:
    import concurrent.futures

    s = ChatStore(tmp_path / DB_FILENAME)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        conv = pool.submit(s.create_conversation).result()
        assert pool.submit(s.get_conversation, conv.id).result() == conv
        pool.submit(s.close).result()


def saved_selection(store: ChatStore, conversation_id: str) -> str:
    [(text,)] = raw(
        store.path, "SELECT selected_json FROM conversations WHERE id = ?", conversation_id
    )
    return str(text)


def test_saved_selection_stays_small(store: ChatStore, clock: Clock) -> None:
    conv = store.create_conversation(conversation(clock))
    chain: list[Message] = []
    for _ in range(50):
        chain.append(message(conv, chain[-1] if chain else None, clock))
        store.add_message(chain[-1])
    assert saved_selection(store, conv.id) == "{}"  # newest-child defaults need no entry
    alternative = message(conv, chain[9], clock, content="other branch")
    store.add_message(alternative)
    tree = store.load_tree(conv.id)
    assert tree.last() == alternative
    tree.select(chain[10].id)
    store.update_conversation(conv.id, selected={**tree.selected, "bogus": chain[0].id})
    assert json.loads(saved_selection(store, conv.id)) == {chain[9].id: chain[10].id}
    assert [m.id for m in store.load_tree(conv.id).path()] == [m.id for m in chain]


def test_added_message_older_than_its_sibling_is_still_shown(
    store: ChatStore, clock: Clock
) -> None:
    conv = store.create_conversation(conversation(clock))
    user = message(conv, None, clock)
    newer = message(conv, user, clock, role=ROLE_ASSISTANT, content="newer")
    older = message(conv, user, clock, role=ROLE_ASSISTANT, content="older")
    older.created_at = user.created_at + 0.5  # e.g. a clock step back between the two
    for item in (user, newer, older):
        store.add_message(item)
    assert [m.content for m in store.load_tree(conv.id).path()] == ["hello", "older"]

"""The store under damage and pressure: corrupt files, read-only, full disk, two instances."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from flarechat.core.conversation import ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import (
    DB_FILENAME,
    ChatStore,
    StoreCorrupt,
    StoreFull,
    StoreReadOnly,
    open_store,
)

NOW = 1_700_000_000.0
NOW_STAMP = "20231114T221320Z"
PAGE = 4096
WRITES_PER_INSTANCE = 150


def fill(store: ChatStore, count: int, *, text: str = "message") -> Conversation:
    conv = store.create_conversation(Conversation(id=new_id(), title="Filled"))
    parent = None
    for index in range(count):
        msg = Message(new_id(), conv.id, parent, ROLE_USER, f"{text} {index} " * 20)
        store.add_message(msg)
        parent = msg.id
    return conv


def assert_fresh_after_move(store: ChatStore, path: Path, original: bytes) -> None:
    moved = path.with_name(f"{DB_FILENAME}.corrupt-{NOW_STAMP}")
    assert store.report.moved_aside == moved
    assert moved.read_bytes() == original  # moved, never overwritten
    assert store.list_conversations() == []
    assert store.check_integrity() == []
    assert "damaged" in store.report.problems[0]
    assert str(moved) in store.report.problems[0]
    store.create_conversation()  # and the new one works


def test_garbage_file_is_moved_aside_and_reported(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    garbage = random.Random(7).randbytes(64 * 1024)
    path.write_bytes(garbage)
    with pytest.raises(StoreCorrupt, match="damaged"):
        ChatStore(path)
    with open_store(path, clock=lambda: NOW) as store:
        assert store.report.corrupt_detail == "file is not a database"
        assert_fresh_after_move(store, path, garbage)


def test_damaged_pages_are_detected_by_integrity_check(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path) as store:
        fill(store, 300)
    data = bytearray(path.read_bytes())
    rng = random.Random(1)
    for offset in range(PAGE * 5, PAGE * 9):  # keep the header: only the content is damaged
        data[offset] = rng.randrange(256)
    path.write_bytes(bytes(data))
    with open_store(path, clock=lambda: NOW) as store:
        assert store.report.corrupt_detail
        assert_fresh_after_move(store, path, bytes(data))


def test_side_files_move_with_the_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    path.write_bytes(b"not sqlite at all" * 100)
    wal = tmp_path / f"{DB_FILENAME}-wal"
    wal.write_bytes(b"stale wal")
    with open_store(path, clock=lambda: NOW) as store:
        assert store.report.moved_aside is not None
        moved_wal = tmp_path / f"{store.report.moved_aside.name}-wal"
        assert moved_wal.read_bytes() == b"stale wal"


def test_corrupt_twice_in_one_second_keeps_both(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    for attempt in (b"first", b"second"):
        path.write_bytes(attempt * 1000)
        open_store(path, clock=lambda: NOW).close()
    assert (tmp_path / f"{DB_FILENAME}.corrupt-{NOW_STAMP}").read_bytes() == b"first" * 1000
    assert (tmp_path / f"{DB_FILENAME}.corrupt-{NOW_STAMP}-2").read_bytes() == b"second" * 1000


def test_read_only_database_reads_but_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path) as store:
        conv = fill(store, 3)
    # Tests run as root, where chmod 0444 does not stop writes: open with ?mode=ro instead.
    with open_store(path, read_only=True) as store:
        assert store.report.read_only
        assert "read-only" in store.report.problems[0]
        tree = store.load_tree(conv.id)
        assert len(tree) == 3
        assert store.search("message")
        last = tree.last()
        assert last is not None
        writes: list[Callable[[], object]] = [
            store.create_conversation,
            lambda: store.update_conversation(conv.id, title="x"),
            lambda: store.delete_conversation(conv.id),
            lambda: store.add_message(Message(new_id(), conv.id, None, ROLE_USER, "hi")),
            lambda: store.save_partial(last.id, "changed", ""),
            lambda: store.finalise_message(last),
            lambda: store.mark_unfinished_as_interrupted(),
        ]
        for write in writes:
            with pytest.raises(StoreReadOnly, match="The database is read-only"):
                write()
        assert store.load_tree(conv.id).get(last.id).content == last.content


def test_read_only_database_that_needs_migration(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    sqlite3.connect(path).close()
    with pytest.raises(StoreReadOnly):
        open_store(path, read_only=True)


def test_full_disk_raises_store_full_and_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path) as store:
        conv = fill(store, 5)
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's max_page_count makes the file "full" exactly like a full disk (SQLITE_FULL).
    with ChatStore(path, max_page_count=pages + 1) as store:
        big = Message(new_id(), conv.id, None, ROLE_USER, "x" * 200_000)
        with pytest.raises(StoreFull, match="The disk is full"):
            store.add_message(big)
        assert big.id not in store.load_tree(conv.id)
        assert len(store.load_tree(conv.id)) == 5
        assert store.check_integrity() == []
        assert not store._conn.in_transaction
    with open_store(path) as store:
        store.add_message(big)  # with room again, the same write succeeds
        assert big.id in store.load_tree(conv.id)


def test_two_instances_in_threads_do_not_corrupt_each_other(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path) as setup:
        shared = setup.create_conversation()

    def instance(name: str) -> None:
        with ChatStore(path) as store:
            own = store.create_conversation(Conversation(id=new_id(), title=name))
            for index in range(WRITES_PER_INSTANCE):
                conv = own if index % 2 else shared
                store.add_message(Message(new_id(), conv.id, None, ROLE_USER, f"{name} {index}"))
                store.search(name)
                store.list_conversations()

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(instance, name) for name in ("alpha", "beta")]
        for future in futures:
            future.result()  # re-raises anything that went wrong in that instance
    with open_store(path) as store:
        assert store.check_integrity() == []
        assert len(store.load_tree(shared.id)) == WRITES_PER_INSTANCE
        assert len(store.list_conversations()) == 3
        assert len(store.search("alpha", limit=1000)) == WRITES_PER_INSTANCE + 1  # + its title


WRITER = """
import sys
from pathlib import Path
from flarechat.core.conversation import Message, new_id
from flarechat.core.store import ChatStore
with ChatStore(Path(sys.argv[1])) as store:
    conv = store.create_conversation()
    for index in range(int(sys.argv[2])):
        store.add_message(Message(new_id(), conv.id, None, "user", f"from process {index}"))
"""


def test_two_processes_do_not_corrupt_each_other(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    ChatStore(path).close()
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(WRITES_PER_INSTANCE)],
        stderr=subprocess.PIPE,
    )
    with ChatStore(path) as store:
        fill(store, WRITES_PER_INSTANCE, text="from parent")
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr.decode()
    with open_store(path) as store:
        assert store.check_integrity() == []
        assert len(store.list_conversations()) == 2
        assert len(store.search("process", limit=1000)) == WRITES_PER_INSTANCE
        assert len(store.search("parent", limit=1000)) == WRITES_PER_INSTANCE

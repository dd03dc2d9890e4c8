"""The store on a real full disk (a tmpfs filled to ENOSPC: support.full_disk): it says the
disk is full, never "read-only", and still shows the history it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from flarechat.core.conversation import ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import DB_FILENAME, ChatStore, StoreFull, StoreReadOnly, open_store
from support.full_disk import fill, full_disk

TITLE = "Written before the disk filled"
FULL = "The disk is full"


def _history(disk: Path) -> None:
    with ChatStore(disk / DB_FILENAME) as store:
        conv = store.create_conversation(Conversation(id="c1", title=TITLE))
        store.add_message(Message(new_id(), conv.id, None, ROLE_USER, "still here"))


def test_a_database_closed_cleanly_on_a_full_disk_opens_read_only_saying_the_disk_is_full(
    tmp_path: Path,
) -> None:
    # SQLite cannot make the -shm it needs even to read ("disk I/O error"): that is the disk.
    with full_disk(tmp_path / "disk", _history) as disk, open_store(disk / DB_FILENAME) as store:
        assert store.read_only
        reason = store.report.read_only_reason
        assert reason is not None
        assert reason.startswith(FULL)
        assert "read-only" not in reason
        assert [c.title for c in store.list_conversations()] == [TITLE]
        assert [m.content for m in store.load_tree("c1")] == ["still here"]
        with pytest.raises(StoreFull, match=FULL):
            store.create_conversation()


def test_a_new_database_on_a_full_disk_is_refused_as_a_full_disk_not_read_only(
    tmp_path: Path,
) -> None:
    with full_disk(tmp_path / "disk") as disk:
        with pytest.raises(StoreFull, match=FULL) as refused:
            open_store(disk / DB_FILENAME)
        assert not isinstance(refused.value, StoreReadOnly)


def test_a_store_whose_disk_fills_while_open_says_so_on_each_write(tmp_path: Path) -> None:
    with full_disk(tmp_path / "disk", _history) as disk:
        (disk / "filler").unlink()  # room to open (the -shm and -wal), then full again
        with open_store(disk / DB_FILENAME) as store:
            fill(disk / "filler")
            message = Message(new_id(), "c1", None, ROLE_USER, "x" * 200_000)  # > a page
            with pytest.raises(StoreFull, match=FULL):
                store.add_message(message)
            assert [c.title for c in store.list_conversations()] == [TITLE]

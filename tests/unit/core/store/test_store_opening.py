"""AsyncChatStore.opening: returned at once, the open runs first on the worker thread and every
call made meanwhile queues behind it, in order (start-up builds the window meanwhile, issue #12)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from flarechat.core.conversation import Conversation, new_id
from flarechat.core.store import DB_FILENAME, AsyncChatStore, ChatStore, StoreError

pytestmark = pytest.mark.asyncio

#: Long enough for a call to have run had it not been queued behind the held open.
HELD_S = 0.1


def _stored(path: Path, title: str) -> None:
    with ChatStore(path) as chat:
        chat.create_conversation(Conversation(id=new_id(), title=title))


def _write_lock(path: Path) -> sqlite3.Connection:
    """Another connection's write transaction: the open's own write (marking unfinished
    replies) waits for it (busy timeout), so the open is held until it is rolled back."""
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    return lock


async def test_calls_made_while_opening_run_after_the_open_in_order(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    _stored(path, "Kept")
    lock = _write_lock(path)
    store = AsyncChatStore.opening(path)
    listing = asyncio.ensure_future(store.list_conversations())
    creating = asyncio.ensure_future(store.create_conversation(Conversation(id=new_id())))
    await asyncio.sleep(HELD_S)
    held = (listing.done(), creating.done())
    lock.execute("ROLLBACK")
    lock.close()
    summaries = await listing
    await creating
    report = await store.opened()
    await store.close()
    assert held == (False, False)
    assert [summary.title for summary in summaries] == ["Kept"]  # asked before the create
    assert report.problems == []


async def test_a_failed_open_fails_every_call_and_still_closes(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    path.mkdir()  # a folder where the database file should be
    store = AsyncChatStore.opening(path)
    listing = asyncio.ensure_future(store.list_conversations())
    with pytest.raises(StoreError, match="folder"):
        await store.opened()
    with pytest.raises(StoreError):
        await listing
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.list_conversations()


async def test_closing_while_opening_closes_the_connection_it_made(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    _stored(path, "Kept")
    store = AsyncChatStore.opening(path)
    await store.close()
    side_files = await asyncio.to_thread(lambda: list(tmp_path.glob(f"{DB_FILENAME}-*")))
    assert side_files == []  # SQLite removes -wal/-shm when the last connection closes


async def test_a_held_open_waits_for_release_and_calls_queue_behind_it(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    _stored(path, "Kept")
    store = AsyncChatStore.opening(path, held=True)
    opened = asyncio.ensure_future(store.opened())
    listing = asyncio.ensure_future(store.list_conversations())
    await asyncio.sleep(HELD_S)
    held = (opened.done(), listing.done())
    store.release()
    report = await opened
    summaries = await listing
    await store.close()
    assert held == (False, False)
    assert [summary.title for summary in summaries] == ["Kept"]
    assert report.problems == []


async def test_closing_a_held_open_never_released_closes_the_connection(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    _stored(path, "Kept")
    store = AsyncChatStore.opening(path, held=True)
    await store.close()
    side_files = await asyncio.to_thread(lambda: list(tmp_path.glob(f"{DB_FILENAME}-*")))
    assert side_files == []
    with pytest.raises(StoreError, match="closed"):
        await store.list_conversations()

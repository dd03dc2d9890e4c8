"""AsyncChatStore: one worker thread, timeouts, copies, ordered calls, close."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest

from flarechat.core.conversation import ROLE_USER, STATUS_DONE, Message, new_id
from flarechat.core.export import export_all, import_all
from flarechat.core.store import (
    DB_FILENAME,
    AsyncChatStore,
    ChatStore,
    NotFound,
    StoreError,
    StoreTimeout,
)
from flarechat.core.store._async import _run_on

pytestmark = pytest.mark.asyncio

HANDFUL = 20
#: Short on purpose: the blocked call below never finishes before its event is set.
SHORT_TIMEOUT = 0.2
#: Bound on a call that should simply work: generous, so a busy machine cannot time it out.
PATIENCE = 30.0


def thread_id(_store: ChatStore) -> int:
    return threading.get_ident()


async def test_open_write_read_search_close(tmp_path: Path) -> None:
    store = await AsyncChatStore.open(tmp_path / DB_FILENAME)
    try:
        assert store.report.migration is not None
        conv = await store.create_conversation()
        user = Message(new_id(), conv.id, None, ROLE_USER, "hello async world")
        await store.add_message(user)
        await store.save_partial(user.id, "hello async world, edited", "")
        user.content = "final words"
        await store.finalise_message(user)
        await store.update_conversation(conv.id, title="Async", pinned=True)
        tree = await store.load_tree(conv.id)
        assert [m.content for m in tree.path()] == ["final words"]
        assert [s.title for s in await store.list_conversations()] == ["Async"]
        assert [h.message_id for h in await store.search("final")] == [user.id]
        assert await store.mark_unfinished_as_interrupted() == 0
        assert await store.check_integrity() == []
        await store.delete_conversation(conv.id)
        await store.restore_conversation(conv.id)
        assert (await store.get_conversation(conv.id)).deleted_at is None
        assert await store.purge_deleted(0) == 0
    finally:
        await store.close()


async def test_every_call_runs_on_the_same_worker_thread(tmp_path: Path) -> None:
    store = await AsyncChatStore.open(tmp_path / DB_FILENAME)
    try:
        ids = {await store.run(thread_id) for _ in range(HANDFUL)}
        assert len(ids) == 1
        assert ids != {threading.get_ident()}
    finally:
        await store.close()


async def test_concurrent_calls_run_in_order(tmp_path: Path) -> None:
    store = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME))
    try:
        conv = await store.create_conversation()
        chain: list[Message] = []
        for index in range(HANDFUL):
            parent = chain[-1].id if chain else None
            chain.append(Message(new_id(), conv.id, parent, ROLE_USER, f"m{index}"))
        # parents must be stored before children: gather only works if order is kept
        await asyncio.gather(*(store.add_message(m) for m in chain))
        tree = await store.load_tree(conv.id)
        assert [m.id for m in tree.path()] == [m.id for m in chain]
    finally:
        await store.close()


async def test_messages_are_copied_when_handed_over(tmp_path: Path) -> None:
    store = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME))
    try:
        conv = await store.create_conversation()
        msg = Message(new_id(), conv.id, None, ROLE_USER, "as sent", usage={"n": 1})
        task = asyncio.create_task(store.add_message(msg))
        await asyncio.sleep(0)  # the call has been handed to the worker
        msg.content = "changed by the caller afterwards"
        assert msg.usage is not None
        msg.usage["n"] = 2
        await task
        stored = (await store.load_tree(conv.id)).get(msg.id)
        assert (stored.content, stored.usage, stored.status) == ("as sent", {"n": 1}, STATUS_DONE)
    finally:
        await store.close()


async def test_store_errors_cross_the_thread(tmp_path: Path) -> None:
    store = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME))
    try:
        with pytest.raises(NotFound):
            await store.get_conversation("missing")
    finally:
        await store.close()


async def test_a_stuck_call_times_out_and_later_calls_work(tmp_path: Path) -> None:
    store = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME), timeout=SHORT_TIMEOUT)
    release = threading.Event()

    def stuck(_store: ChatStore) -> None:
        release.wait()

    try:
        with pytest.raises(StoreTimeout, match="did not answer"):
            await store.run(stuck)
        release.set()
        store.timeout = PATIENCE  # a later call works; how fast is not this test's business
        assert await store.list_conversations() == []
    finally:
        release.set()
        await store.close()


async def test_close_is_idempotent_and_final(tmp_path: Path) -> None:
    store = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME))
    await store.close()
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.list_conversations()
    with pytest.raises(StoreError):
        store.store.list_conversations()  # the connection itself is closed too


async def test_open_reports_recovery(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    path.write_bytes(b"\x00garbage" * 512)
    store = await AsyncChatStore.open(path)
    try:
        assert store.report.moved_aside is not None
        assert store.report.moved_aside.read_bytes() == b"\x00garbage" * 512
    finally:
        await store.close()


async def test_export_and_import_run_on_the_worker(tmp_path: Path) -> None:
    source = AsyncChatStore(ChatStore(tmp_path / DB_FILENAME))
    target = AsyncChatStore(ChatStore(tmp_path / "target.sqlite3"))
    try:
        conv = await source.create_conversation()
        await source.add_message(Message(new_id(), conv.id, None, ROLE_USER, "carry me over"))
        data = await source.run_bulk(export_all)
        report = await target.run_bulk(import_all, data)
        assert report.added == 1
        assert [h.conversation_id for h in await target.search("carry")] == [conv.id]
    finally:
        await source.close()
        await target.close()


class _InlineExecutor(Executor):
    """Runs each call at once in ``submit``: its result is ready before the caller waits."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


async def test_a_cancel_that_lands_as_the_call_finishes_is_not_swallowed() -> None:
    """Python 3.11's ``asyncio.wait_for`` returned the result of a call that finished in the
    same loop turn as a cancel, dropping the cancel: a reply's autosave then never ended, and a
    Ctrl+C during a store write could be lost. The store's wait must let the cancel through."""
    executor = cast(ThreadPoolExecutor, _InlineExecutor())
    task = asyncio.create_task(_run_on(executor, lambda: "written", seconds=10))
    await asyncio.sleep(0)  # the task has submitted the call and waits; its result is queued
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

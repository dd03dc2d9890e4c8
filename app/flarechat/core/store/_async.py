"""AsyncChatStore: the GUI-facing store; every call runs on one worker thread, with a timeout."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from flarechat.core.conversation import Conversation, ConversationTree, Message
from flarechat.core.ledger import LedgerRow
from flarechat.core.store._chat import ChatStore
from flarechat.core.store._errors import StoreError, StoreTimeout
from flarechat.core.store._open import open_store
from flarechat.core.store._search import SearchHit
from flarechat.core.store._types import UNSET, ConversationSummary, OpenReport, Revision, Unset

__all__ = ["BULK_TIMEOUT", "DEFAULT_TIMEOUT", "AsyncChatStore"]

#: Seconds a call may take, including waiting up to BUSY_TIMEOUT_MS for another instance.
DEFAULT_TIMEOUT = 15.0
#: Opening (migrate, integrity check) and bulk work (export, import) on a large file.
BULK_TIMEOUT = 120.0
_THREAD_NAME = "flarechat-store"

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _new_executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=_THREAD_NAME)


async def _run_on(executor: ThreadPoolExecutor, call: Callable[[], _T], *, seconds: float) -> _T:
    future = asyncio.get_running_loop().run_in_executor(executor, call)
    return await _within(future, seconds=seconds)


async def _within(future: asyncio.Future[_T], *, seconds: float) -> _T:
    try:
        # Not ``asyncio.wait_for``: on Python 3.11 it returns the result of a call that finished
        # in the same loop turn as a cancel, and the cancel is lost (a reply's autosave that
        # never ended; a Ctrl+C that did nothing). ``asyncio.timeout`` lets the cancel through.
        async with asyncio.timeout(seconds):
            return await future
    except TimeoutError as error:
        # A call that had not started is cancelled; one already running still finishes.
        raise StoreTimeout(seconds) from error


def _on_store(
    owner: AsyncChatStore,
    func: Callable[Concatenate[ChatStore, _P], _T],
    *args: _P.args,
    **kwargs: _P.kwargs,
) -> Callable[[], _T]:
    """``func(owner.store, ...)``, the store looked up when the call runs on the worker thread
    (after an open started by ``AsyncChatStore.opening`` that was queued ahead of it)."""

    def call() -> _T:
        return func(owner.store, *args, **kwargs)

    return call


class AsyncChatStore:
    """ChatStore for the event loop: same methods, ``async``, never blocking the caller's thread.

    The connection is only ever touched by one worker thread (a one-thread executor), so calls
    run in the order they were made. A call that exceeds ``timeout`` raises StoreTimeout.
    Messages are copied when handed over, so the caller may keep mutating its own.
    """

    def __init__(
        self,
        store: ChatStore | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        executor: ThreadPoolExecutor | None = None,
    ) -> None:
        self._store = store
        self.timeout = timeout
        self._executor = executor if executor is not None else _new_executor()
        self._closed = False
        #: set by ``opening``: the open still running on the worker, ahead of every call
        self._opening: asyncio.Future[None] | None = None
        #: what a held open (``opening(held=True)``) waits for on the worker: ``release``
        self._released = threading.Event()

    @property
    def store(self) -> ChatStore:
        """The open ChatStore (for calls on the worker thread, where the open ran first)."""
        if self._store is None:
            raise StoreError("The chat database could not be opened.")
        return self._store

    @classmethod
    async def open(cls, path: Path, *, call_timeout: float = DEFAULT_TIMEOUT) -> AsyncChatStore:
        """open_store() on the worker thread (check, recover, migrate), wrapped.

        Opening itself may take up to BULK_TIMEOUT; later calls get ``call_timeout`` each.
        """
        executor = _new_executor()
        try:
            store = await _run_on(
                executor, functools.partial(open_store, path), seconds=BULK_TIMEOUT
            )
        except BaseException:
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        return cls(store, timeout=call_timeout, executor=executor)

    @classmethod
    def opening(
        cls, path: Path, *, call_timeout: float = DEFAULT_TIMEOUT, held: bool = False
    ) -> AsyncChatStore:
        """Like open(), but returned at once while open_store() runs on the worker thread.

        Calls made meanwhile queue behind the open on the one worker, so nothing is read or
        written before the file was checked (and recovered); they wait up to BULK_TIMEOUT, as
        the open may. ``opened()`` waits for the open and raises its StoreError; after a
        failed open every call raises StoreError. For start-up: the window is built and
        painted while a large history is checked (issue #12).

        ``held``: the open waits on the worker until ``release()`` (calls still queue behind
        it). Start-up releases it at the window's first paint: the check of a large history
        (``PRAGMA quick_check``, ~25 ms of CPU at 50,000 messages) would share a two-core
        machine with the window being built and slow its first paint by more than that.
        """
        store = cls(None, timeout=call_timeout)
        if not held:
            store.release()

        def open_on_worker() -> None:
            store._released.wait()
            store._store = open_store(path)

        store._opening = asyncio.ensure_future(
            _run_on(store._executor, open_on_worker, seconds=BULK_TIMEOUT)
        )
        return store

    def release(self) -> None:
        """Let an open held by ``opening(held=True)`` start (at once otherwise). Idempotent."""
        self._released.set()

    async def opened(self) -> OpenReport:
        """Wait for the open started by ``opening`` (at once otherwise); its report."""
        if self._opening is not None:
            await asyncio.shield(self._opening)
        return self.report

    def _seconds(self, seconds: float) -> float:
        """A call queued behind a running open may wait as long as the open may take."""
        if self._opening is not None and not self._opening.done():
            return max(seconds, BULK_TIMEOUT)
        return seconds

    @property
    def report(self) -> OpenReport:
        return self.store.report

    @property
    def read_only(self) -> bool:
        """Changes won't be saved (``report.read_only_reason`` says why, for the UI)."""
        return self.store.read_only

    async def run(
        self, func: Callable[Concatenate[ChatStore, _P], _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """Run ``func(store, ...)`` on the worker thread, within ``timeout``."""
        return await self._submit(_on_store(self, func, *args, **kwargs), self.timeout)

    async def run_bulk(
        self, func: Callable[Concatenate[ChatStore, _P], _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """Like run(), with BULK_TIMEOUT: for export_all / import_all of a whole history."""
        call = _on_store(self, func, *args, **kwargs)
        return await self._submit(call, max(self.timeout, BULK_TIMEOUT))

    async def _submit(self, call: Callable[[], _T], seconds: float) -> _T:
        if self._closed:
            raise StoreError("The chat database is closed.")
        return await _run_on(self._executor, call, seconds=self._seconds(seconds))

    async def remember_secrets(self, secrets: Iterable[str | None]) -> None:
        """ChatStore.remember_secrets: records never hold these tokens, in any encoding."""
        await self.run(ChatStore.remember_secrets, tuple(secrets))

    async def close(self) -> None:
        """Close the connection on its own thread, then stop the thread. Idempotent."""
        if self._closed:
            return
        if self._opening is not None:
            self.release()  # a held open runs now, and is waited for
            with contextlib.suppress(StoreError):  # a connection it makes is closed below
                await asyncio.shield(self._opening)
        if self._store is None:  # the open failed: there is no connection
            self._closed = True
            self._executor.shutdown(wait=False, cancel_futures=True)
            return
        try:
            await self.run(ChatStore.close)
        finally:
            self._closed = True
            self._executor.shutdown(wait=False, cancel_futures=True)

    async def check_integrity(self) -> list[str]:
        return await self.run(ChatStore.check_integrity)

    async def create_conversation(self, conversation: Conversation | None = None) -> Conversation:
        return await self.run(ChatStore.create_conversation, copy.deepcopy(conversation))

    async def get_conversation(self, conversation_id: str) -> Conversation:
        return await self.run(ChatStore.get_conversation, conversation_id)

    async def update_conversation(
        self,
        conversation_id: str,
        *,
        title: str | Unset = UNSET,
        pinned: bool | Unset = UNSET,
        model: str | Unset | None = UNSET,
        system_prompt: str | Unset = UNSET,
        params: dict[str, Any] | Unset = UNSET,
        selected: dict[str | None, str] | Unset = UNSET,
    ) -> Conversation:
        return await self.run(
            ChatStore.update_conversation,
            conversation_id,
            title=title,
            pinned=pinned,
            model=model,
            system_prompt=system_prompt,
            params=copy.deepcopy(params),
            selected=copy.deepcopy(selected),
        )

    async def list_conversations(self) -> list[ConversationSummary]:
        return await self.run(ChatStore.list_conversations)

    async def delete_conversation(self, conversation_id: str) -> None:
        await self.run(ChatStore.delete_conversation, conversation_id)

    async def restore_conversation(self, conversation_id: str) -> None:
        await self.run(ChatStore.restore_conversation, conversation_id)

    async def purge_deleted(self, older_than: float) -> int:
        return await self.run(ChatStore.purge_deleted, older_than)

    async def load_tree(self, conversation_id: str) -> ConversationTree:
        return await self.run(ChatStore.load_tree, conversation_id)

    def revision(self, conversation_id: str) -> asyncio.Future[Revision]:
        """ChatStore.revision: equal revisions, nothing of the conversation written between.

        Asked at the call, not when awaited: it counts every write asked for before the call
        and none asked for after (calls run in order). Needs a running event loop.
        """
        if self._closed:
            raise StoreError("The chat database is closed.")
        call = _on_store(self, ChatStore.revision, conversation_id)
        submitted = asyncio.get_running_loop().run_in_executor(self._executor, call)
        return asyncio.ensure_future(_within(submitted, seconds=self._seconds(self.timeout)))

    async def add_message(self, message: Message) -> None:
        await self.run(ChatStore.add_message, copy.deepcopy(message))

    async def save_partial(self, message_id: str, content: str, reasoning: str) -> None:
        await self.run(ChatStore.save_partial, message_id, content, reasoning)

    async def finalise_message(self, message: Message) -> None:
        await self.run(ChatStore.finalise_message, copy.deepcopy(message))

    async def save_pending(self, conversation: Conversation, messages: Sequence[Message]) -> int:
        """ChatStore.save_pending (see its contract): re-save what was kept in memory while the
        store failed — idempotent, one transaction, all or nothing. How many messages were new.
        """
        return await self.run(
            ChatStore.save_pending, copy.deepcopy(conversation), copy.deepcopy(list(messages))
        )

    async def mark_unfinished_as_interrupted(self) -> int:
        return await self.run(ChatStore.mark_unfinished_as_interrupted)

    async def search(
        self, query: str, limit: int | None = 50, *, conversation_id: str | None = None
    ) -> list[SearchHit]:
        return await self.run(ChatStore.search, query, limit, conversation_id=conversation_id)

    async def neurons_today(self, *, now: float | None = None, demo: bool = False) -> float:
        return await self.run(ChatStore.neurons_today, now=now, demo=demo)

    async def replies_today(self, *, now: float | None = None) -> list[LedgerRow]:
        return await self.run(ChatStore.replies_today, now=now)

    async def record_agreement(self, account_id: str, model: str) -> None:
        await self.run(ChatStore.record_agreement, account_id, model)

    async def has_agreed(self, account_id: str, model: str) -> bool:
        return await self.run(ChatStore.has_agreed, account_id, model)

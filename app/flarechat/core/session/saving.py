"""Saving one conversation: every write either lands or is kept in memory and written again
when the database works, so one failed write never loses a conversation."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from flarechat.core.conversation import DEFAULT_TITLE, ROLE_USER, Conversation, Message, auto_title
from flarechat.core.store import UNSET, NotFound, StoreError, Unset, Unstorable
from flarechat.core.tasks import TaskKeeper

__all__ = ["COMMIT_WAIT", "RECOVERY_INTERVAL", "ConversationSaver", "Recovery", "SessionStore"]

log = logging.getLogger(__name__)

#: How long a write on the request path waits before going on in the background: a locked
#: or full database keeps the messages in memory (and says so) instead of holding a reply up.
COMMIT_WAIT = 1.0
#: Seconds between attempts to write what a failed save kept in memory.
RECOVERY_INTERVAL = 2.0
#: A title is made from at most this much of the first message: the rest never shows in
#: it, and collapsing the whitespace of a 1 MB paste took the GUI thread over 50 ms.
TITLE_SOURCE_CHARS = 2_000


class SessionStore(Protocol):
    """The part of ``core.store.AsyncChatStore`` a session writes through."""

    async def create_conversation(
        self, conversation: Conversation | None = None
    ) -> Conversation: ...
    async def add_message(self, message: Message) -> None: ...
    async def save_partial(self, message_id: str, content: str, reasoning: str) -> None: ...
    async def finalise_message(self, message: Message) -> None: ...
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
    ) -> object: ...


#: Reports a failure (its plain words and how many messages wait), or recovery (None, 0).
TroubleReport = Callable[[str | None, int], None]


class ConversationSaver:
    """Writes one conversation's rows, in order: the conversation, then each message.

    A message whose write fails is kept (latest version) with everything after it, and
    ``flush`` writes them all in order once the store answers again; ``report`` hears about
    the failure once and about the recovery once.
    """

    def __init__(
        self,
        store: SessionStore,
        conversation: Conversation,
        *,
        stored: bool,
        report: TroubleReport,
    ) -> None:
        self._store = store
        self._conversation = conversation
        self.stored = stored  # the conversation has its row
        self._report = report
        self._unsaved: dict[str, Message] = {}  # insertion order = write order (parents first)
        #: bumped each time a message is handed in: a write of an older version that ends
        #: after a newer one was handed in must not count as saving the newer one
        self._versions: dict[str, int] = {}
        self._partial: set[str] = set()  # kept messages written as text so far only
        #: set-aside (unstorable) message -> its parent: a child is stored under that instead
        self._set_aside_parents: dict[str, str | None] = {}
        self._fields: dict[str, Any] = {}
        self._failing = False
        self._problem: str | None = None
        self._lock = asyncio.Lock()

    @property
    def unsaved(self) -> int:
        """How many messages are waiting in memory for the database."""
        return len(self._unsaved)

    async def add(self, messages: list[Message]) -> bool:
        """Store new messages (creating the conversation row, titled from its first words);
        True when the conversation row was created by this call."""
        for message in messages:
            self._keep(message, partial=False)
        return await self.flush()

    async def save_partial(self, message: Message) -> None:
        """The text so far of a streaming reply."""
        self._keep(message, partial=True)
        await self.flush()

    async def finalise(self, message: Message) -> None:
        """A message's final record (status, usage, timings…), whether or not it has a row."""
        self._keep(message, partial=False)
        await self.flush()

    async def commit(
        self,
        messages: Sequence[Message],
        *,
        jobs: TaskKeeper,
        on_created: Callable[[], None] | None = None,
    ) -> None:
        """Write whole records, waiting at most COMMIT_WAIT: a slower write goes on as one of
        ``jobs``, and while the database is failing they are only kept for the recovery loop,
        so nothing on the request path waits on a locked or full store. ``on_created`` hears
        when the write created the conversation's row."""
        if not messages:
            return
        if self._failing:
            for message in messages:
                self._keep(message, partial=False)
            return
        task = jobs.spawn(self._write_rows(list(messages), on_created), name="commit-rows")
        if task is not None:
            await asyncio.wait({task}, timeout=COMMIT_WAIT)

    async def _write_rows(
        self, messages: list[Message], on_created: Callable[[], None] | None
    ) -> None:
        if await self.add(messages) and on_created is not None:
            on_created()

    def keep(self, message: Message, *, partial: bool = False) -> None:
        """Hold a message for the next flush without writing now (the database is failing:
        the recovery loop writes it, and nothing waits on a locked store)."""
        self._keep(message, partial=partial)

    def _keep(self, message: Message, *, partial: bool) -> None:
        # A whole-record write supersedes a text-only one still waiting (never the reverse).
        if partial and message.id not in self._unsaved:
            self._partial.add(message.id)
        elif not partial:
            self._partial.discard(message.id)
        self._unsaved[message.id] = message
        self._versions[message.id] = self._versions.get(message.id, 0) + 1

    async def update(self, **fields: Any) -> None:
        """Save some of the conversation's own fields (a draft keeps them until created)."""
        if not self.stored:
            return
        self._fields.update(fields)
        await self.flush()

    async def flush(self) -> bool:
        """Write what is waiting, in order; True when this call created the conversation."""
        async with self._lock:
            created = False
            try:
                if not self.stored and self._unsaved:
                    await self._create()
                    created = True
                while self._unsaved:
                    message = next(iter(self._unsaved.values()))
                    version = self._versions[message.id]
                    try:
                        await self._write(message)
                    except Unstorable as error:
                        self._set_aside(message, error)
                        continue
                    if self._versions[message.id] == version:  # else: write the newer one
                        del self._unsaved[message.id], self._versions[message.id]
                        self._partial.discard(message.id)
                if self._fields:
                    fields, self._fields = self._fields, {}
                    await self._store.update_conversation(self._conversation.id, **fields)
            except StoreError as error:
                self._trouble(error)
                return created
            if self._failing:
                self._failing = False
                self._report(None, 0)
            return created

    @property
    def failing(self) -> bool:
        return self._failing

    async def _create(self) -> None:
        conversation = self._conversation
        first = next((m for m in self._unsaved.values() if m.role == ROLE_USER), None)
        if first is not None and conversation.title == DEFAULT_TITLE:
            conversation.title = auto_title(first.content.lstrip()[:TITLE_SOURCE_CHARS])
        await self._store.create_conversation(conversation)
        self.stored = True

    async def _write(self, message: Message) -> None:
        """Add the row, or update it when an earlier (maybe cancelled) add already made it.

        A message that follows a set-aside one is stored under the nearest stored ancestor."""
        parent = message.parent_id
        while parent in self._set_aside_parents:
            parent = self._set_aside_parents[parent]
        if parent != message.parent_id:
            message = dataclasses.replace(message, parent_id=parent)
        if message.id in self._partial:
            try:
                await self._store.save_partial(message.id, message.content, message.reasoning)
                return
            except NotFound:
                pass
            await self._store.add_message(message)
            return
        try:
            await self._store.finalise_message(message)
        except NotFound:
            await self._store.add_message(message)

    def _set_aside(self, message: Message, error: Unstorable) -> None:
        """One record the database cannot hold: said once, and the records after it are
        written (waiting on it would hold every later message back for good). It stays in
        the conversation on screen."""
        del self._unsaved[message.id], self._versions[message.id]
        self._partial.discard(message.id)
        self._set_aside_parents[message.id] = message.parent_id
        log.warning("a message could not be stored and was set aside: %s", error)
        self._report(
            f"The chat database could not store one message ({error.__cause__}); it is kept "
            "on screen only, and the messages after it are saved.",
            len(self._unsaved),
        )

    def _trouble(self, error: StoreError) -> None:
        log.warning("store problem (%d unsaved): %s", len(self._unsaved), error)
        first = not self._failing or str(error) != self._problem
        self._failing, self._problem = True, str(error)
        if first:  # said once per problem, not once per batch
            self._report(str(error), len(self._unsaved))


class Recovery:
    """Writes what a failed save kept, every RECOVERY_INTERVAL, until it is all written.

    Kept apart from a session's jobs: it may run until the database works again, and waiting
    for the jobs (drain) must not wait for that. ``on_written`` hears when a flush created
    the conversation's row.
    """

    def __init__(
        self, saver: ConversationSaver, *, name: str, on_written: Callable[[], None]
    ) -> None:
        self._saver = saver
        self._name = name
        self._on_written = on_written
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop unless it runs already."""
        if self._task is None:
            loop = asyncio.get_running_loop()
            self._task = loop.create_task(self._run(), name=self._name)

    async def _run(self) -> None:
        try:
            while self._saver.failing:
                await asyncio.sleep(RECOVERY_INTERVAL)
                if await self._saver.flush():
                    self._on_written()
        finally:
            self._task = None

    async def stop(self) -> None:
        if (task := self._task) is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

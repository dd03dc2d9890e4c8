"""One reply from request to saved message: the run_turn loop, batched saves, finalisation.

Qt-free: ``ReplyRunner`` reports through a ``ReplyListener`` (the ChatController, which turns
the calls into signals) and writes through a ``StoreWriter``, which turns database failures
into one plain-English report instead of an exception that would kill the reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Protocol

from flarechat.api.config import ChatRequest, Connection
from flarechat.api.errors import WorkersAIError
from flarechat.api.events import ReasoningDelta, ResponseMeta, TextDelta
from flarechat.api.retry import RetryPolicy
from flarechat.core.conversation import (
    DEFAULT_TITLE,
    ROLE_USER,
    ConversationTree,
    Message,
    auto_title,
)
from flarechat.core.store import STREAM_SAVE_INTERVAL, AsyncChatStore, NotFound, StoreError
from flarechat.core.turn import (
    ChatStreamer,
    RetryScheduled,
    TurnEvent,
    TurnState,
    fail,
    fold,
    run_turn,
    stop,
)
from flarechat.ui.control import presenting

__all__ = [
    "CANCEL_RETRY",
    "REQUEUE",
    "STOP",
    "CuttableSleep",
    "Reply",
    "ReplyListener",
    "ReplyRunner",
    "StoreWriter",
]

log = logging.getLogger(__name__)

#: Why a reply's task was cancelled; decides how it is finalised.
STOP, REQUEUE, CANCEL_RETRY = "stop", "requeue", "cancel-retry"


class CuttableSleep:
    """The ``sleep`` given to ``run_turn``: waits ``delay`` s unless ``cut()`` ends it early."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        self._event.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), delay)

    def cut(self) -> None:
        """Retry now: end the current wait; the next attempt starts at once."""
        self._event.set()


@dataclass(eq=False)
class Reply:
    """One assistant message being produced (or waiting to retry)."""

    conversation_id: str
    message: Message
    conn: Connection
    request: ChatRequest
    started: float
    sleep: CuttableSleep = field(default_factory=CuttableSleep)
    state: TurnState = field(default_factory=TurnState)
    outcome: str | None = None  # why its task was cancelled: STOP, REQUEUE or CANCEL_RETRY
    saved_at: float = 0.0
    banner_shown: bool = False
    retry_deadline: float | None = None

    @property
    def waiting_to_retry(self) -> bool:
        return self.state.status == "waiting" and self.state.last_retry is not None


class ReplyListener(Protocol):
    """What the runner reports while a reply runs (the controller emits signals from these)."""

    def reply_retrying(self, reply: Reply, event: RetryScheduled) -> None: ...
    def reply_retry_over(self, reply: Reply) -> None: ...
    def reply_text(self, reply: Reply, text: str) -> None: ...
    def reply_reasoning(self, reply: Reply, text: str) -> None: ...
    def reply_progress(self, reply: Reply) -> None: ...
    def reply_finished(self, reply: Reply) -> None: ...
    def reply_failed(self, reply: Reply, error: WorkersAIError) -> None: ...


class StoreWriter:
    """Writes conversations and messages; a StoreError is reported once, never raised."""

    def __init__(self, store: AsyncChatStore, *, on_problem: Callable[[str], None]) -> None:
        self.store = store
        self.stored: set[str] = set()  # conversation ids that have a row
        self._on_problem = on_problem
        self._last_problem: str | None = None

    def report(self, error: StoreError) -> None:
        text = str(error)
        log.warning("store problem: %s", text)
        if text != self._last_problem:
            self._last_problem = text
            self._on_problem(text)

    async def guard(self, call: Coroutine[Any, Any, Any]) -> bool:
        """Await a store call; False (and a report) when the database failed."""
        try:
            await call
        except StoreError as error:
            self.report(error)
            return False
        return True

    async def persist(self, tree: ConversationTree, messages: list[Message]) -> bool:
        """Store new messages, creating the conversation (titled from its first words) if new.

        Returns True when the conversation row was created by this call.
        """
        conversation = tree.conversation
        created = False
        try:
            if conversation.id not in self.stored:
                first = next((m for m in messages if m.role == ROLE_USER), None)
                if first is not None and conversation.title == DEFAULT_TITLE:
                    conversation.title = auto_title(first.content)
                await self.store.create_conversation(conversation)
                self.stored.add(conversation.id)
                created = True
            for message in messages:
                await self.store.add_message(message)
        except StoreError as error:
            self.report(error)
        return created

    async def upsert(self, message: Message) -> None:
        """Save a message whose row may or may not exist yet (a cancelled add may have run)."""
        if message.conversation_id not in self.stored:
            return
        try:
            await self.store.finalise_message(message)
        except NotFound:
            await self.guard(self.store.add_message(message))
        except StoreError as error:
            self.report(error)

    async def save_partial(self, message: Message) -> None:
        if message.conversation_id in self.stored:
            await self.guard(
                self.store.save_partial(message.id, message.content, message.reasoning)
            )

    async def finalise(self, message: Message) -> None:
        if message.conversation_id in self.stored:
            await self.guard(self.store.finalise_message(message))


class ReplyRunner:
    """Runs replies: streams events into the TurnState, saves batches, finalises the message."""

    def __init__(
        self,
        *,
        client: ChatStreamer,
        writer: StoreWriter,
        listener: ReplyListener,
        policy_factory: Callable[[], RetryPolicy],
        clock: Callable[[], float],
    ) -> None:
        self._client = client
        self._writer = writer
        self._listener = listener
        self._policy_factory = policy_factory
        self._clock = clock

    async def run(self, reply: Reply) -> None:
        """Stream the reply to its end; failures become a failed state, never an exception.

        Cancellation (stop, quit, Wait in queue, Cancel) finalises according to
        ``reply.outcome`` and propagates.
        """
        events = run_turn(
            self._client,
            reply.conn,
            reply.request,
            policy=self._policy_factory(),
            sleep=reply.sleep,
        )
        try:
            async with aclosing(events) as stream:
                async for event in stream:
                    await self._on_event(reply, event)
        except WorkersAIError as error:
            reply.state = fail(reply.state, error, now=self._clock())
            await self._finalise(reply)
            self._listener.reply_failed(reply, error)
        except asyncio.CancelledError:
            await self._on_cancelled(reply)
            raise
        else:
            await self._finalise(reply)

    async def _on_event(self, reply: Reply, event: TurnEvent) -> None:
        reply.state = fold(reply.state, event, now=self._clock())
        if isinstance(event, RetryScheduled):
            reply.banner_shown = True
            reply.retry_deadline = self._clock() + event.delay
            self._listener.reply_retrying(reply, event)
        elif isinstance(event, ResponseMeta):
            self._retry_over(reply)
        elif isinstance(event, TextDelta):
            self._listener.reply_text(reply, event.text)
            await self._save_batch(reply)
        elif isinstance(event, ReasoningDelta):
            self._listener.reply_reasoning(reply, event.text)
            await self._save_batch(reply)

    def _retry_over(self, reply: Reply) -> None:
        if reply.banner_shown:
            reply.banner_shown = False
            self._listener.reply_retry_over(reply)

    async def _save_batch(self, reply: Reply) -> None:
        """Save the reply so far at most every STREAM_SAVE_INTERVAL (a crash loses <= that)."""
        now = self._clock()
        if now - reply.saved_at < STREAM_SAVE_INTERVAL:
            return
        reply.saved_at = now
        message = reply.message
        message.content, message.reasoning = reply.state.text, reply.state.reasoning
        await self._writer.save_partial(message)
        self._listener.reply_progress(reply)

    async def _on_cancelled(self, reply: Reply) -> None:
        """A cancelled reply is kept as "stopped", or "failed" when its retrying was cancelled."""
        if reply.outcome == REQUEUE:
            return  # the same message is sent again at once (Wait in queue)
        retry = reply.state.last_retry
        if reply.outcome == CANCEL_RETRY and retry is not None and not reply.state.received_tokens:
            reply.state = fail(reply.state, retry.error, now=self._clock())
        else:
            reply.state = stop(reply.state, now=self._clock())
        self._retry_over(reply)
        await self._finalise(reply)

    async def _finalise(self, reply: Reply) -> None:
        state, message = reply.state, reply.message
        message.content, message.reasoning = state.text, state.reasoning
        message.status = state.status if state.is_final else "done"
        message.finish_reason = state.finish_reason
        message.usage = presenting.usage_record(state)
        message.meta = presenting.meta_record(state)
        message.timings = presenting.timings_record(state)
        error = state.error
        message.error = {"kind": error.kind, "message": error.message} if error else None
        await self._writer.finalise(message)
        self._listener.reply_finished(reply)

"""The running replies: the task per reply, the reply's signals, stop/cancel, shutdown.

The base class of ``ChatController``: this half owns the asyncio tasks (``turn id -> Task``;
the turn id is the assistant message id) and turns the ReplyRunner's reports into signals;
the controller adds what the user asks for. State is kept per message id, so a reply keeps
streaming while another conversation is on screen, and several may stream at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

from PySide6.QtCore import QObject, Signal

from flarechat.api.errors import WorkersAIError
from flarechat.api.retry import RetryPolicy
from flarechat.core.connect import ConfigurationError, build_request
from flarechat.core.conversation import STATUS_FAILED, STATUS_STOPPED, ConversationTree, Message
from flarechat.core.store import AsyncChatStore, StoreError
from flarechat.core.turn import ChatStreamer, RetryScheduled, TurnState
from flarechat.ui.control import presenting
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.control.reply import STOP, Reply, ReplyRunner, StoreWriter
from flarechat.ui.control.tasks import TaskKeeper
from flarechat.ui.transcript.message_view import MessageData

__all__ = ["TurnBook"]

log = logging.getLogger(__name__)


class TurnBook(QObject):
    """The running replies: one asyncio task per assistant message id, and their signals.

    The base of ChatController (which adds the user's intents); all reply tasks live here.

    Signals:
        conversation_opened(str, list): conversation id, MessageData of its visible path.
        conversation_stored(str): a draft conversation got its row (the list changed).
        message_added(str, object): conversation id, MessageData of a new user message.
        message_updated(object): a MessageData to re-show (e.g. its Continue button went).
        path_changed(str, str, list): conversation id, the first message no longer shown (it
            and all after it go), MessageData of the path shown from there on.
        turn_started(str, str): conversation id, assistant message id: a reply begins.
        siblings_changed(str, int, int): message id, 0-based index, sibling count ("< 1/2 >").
        turn_text_appended(str, str): message id, text to append to the answer.
        turn_reasoning_appended(str, str): message id, reasoning to append.
        turn_finished(str, object): message id, the final MessageData (done, stopped, failed
            or interrupted; a failure is a state, never written as the model's words).
        turn_failed(str, str, str, dict): message id, error kind, plain-English message, and
            plain values: model, attempts, partial, status, code, retry_after, resets_at.
        retry_scheduled(str, int, int, float, str, str): message id, failed attempt, max
            attempts, seconds to the next attempt, model, error kind.
        retry_cleared(str): message id: the retry wait is over (success, stop or cancel).
        busy_changed(bool): whether a reply runs in the current conversation.
        model_changed(str): the current conversation's model.
        metrics_changed(str): the status bar's metrics line.
        composer_text_requested(str): put this text in the composer (edit flows).
        editing_changed(bool): whether the next send replaces an earlier message (a branch).
        store_problem(str): the database failed; a plain-English sentence for a banner.
    """

    conversation_opened = Signal(str, list)
    conversation_stored = Signal(str)
    message_added = Signal(str, object)
    message_updated = Signal(object)
    path_changed = Signal(str, str, list)
    turn_started = Signal(str, str)
    siblings_changed = Signal(str, int, int)
    turn_text_appended = Signal(str, str)
    turn_reasoning_appended = Signal(str, str)
    turn_finished = Signal(str, object)
    turn_failed = Signal(str, str, str, dict)
    retry_scheduled = Signal(str, int, int, float, str, str)
    retry_cleared = Signal(str)
    busy_changed = Signal(bool)
    model_changed = Signal(str)
    metrics_changed = Signal(str)
    composer_text_requested = Signal(str)
    editing_changed = Signal(bool)
    store_problem = Signal(str)

    def __init__(
        self,
        *,
        client: ChatStreamer,
        store: AsyncChatStore,
        prefs: Preferences,
        policy_factory: Callable[[], RetryPolicy] = RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._prefs = prefs
        self._clock = clock
        self.writer = StoreWriter(store, on_problem=self.store_problem.emit)
        self._runner = ReplyRunner(
            client=client,
            writer=self.writer,
            listener=self,
            policy_factory=policy_factory,
            clock=clock,
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._owners: dict[str, str] = {}  # running message id -> its conversation id
        self._replies: dict[str, Reply] = {}
        self._jobs = TaskKeeper("chat")
        self._trees: dict[str, ConversationTree] = {}
        self._current: str | None = None
        self._failed: dict[str, str] = {}  # conversation id -> its failed reply (banner target)
        self._editing: dict[str, str] = {}  # conversation id -> the user message being edited
        #: Neurons spent today (UTC day, from the store, plus replies finished since).
        self._neurons: tuple[date, float] = (datetime.now(UTC).date(), 0.0)
        #: The model and reply whose figures the status line shows.
        self._shown_metrics: tuple[str, TurnState | None] | None = None

    # -- queries ---------------------------------------------------------------------------

    @property
    def current_id(self) -> str | None:
        return self._current

    def current_tree(self) -> ConversationTree | None:
        return self._trees.get(self._current) if self._current else None

    def current_model(self) -> str:
        tree = self.current_tree()
        model = tree.conversation.model if tree is not None else None
        return model or self._prefs.settings.last_model

    def is_running(self, message_id: str) -> bool:
        return message_id in self._tasks

    def is_shown(self, message_id: str) -> bool:
        """Whether this message belongs to the conversation on screen."""
        tree = self.current_tree()
        return tree is not None and message_id in tree

    def is_busy(self, conversation_id: str | None = None) -> bool:
        """Whether a reply runs in a conversation (default: the current one)."""
        wanted = conversation_id or self._current
        return wanted is not None and wanted in self._owners.values()

    def running_turns(self) -> list[str]:
        return list(self._tasks)

    def pending_retry(self) -> tuple[str, int, int, float, str, str] | None:
        """The current conversation's retry countdown, to re-show its banner after a switch."""
        reply = self._retrying_here()
        retry = reply.state.last_retry if reply is not None else None
        if reply is None or retry is None or reply.retry_deadline is None:
            return None
        left = max(0.0, reply.retry_deadline - self._clock())
        return (
            reply.message.id,
            retry.attempt,
            retry.max_attempts,
            left,
            reply.request.model,
            retry.error.kind,
        )

    def _view(
        self, tree: ConversationTree, message: Message, *, is_last: bool | None = None
    ) -> MessageData:
        data = presenting.message_data(tree, message, is_last=is_last)
        reply = self._replies.get(message.id)
        if reply is not None and not reply.state.is_final:  # what arrived so far
            data = replace(data, content=reply.state.text, reasoning=reply.state.reasoning)
        return data

    def path_view(self, conversation_id: str) -> list[MessageData]:
        return self._views(self._trees[conversation_id], self._trees[conversation_id].path())

    def _views(self, tree: ConversationTree, shown: list[Message]) -> list[MessageData]:
        """MessageData for a run of messages ending the visible path (one path walk only)."""
        last = shown[-1].id if shown else None
        return [self._view(tree, m, is_last=m.id == last) for m in shown]

    # -- running replies ---------------------------------------------------------------

    def _start(self, message: Message, flow: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(flow, name=f"turn:{message.id}")
        self._tasks[message.id] = task
        self._owners[message.id] = message.conversation_id
        task.add_done_callback(functools.partial(self._task_done, message.id))
        if message.conversation_id == self._current:
            self.busy_changed.emit(True)

    def _task_done(self, message_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(message_id) is task:
            del self._tasks[message_id]
            del self._owners[message_id]
            self.busy_changed.emit(self.is_busy())
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("reply task %s crashed", message_id, exc_info=error)

    async def _send_flow(
        self, tree: ConversationTree, assistant: Message, *, store_first: list[Message]
    ) -> None:
        try:
            # The user's words are committed before the request is sent.
            if await self.writer.persist(tree, store_first):
                self.conversation_stored.emit(tree.conversation.id)
            reply = self._new_reply(tree, assistant, reject_if_busy=None)
            await self.writer.persist(tree, [assistant])
        except asyncio.CancelledError:
            await self._stopped_unsent(tree, assistant)
            raise
        if reply is not None:
            await self._run(reply)

    async def _stopped_unsent(self, tree: ConversationTree, assistant: Message) -> None:
        """Stopped before the request went out: an empty "stopped" reply, kept and shown."""
        assistant.status = STATUS_STOPPED
        await self.writer.upsert(assistant)
        self.turn_finished.emit(assistant.id, self._view(tree, assistant))

    def _new_reply(
        self, tree: ConversationTree, assistant: Message, *, reject_if_busy: bool | None
    ) -> Reply | None:
        """Build the request; a configuration problem fails the reply here (None)."""
        conversation = tree.conversation
        prefs = self._prefs
        try:
            conn = prefs.connection()
        except ConfigurationError as error:
            self._fail_unsent(tree, assistant, text=" ".join(error.problems))
            return None
        request = build_request(
            model=assistant.model or prefs.settings.last_model,
            history=tree.path_to(assistant.parent_id) if assistant.parent_id else [],
            system_prompt=conversation.system_prompt,
            params=prefs.sampling(conversation.params),
            reject_if_busy=prefs.reject_if_busy() if reject_if_busy is None else reject_if_busy,
            gateway=prefs.gateway_options(),
            session_id=conversation.id,
        )
        assistant.request = presenting.request_record(conn, request)
        now = self._clock()
        return Reply(conversation.id, assistant, conn, request, started=now, saved_at=now)

    def _fail_unsent(self, tree: ConversationTree, assistant: Message, *, text: str) -> None:
        assistant.status = STATUS_FAILED
        assistant.error = {"kind": "config", "message": text}
        self.turn_finished.emit(assistant.id, self._view(tree, assistant))
        self._failed[tree.conversation.id] = assistant.id
        self.turn_failed.emit(assistant.id, "config", text, {"model": assistant.model or ""})

    async def _run(self, reply: Reply) -> None:
        self._replies[reply.message.id] = reply
        self._failed.pop(reply.conversation_id, None)
        try:
            await self._runner.run(reply)
        finally:
            if self._replies.get(reply.message.id) is reply:
                del self._replies[reply.message.id]

    async def _rerun_flow(
        self, tree: ConversationTree, message: Message, *, reject_if_busy: bool | None
    ) -> None:
        try:
            reply = self._new_reply(tree, message, reject_if_busy=reject_if_busy)
            await self.writer.upsert(message)  # its new request record, status "streaming"
        except asyncio.CancelledError:
            await self._stopped_unsent(tree, message)
            raise
        if reply is not None:
            await self._run(reply)

    def stop(self, message_id: str | None = None) -> None:
        """Stop a reply (default: the current conversation's); its text so far is kept."""
        targets = [message_id] if message_id else self._running_here()
        for target in targets:
            if (reply := self._replies.get(target)) is not None:
                reply.outcome = STOP
            if (task := self._tasks.get(target)) is not None:
                task.cancel()

    def _running_here(self) -> list[str]:
        return [m for m, owner in self._owners.items() if owner == self._current]

    async def _cancel(self, message_id: str, outcome: str) -> None:
        task = self._tasks.get(message_id)
        if task is None:
            return
        if (reply := self._replies.get(message_id)) is not None:
            reply.outcome = outcome
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def _retrying_here(self) -> Reply | None:
        waiting = [r for r in self._replies.values() if r.waiting_to_retry]
        return next((r for r in waiting if r.conversation_id == self._current), None)

    def _failed_here(self) -> str | None:
        return self._failed.get(self._current) if self._current else None

    # -- ReplyListener: the runner's reports become signals ---------------------------------

    def reply_retrying(self, reply: Reply, event: RetryScheduled) -> None:
        model, kind = reply.request.model, event.error.kind
        self.retry_scheduled.emit(
            reply.message.id, event.attempt, event.max_attempts, event.delay, model, kind
        )

    def reply_retry_over(self, reply: Reply) -> None:
        self.retry_cleared.emit(reply.message.id)

    def reply_text(self, reply: Reply, text: str) -> None:
        self.turn_text_appended.emit(reply.message.id, text)

    def reply_reasoning(self, reply: Reply, text: str) -> None:
        self.turn_reasoning_appended.emit(reply.message.id, text)

    def reply_progress(self, reply: Reply) -> None:
        if reply.conversation_id == self._current:
            self._show_metrics(reply.request.model, reply.state)

    def reply_finished(self, reply: Reply) -> None:
        self._count_neurons(reply.state)
        tree = self._trees.get(reply.conversation_id)
        if tree is not None and reply.message.id in tree:
            self.turn_finished.emit(reply.message.id, self._view(tree, reply.message))
        self.reply_progress(reply)
        self.refresh_neurons()  # the saved reply is in the database now: count from there

    def reply_failed(self, reply: Reply, error: WorkersAIError) -> None:
        self._failed[reply.conversation_id] = reply.message.id
        state = reply.state
        extra = presenting.failure_extra(error, model=reply.request.model, attempts=state.attempt)
        extra["partial"] = state.received_tokens
        self.turn_failed.emit(reply.message.id, error.kind, error.message, extra)

    # -- bookkeeping -----------------------------------------------------------------------

    def refresh_neurons(self) -> None:
        """Re-read "neurons today" from the store (start-up, after each reply), so the count
        survives restarts and includes replies finished in other windows or conversations."""
        self._jobs.spawn(self._load_neurons(), name="neurons-today")

    async def _load_neurons(self) -> None:
        today = datetime.now(UTC).date()
        try:
            total = await self.writer.store.neurons_today()
        except StoreError as error:
            self.writer.report(error)
            return
        self._neurons = (today, total)
        model, state = self._shown_metrics or (self.current_model(), None)
        self._show_metrics(model, state)

    def _count_neurons(self, state: TurnState) -> None:
        """Add a finished reply at once; refresh_neurons() then confirms it from the store."""
        today = datetime.now(UTC).date()  # the free allocation resets at 00:00 UTC
        day, total = self._neurons
        total = total if day == today else 0.0
        self._neurons = (today, total + (state.neurons or 0.0))

    def _show_metrics(self, model: str, state: TurnState | None) -> None:
        self._shown_metrics = (model, state)
        day, total = self._neurons
        today = total if day == datetime.now(UTC).date() else None
        self.metrics_changed.emit(
            presenting.metrics_line(model=model, state=state, neurons_today=today)
        )

    async def shutdown(self) -> None:
        """Quit: stop every reply (partial text saved as "stopped"), then every job."""
        await asyncio.gather(*(self._cancel(m, STOP) for m in list(self._tasks)))
        await self._jobs.aclose()

    async def drain(self) -> None:
        """Wait until no reply or job runs (tests)."""
        while self._tasks or len(self._jobs):
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            await self._jobs.drain()

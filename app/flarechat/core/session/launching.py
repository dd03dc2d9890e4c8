"""Starting, re-running and stopping one conversation's replies: one task per assistant
message id, whose rows are committed and whose request is made before the runner streams it."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from flarechat.core.conversation import STATUS_STOPPED, STATUS_STREAMING, ConversationTree, Message
from flarechat.core.session.continuing import Continued
from flarechat.core.session.events import (
    BusyChanged,
    ConversationStored,
    PathChanged,
    SessionListener,
    TurnFinished,
    TurnStarted,
)
from flarechat.core.session.reply import Outcome, Reply
from flarechat.core.session.requests import NotSent, RequestMaker
from flarechat.core.session.running import ReplyRunner
from flarechat.core.session.saving import ConversationSaver
from flarechat.core.tasks import TaskKeeper

__all__ = ["ReplyLauncher"]

log = logging.getLogger(__name__)


class ReplyLauncher:
    """Keeps one task per running reply (by message id) and says when the conversation
    becomes busy or idle; ``runner`` streams each reply once its request is made."""

    def __init__(
        self,
        tree: ConversationTree,
        *,
        runner: ReplyRunner,
        requests: RequestMaker,
        saver: ConversationSaver,
        emit: SessionListener,
        jobs: TaskKeeper,
        clock: Callable[[], float],
    ) -> None:
        self._tree = tree
        self._id = tree.conversation.id
        self._runner = runner
        self._requests = requests
        self._saver = saver
        self._emit = emit
        self._jobs = jobs
        self._clock = clock
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: replies being continued: each as it was before (kept while a requeue sends again)
        self._bases: dict[str, Continued] = {}
        self._stopping: set[str] = set()  # replies Stop cancelled (their tasks may not have run)

    # -- queries ---------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        return bool(self._tasks)

    def is_running(self, message_id: str) -> bool:
        return message_id in self._tasks

    def running(self) -> list[str]:
        return list(self._tasks)

    def task(self, message_id: str) -> asyncio.Task[None] | None:
        return self._tasks.get(message_id)

    # -- starting --------------------------------------------------------------------------

    def begin(self, assistant: Message, *, store_first: list[Message], sent_at: float) -> None:
        """Run a new assistant message (in the tree): ``store_first`` rows are committed
        (or kept, if the database fails) before its request goes out."""
        flow = self._send_flow(assistant, store_first=store_first, sent_at=sent_at)
        self.start(assistant, flow)

    def extend(self, message: Message) -> None:
        """Continue a reply cut at max_tokens: the same message, its text growing from where
        it stopped (``core.session.continuing``)."""
        self._bases[message.id] = Continued.of(message)
        message.status, message.error = STATUS_STREAMING, None
        self.start(message, self.rerun_flow(message, None, sent_at=self._clock()))
        self._emit(TurnStarted(self._id, message.id, continued=True))

    def rerun(self, message_id: str, *, reject_if_busy: bool | None) -> None:
        """Send a failed or waiting reply again, in place (a reply with text is continued
        from it: its text is never sent again over)."""
        # Only this reply must be idle: a compare column is retried while others stream. A
        # reply whose failure was just reported is final while its task still unwinds.
        running = self._runner.reply(message_id)
        busy = message_id in self._tasks and (running is None or not running.state.is_final)
        if message_id not in self._tree or busy:
            return
        message = self._tree.get(message_id)
        self._runner.failed = None
        if message.content or message.reasoning:
            # A Continue that failed (Wait in queue, Switch model): it goes on from its text.
            self._bases[message.id] = Continued.of(message)
            message.status, message.error = STATUS_STREAMING, None
            self.start(message, self.rerun_flow(message, reject_if_busy, sent_at=self._clock()))
            self._emit(TurnStarted(self._id, message_id, continued=True))
            return
        message.status, message.error, message.finish_reason = STATUS_STREAMING, None, None
        self._emit(PathChanged(self._id, message_id))
        self.start(message, self.rerun_flow(message, reject_if_busy, sent_at=self._clock()))
        self._emit(TurnStarted(self._id, message_id))

    def start(self, message: Message, flow: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(flow, name=f"turn:{message.id}")
        was_busy = self.is_busy
        self._tasks[message.id] = task
        task.add_done_callback(functools.partial(self._task_done, message.id))
        if not was_busy:
            self._emit(BusyChanged(self._id, busy=True))

    def _task_done(self, message_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(message_id) is task:
            del self._tasks[message_id]
            message = self._tree.get(message_id) if message_id in self._tree else None
            stopped = message_id in self._stopping
            self._stopping.discard(message_id)
            if stopped and task.cancelled() and message is not None:
                self._stopped_before_start(message)
            if message is None or message.status != STATUS_STREAMING:
                self._bases.pop(message_id, None)  # done with; a requeued reply keeps it
            if not self._tasks:
                self._emit(BusyChanged(self._id, busy=False))
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("reply task %s crashed", message_id, exc_info=error)

    async def _send_flow(
        self, assistant: Message, *, store_first: list[Message], sent_at: float
    ) -> None:
        try:
            # The user's words are committed (or kept, if the database fails) before sending.
            await self._add_rows(store_first)
            reply = await self._new_reply(assistant, reject_if_busy=None, sent_at=sent_at)
            await self._add_rows([assistant])
        except asyncio.CancelledError:
            await self._stopped_unsent(assistant)
            raise
        if reply is not None:
            await self._runner.run(reply)

    async def rerun_flow(
        self, message: Message, reject_if_busy: bool | None, *, sent_at: float
    ) -> None:
        try:
            reply = await self._new_reply(message, reject_if_busy=reject_if_busy, sent_at=sent_at)
            await self._runner.save_final(message)  # its new request record, status "streaming"
        except asyncio.CancelledError:
            await self._stopped_unsent(message)
            raise
        if reply is not None:
            await self._runner.run(reply)

    async def _new_reply(
        self, message: Message, *, reject_if_busy: bool | None, sent_at: float
    ) -> Reply | None:
        try:
            return await self._requests.make(
                message,
                reject_if_busy=reject_if_busy,
                sent_at=sent_at,
                base=self._bases.get(message.id),
            )
        except NotSent as refused:
            self._runner.fail_unsent(message, text=refused.text, kind=refused.kind)
            return None

    def _stopped_before_start(self, message: Message) -> None:
        """A Continue stopped before its task ran a step (its flow never saw the cancel): the
        reply is as it was, marked stopped, its text kept."""
        if message.id in self._bases and message.status == STATUS_STREAMING:
            message.status = STATUS_STOPPED
            self._jobs.spawn(self._stopped_unsent(message), name="stopped-continue")

    async def _stopped_unsent(self, message: Message) -> None:
        """Stopped before the request went out: an empty "stopped" reply, kept and shown."""
        message.status = STATUS_STOPPED
        await self._runner.save_final(message)
        self._emit(TurnFinished(self._id, message, message.model or ""))

    # -- committing rows -------------------------------------------------------------------

    async def _add_rows(self, messages: list[Message]) -> None:
        """New rows are committed before going on (``ConversationSaver.commit``)."""
        await self._saver.commit(messages, jobs=self._jobs, on_created=self._stored)

    def _stored(self) -> None:
        self._emit(ConversationStored(self._id))

    # -- stopping --------------------------------------------------------------------------

    def stop(self, message_id: str | None = None) -> None:
        """Stop a reply (default: every reply); its text so far is kept."""
        for target in [message_id] if message_id else list(self._tasks):
            if (reply := self._runner.reply(target)) is not None:
                reply.outcome = Outcome.STOP
            if (task := self._tasks.get(target)) is not None:
                self._stopping.add(target)
                task.cancel()

    async def stop_all(self) -> None:
        """Stop every reply and wait until each is saved."""
        await asyncio.gather(*(self.cancel(m, Outcome.STOP) for m in list(self._tasks)))

    async def cancel(self, message_id: str, outcome: Outcome) -> None:
        """Cancel a reply's task, to be finalised per ``outcome``, and wait for it."""
        task = self._tasks.get(message_id)
        if task is None:
            return
        if (reply := self._runner.reply(message_id)) is not None:
            reply.outcome = outcome
        if outcome is Outcome.STOP:
            self._stopping.add(message_id)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def drain(self) -> None:
        """Wait until no reply or job runs (tests)."""
        while self._tasks or len(self._jobs):
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            await self._jobs.drain()

"""The retry banner's actions on a reply waiting to retry or failed: Retry now, Wait in queue,
Switch model, Cancel, Retry — each sends the reply again or ends its retrying."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from flarechat.api.errors import ErrorKind
from flarechat.core.conversation import ConversationTree
from flarechat.core.session.events import PathChanged, RetryPlanned, SessionListener, TurnStarted
from flarechat.core.session.launching import ReplyLauncher
from flarechat.core.session.reply import Outcome, Reply
from flarechat.core.session.requests import RequestMaker
from flarechat.core.session.running import ReplyRunner
from flarechat.core.tasks import TaskKeeper

__all__ = ["SWITCHABLE_FAILURES", "RetryActions"]

#: Failures another model can fix: picking one (Switch model…) sends the reply again with it.
SWITCHABLE_FAILURES = frozenset({ErrorKind.CAPACITY, ErrorKind.MODEL})


class RetryActions:
    """What the retry banner does to one conversation's replies. ``message_id`` names the
    reply acted on; None means the one waiting to retry, else the last failed one."""

    def __init__(
        self,
        tree: ConversationTree,
        *,
        runner: ReplyRunner,
        launcher: ReplyLauncher,
        requests: RequestMaker,
        regenerate: Callable[[str], object],
        emit: SessionListener,
        jobs: TaskKeeper,
        clock: Callable[[], float],
    ) -> None:
        self._tree = tree
        self._id = tree.conversation.id
        self._runner = runner
        self._launcher = launcher
        self._requests = requests
        self._regenerate = regenerate  # a reply with text is retried as a new sibling
        self._emit = emit
        self._jobs = jobs
        self._clock = clock

    def retrying(self, message_id: str | None = None) -> Reply | None:
        """The reply waiting to retry: ``message_id``'s, or the first one (one-reply chats)."""
        if message_id is not None:
            reply = self._runner.reply(message_id)
            return reply if reply is not None and reply.waiting_to_retry else None
        return next((r for r in self._runner.replies() if r.waiting_to_retry), None)

    def pending(self) -> RetryPlanned | None:
        """The retry countdown now running (delay = seconds left), to re-show its banner."""
        reply = self.retrying()
        retry = reply.state.last_retry if reply is not None else None
        if reply is None or retry is None or reply.retry_deadline is None:
            return None
        left = max(0.0, reply.retry_deadline - self._clock())
        return self._runner.retry_event(reply, retry, delay=left)

    def retry_now(self, message_id: str | None = None) -> None:
        """Cut the countdown short; after the retry budget, send the failed reply again."""
        reply = self.retrying(message_id)
        if reply is not None:
            reply.sleep.cut()
        else:
            self.retry_failed(message_id)

    def wait_in_queue(self, message_id: str | None = None) -> None:
        """Send the reply again once with "Reject if busy" off: wait in Cloudflare's queue."""
        reply = self.retrying(message_id)
        failed = message_id or self._runner.failed
        if reply is not None:
            self._requeue(reply, reject_if_busy=False)
        elif failed is not None:
            self._launcher.rerun(failed, reject_if_busy=False)

    def switch_model(self, model: str, message_id: str | None = None) -> None:
        """Send the reply waiting on capacity (or failed because its model is unavailable)
        again at once with ``model``: its retries end and its record becomes the new one."""
        reply = self.retrying(message_id)
        retry = reply.state.last_retry if reply is not None else None
        if reply is not None and retry is not None:
            if retry.error.kind == ErrorKind.CAPACITY and reply.model != model:
                reply.message.model = model
                self._requests.retarget(reply.message.id, model)
                self._requeue(reply, reject_if_busy=None)
            return
        failed = message_id or self._runner.failed
        if failed is None or failed not in self._tree:
            return
        message = self._tree.get(failed)
        if (message.error or {}).get("kind") in SWITCHABLE_FAILURES and message.model != model:
            message.model = model
            self._requests.retarget(failed, model)
            self._launcher.rerun(failed, reject_if_busy=None)

    def cancel_retry(self, message_id: str | None = None) -> None:
        """Stop retrying: the reply is marked failed with its error; nothing is invented."""
        reply = self.retrying(message_id)
        if reply is not None:
            cancel = self._launcher.cancel(reply.message.id, Outcome.CANCEL_RETRY)
            self._jobs.spawn(cancel, name="cancel")
        elif message_id is None or message_id == self._runner.failed:
            self._runner.failed = None

    def retry_failed(self, message_id: str | None = None) -> None:
        """Retry a failed or interrupted reply: in place when it has no text, else as a sibling
        (an interrupted reply's partial text is kept as its own branch)."""
        target = message_id or self._runner.failed
        if target is None or target not in self._tree or self._launcher.is_busy:
            return
        message = self._tree.get(target)
        if message.content or message.reasoning:
            self._regenerate(target)
        else:
            self._launcher.rerun(target, reject_if_busy=None)

    def _requeue(self, reply: Reply, *, reject_if_busy: bool | None) -> None:
        """Send a reply waiting to retry again at once; its task is cancelled now, while it
        has no text. A switched model shows the reply anew."""
        task = self._launcher.task(reply.message.id)
        if task is None:
            return
        reply.outcome = Outcome.REQUEUE
        task.cancel()
        resend = self._resend(task, reply, reject_if_busy=reject_if_busy)
        self._jobs.spawn(resend, name="requeue-reply")

    async def _resend(
        self, task: asyncio.Task[None], reply: Reply, *, reject_if_busy: bool | None
    ) -> None:
        await asyncio.gather(task, return_exceptions=True)
        message, launcher = reply.message, self._launcher
        self._runner.retry_over(reply)
        if launcher.is_running(message.id):
            return
        switched = message.model != reply.model
        if switched:
            self._emit(PathChanged(self._id, message.id))
        flow = launcher.rerun_flow(message, reject_if_busy, sent_at=self._clock())
        launcher.start(message, flow)
        if switched:
            self._emit(TurnStarted(self._id, message.id))

"""Running one reply to its end: the stream folded into events, its text saved as it streams,
and how it ends (done, failed, stopped, cancelled while retrying, or sent again)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Any

from flarechat.api.errors import ErrorKind, WorkersAIError
from flarechat.api.events import (
    ReasoningDelta,
    ResponseMeta,
    StreamingDisabled,
    TextDelta,
    ToolCallDelta,
)
from flarechat.api.retry import RetryPolicy
from flarechat.core import ledger
from flarechat.core.conversation import STATUS_FAILED, Message
from flarechat.core.session import records
from flarechat.core.session.continuing import combined
from flarechat.core.session.events import (
    Notice,
    NoticeKind,
    Phase,
    PhaseChanged,
    ReasoningAppended,
    RetryOver,
    RetryPlanned,
    SessionListener,
    TextAppended,
    ToolCallAppended,
    ToolCallsReceived,
    TurnFailed,
    TurnFinished,
    TurnProgress,
)
from flarechat.core.session.gate import GatedStreamer, ModelGate
from flarechat.core.session.reply import Outcome, Reply, failure_extra
from flarechat.core.session.saving import ConversationSaver
from flarechat.core.tasks import TaskKeeper
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

__all__ = ["Renewal", "ReplyRunner"]

#: Longest run of stream events handled before the event loop gets a turn (seconds): well
#: under a frame, so a burst of buffered tokens never stalls the window.
YIELD_EVERY = 0.008

log = logging.getLogger(__name__)

#: Answers a failure the reply may be re-run after (a licence accepted again): True to re-run.
Renewal = Callable[[Reply, WorkersAIError], Awaitable[bool]]


class ReplyRunner:
    """Runs one conversation's replies (each in the task its ``ReplyLauncher`` started) and
    reports what happens to ``emit``; ``failed`` is the last reply that failed (the banner's)."""

    def __init__(
        self,
        conversation_id: str,
        *,
        client: ChatStreamer,
        saver: ConversationSaver,
        emit: SessionListener,
        jobs: TaskKeeper,
        renew: Renewal,
        gate: ModelGate | None,
        policy_factory: Callable[[], RetryPolicy],
        clock: Callable[[], float],
        save_interval: float,
    ) -> None:
        self._id = conversation_id
        self._client = client
        self._saver = saver
        self._emit = emit
        self._jobs = jobs
        self._renew = renew
        self._gate = gate
        self._policy_factory = policy_factory
        self._clock = clock
        self._save_interval = save_interval
        self._replies: dict[str, Reply] = {}
        self.failed: str | None = None  # the failed reply a banner acts on

    def reply(self, message_id: str) -> Reply | None:
        """The reply running (or waiting to retry) for ``message_id``, else None."""
        return self._replies.get(message_id)

    def replies(self) -> list[Reply]:
        return list(self._replies.values())

    def live_text(self, message_id: str) -> tuple[str, str] | None:
        """What a running reply has received so far (text, reasoning), else None."""
        reply = self._replies.get(message_id)
        if reply is None or reply.state.is_final:
            return None
        return reply.text()

    # -- running one reply -----------------------------------------------------------------

    async def run(self, reply: Reply) -> None:
        """Stream the reply to its end; failures become a failed state, never an exception.

        Cancellation (stop, quit, Wait in queue, Cancel) finalises per ``reply.outcome``.
        """
        self._replies[reply.message.id] = reply
        self.failed = None
        if self._gate is not None and self._gate.would_wait(reply.model):
            self._phase(reply, Phase.HELD)
        elif self._gate is None:
            self._sent(reply)
        over = asyncio.Event()
        saving = self._jobs.spawn(self._save_while_streaming(reply, over), name="autosave")
        try:
            await self._stream(reply)
        except WorkersAIError as error:
            await self._end_saving(saving, over)
            await self._failed(reply, error)
        except ValueError as error:
            # The api refused to build the request (an image the model's input cannot take,
            # a reasoning effort it does not offer…): nothing was sent.
            await self._end_saving(saving, over)
            await self._refused(reply, error)
        except asyncio.CancelledError:
            await self._end_saving(saving, over)
            await self._on_cancelled(reply)
            raise
        else:
            await self._end_saving(saving, over)
            await self._finalise(reply)
        finally:
            if self._replies.get(reply.message.id) is reply:
                del self._replies[reply.message.id]

    async def _stream(self, reply: Reply) -> None:
        events = run_turn(
            self._streamer(reply),
            reply.conn,
            reply.request,
            policy=self._policy_factory(),
            sleep=functools.partial(self._wait_to_retry, reply),
        )
        async with aclosing(events) as stream:
            turn_began = time.monotonic()
            async for event in stream:
                self._on_event(reply, event)
                # One socket read can hold hundreds of events, all handled without a pause:
                # give the loop a turn every few ms so the window paints and stays responsive.
                if time.monotonic() - turn_began >= YIELD_EVERY:
                    await asyncio.sleep(0)
                    turn_began = time.monotonic()

    def _streamer(self, reply: Reply) -> ChatStreamer:
        if self._gate is None:
            return self._client
        return GatedStreamer(self._client, self._gate, on_slot=lambda: self._sent(reply))

    async def _failed(self, reply: Reply, error: WorkersAIError) -> None:
        if await self._renew(reply, error):
            reply.agreed = True
            reply.state = TurnState(started_at=reply.state.started_at)
            await self.run(reply)
            return
        reply.state = fail(reply.state, error, now=self._clock())
        await self._finalise(reply)
        self.failed = reply.message.id
        extra = failure_extra(error, model=reply.model, attempts=reply.state.attempt)
        extra["partial"] = reply.state.received_tokens
        self._emit(TurnFailed(self._id, reply.message.id, error.kind, error.message, extra))

    async def _refused(self, reply: Reply, error: ValueError) -> None:
        self.retry_over(reply)
        kind, message = ErrorKind.BAD_REQUEST, reply.message
        message.status = STATUS_FAILED
        message.error = {"kind": str(kind), "message": str(error)}
        await self.save_final(message)
        self.fail_unsent(message, text=str(error), kind=kind)

    def _sent(self, reply: Reply) -> None:
        # Reject if busy off alone says nothing of a queue: a slow first byte, or a reply
        # that does not stream (gpt-oss on /ai/run) generating, is waiting for a first token.
        self._phase(reply, Phase.QUEUED if reply.queued else Phase.SENT)

    def _phase(self, reply: Reply, phase: Phase) -> None:
        self._emit(PhaseChanged(self._id, reply.message.id, phase, self._clock()))

    async def _wait_to_retry(self, reply: Reply, delay: float) -> None:
        await reply.sleep(delay)
        if self._gate is None:  # with a gate, the slot's arrival says when it is sent
            self._sent(reply)

    def _on_event(self, reply: Reply, event: TurnEvent) -> None:
        first = not reply.state.received_tokens
        reply.state = fold(reply.state, event, now=self._clock())
        message_id = reply.message.id
        if isinstance(event, RetryScheduled):
            reply.banner_shown = True
            reply.retry_deadline = self._clock() + event.delay
            self._emit(self.retry_event(reply, event, delay=event.delay))
            self._phase(reply, Phase.RETRY_WAIT)
        elif isinstance(event, ResponseMeta):
            self.retry_over(reply)
        elif isinstance(event, TextDelta | ReasoningDelta) and event.text:
            kind = TextAppended if isinstance(event, TextDelta) else ReasoningAppended
            self._emit(kind(self._id, message_id, event.text))
            if first:
                self._phase(reply, Phase.STREAMING)
        elif isinstance(event, ToolCallDelta):
            self._emit(
                ToolCallAppended(
                    self._id, message_id, event.index, event.id, event.name, event.arguments
                )
            )
            if first:
                self._phase(reply, Phase.STREAMING)
        elif isinstance(event, StreamingDisabled):
            self._emit(Notice(self._id, message_id, NoticeKind.STREAMING_DISABLED, event.reason))

    def retry_event(self, reply: Reply, retry: RetryScheduled, *, delay: float) -> RetryPlanned:
        error = retry.error
        return RetryPlanned(
            self._id,
            reply.message.id,
            attempt=retry.attempt,
            max_attempts=retry.max_attempts,
            delay=delay,
            model=reply.model,
            kind=error.kind,
            reason=error.message,
        )

    def retry_over(self, reply: Reply) -> None:
        if reply.banner_shown:
            reply.banner_shown = False
            self._emit(RetryOver(self._id, reply.message.id))

    async def _save_while_streaming(self, reply: Reply, over: asyncio.Event) -> None:
        """Save the text so far every ``save_interval`` seconds, whether or not more arrives,
        so a crash or kill loses at most that much of the reply. Ends once ``over`` is set."""
        while not over.is_set():
            await asyncio.sleep(self._save_interval)
            if over.is_set() or not reply.take_text():
                continue
            if self._saver.failing:
                self._saver.keep(reply.message, partial=True)
            else:
                await self._saver.save_partial(reply.message)
            if not over.is_set():
                self._emit(TurnProgress(self._id, reply.message.id, reply.model, reply.state))

    async def _end_saving(self, saving: asyncio.Task[Any] | None, over: asyncio.Event) -> None:
        """Stop the autosave loop and wait for it. Cancelling alone is not enough: on Python
        3.11 ``asyncio.wait_for`` (the store's calls) swallows a cancel that lands just as its
        call finishes, and the loop would go on forever with the reply waiting on it (the
        unpaced reply that never finished). ``over`` ends the loop at its next look."""
        over.set()
        if saving is not None:
            saving.cancel()
            await asyncio.gather(saving, return_exceptions=True)

    # -- saving and failing before the stream --------------------------------------------

    async def save_final(self, message: Message) -> None:
        """A message's whole record (``ConversationSaver.commit``: a reply never waits on a
        locked store)."""
        await self._saver.commit([message], jobs=self._jobs)

    def fail_unsent(
        self, message: Message, *, text: str, kind: ErrorKind = ErrorKind.CONFIG
    ) -> None:
        message.status = STATUS_FAILED
        message.error = {"kind": str(kind), "message": text}
        self._emit(TurnFinished(self._id, message, message.model or ""))
        self.failed = message.id
        extra = {"model": message.model or ""}
        self._emit(TurnFailed(self._id, message.id, kind, text, extra))

    # -- how a reply ends ------------------------------------------------------------------

    async def _on_cancelled(self, reply: Reply) -> None:
        """A cancelled reply is kept as "stopped", or "failed" when its retrying was cancelled."""
        if reply.outcome is Outcome.REQUEUE:
            return  # the same message is sent again at once (Wait in queue, Switch model…)
        retry = reply.state.last_retry
        cancel = reply.outcome is Outcome.CANCEL_RETRY and not reply.state.received_tokens
        if cancel and retry is not None:
            reply.state = fail(reply.state, retry.error, now=self._clock())
        else:
            reply.state = stop(reply.state, now=self._clock())
        self.retry_over(reply)
        await self._finalise(reply)

    async def _finalise(self, reply: Reply) -> None:
        state, message = reply.state, reply.message
        reply.take_text()
        message.status = state.status if state.is_final else "done"
        message.finish_reason = state.finish_reason
        message.usage = records.usage_record(state)
        message.meta = records.meta_record(state)
        if (base := reply.base) is not None:
            # A Continue: one reply, billed for every request that made it; one that did not
            # finish leaves it cut short as it was (Continue is offered again).
            if message.status != "done":
                message.finish_reason = base.finish_reason
            before = (base.usage, base.meta)
            message.usage, message.meta = combined(before, (message.usage, message.meta))
        if reply.conn.simulated:  # the ledger keeps demo mode's replies apart
            message.meta = ledger.mark_demo(message.meta)
        message.timings = records.timings_record(state, queued=reply.queued)
        error = state.error
        message.error = {"kind": str(error.kind), "message": error.message} if error else None
        message.tool_calls = records.tool_calls_record(state)
        await self.save_final(message)
        if message.tool_calls:
            calls = tuple(dict(c) for c in message.tool_calls)
            self._emit(ToolCallsReceived(self._id, message.id, calls))
        self._emit(TurnFinished(self._id, message, reply.model, state))

"""ChatSession: every turn operation of one conversation — send, stop, regenerate, edit,
continue, branches, the retry flows and saving as it streams — reported as events, no Qt."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, Protocol

from flarechat.api.config import Connection, GatewayOptions, SamplingParams
from flarechat.api.errors import ErrorKind, TermsNotAccepted, WorkersAIError
from flarechat.api.events import (
    ReasoningDelta,
    ResponseMeta,
    StreamingDisabled,
    TextDelta,
    ToolCallDelta,
)
from flarechat.api.retry import RetryPolicy
from flarechat.core.connect import (
    PARAM_RESPONSE_FORMAT,
    ConfigurationError,
    build_request,
    capabilities_from,
)
from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_TOOL,
    ROLE_USER,
    STATUS_FAILED,
    STATUS_STOPPED,
    STATUS_STREAMING,
    Attachment,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.session import records
from flarechat.core.session.capabilities import (
    AgreementStore,
    Catalogue,
    Refusal,
    SchemaBook,
    SendRefused,
    TermsAgreer,
    needs_schema,
    refusal_for,
)
from flarechat.core.session.events import (
    BusyChanged,
    ConversationStored,
    EditingChanged,
    MessageAdded,
    MessageChanged,
    Notice,
    NoticeKind,
    PathChanged,
    Phase,
    PhaseChanged,
    ReasoningAppended,
    RetryOver,
    RetryPlanned,
    SessionListener,
    SiblingsChanged,
    StoreTrouble,
    TextAppended,
    ToolCallAppended,
    ToolCallsReceived,
    TurnFailed,
    TurnFinished,
    TurnProgress,
    TurnStarted,
)
from flarechat.core.session.gate import GatedStreamer, ModelGate
from flarechat.core.session.reply import Outcome, Reply, failure_extra
from flarechat.core.session.saving import RECOVERY_INTERVAL, ConversationSaver, SessionStore
from flarechat.core.session.structured import JsonVerdict, json_check
from flarechat.core.store import STREAM_SAVE_INTERVAL, StoreError
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

__all__ = [
    "CONTINUE_PROMPT",
    "FINISH_LENGTH",
    "SWITCHABLE_FAILURES",
    "ChatSession",
    "ColumnSpec",
    "TurnSettings",
    "can_continue",
]

log = logging.getLogger(__name__)

#: How long a send waits for its rows to be committed before sending anyway: a locked or
#: full database keeps them in memory (and says so) instead of holding the reply up.
COMMIT_WAIT = 1.0
#: The user message a "Continue" click sends after a reply stopped at max_tokens.
CONTINUE_PROMPT = "Continue exactly where you stopped."
FINISH_LENGTH = "length"
#: Failures another model can fix: picking one (Switch model…) sends the reply again with it.
SWITCHABLE_FAILURES = frozenset({ErrorKind.CAPACITY, ErrorKind.MODEL})
AGREED_AGAIN = "You agreed to this model's licence before; it was accepted again."
AGREED = "The model's licence was accepted; the message is sent again."


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """What one compare column sends: its model and, when set, its own sampling parameters
    and system prompt (else the conversation's)."""

    model: str
    params: Mapping[str, Any] | None = None
    system_prompt: str | None = None
    #: this column's own prompt (a template filled with one row), else the shared one
    prompt: str | None = None


class TurnSettings(Protocol):
    """Where a session gets what a request needs (the window's Preferences, a CLI profile)."""

    def connection(self) -> Connection: ...
    def sampling(self, params: Mapping[str, object]) -> SamplingParams: ...
    def reject_if_busy(self) -> bool: ...
    def gateway_options(self) -> GatewayOptions: ...
    def default_model(self) -> str: ...


def can_continue(tree: ConversationTree, message: Message, *, is_last: bool | None = None) -> bool:
    """Whether a reply cut at max_tokens can be continued: it must end the visible path."""
    if message.role != ROLE_ASSISTANT or message.finish_reason != FINISH_LENGTH:
        return False
    if is_last is None:
        last = tree.last()
        is_last = last is not None and last.id == message.id
    return is_last


class ChatSession:
    """One conversation's turns. Operations are plain calls that start kept tasks; what
    happens is reported to ``listener`` as events (``core.session.events``).

    Turn state is kept per message id, so a reply keeps streaming while the conversation is
    off screen, and nothing is shared with other sessions but the optional ``gate``.
    """

    def __init__(
        self,
        tree: ConversationTree,
        *,
        client: ChatStreamer,
        store: SessionStore,
        settings: TurnSettings,
        listener: SessionListener,
        stored: bool = True,
        gate: ModelGate | None = None,
        policy_factory: Callable[[], RetryPolicy] = RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
        save_interval: float = STREAM_SAVE_INTERVAL,
        catalogue: Catalogue | None = None,
        schemas: SchemaBook | None = None,
    ) -> None:
        self.tree = tree
        self._client = client
        self._store = store
        #: what the catalogue says of a model: vision (images are refused without), terms URL…
        self._catalogue = catalogue
        #: model schemas, fetched when a request's wire forms depend on them
        self._schemas = schemas if schemas is not None else SchemaBook()
        self._settings = settings
        self._emit = listener
        self._gate = gate
        self._policy_factory = policy_factory
        self._clock = clock
        self._save_interval = save_interval
        self._saver = ConversationSaver(
            store, tree.conversation, stored=stored, report=self._trouble
        )
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._replies: dict[str, Reply] = {}
        self._jobs = TaskKeeper(f"session:{tree.conversation.id[:8]}")
        self._recovering: asyncio.Task[Any] | None = None
        self._failed: str | None = None  # the failed reply a banner acts on
        self._editing: str | None = None  # the user message the next send replaces
        self._columns: dict[str, ColumnSpec] = {}  # compare replies: their column's settings

    # -- queries ---------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.tree.conversation.id

    @property
    def stored(self) -> bool:
        return self._saver.stored

    @property
    def is_busy(self) -> bool:
        return bool(self._tasks)

    @property
    def unsaved(self) -> int:
        return self._saver.unsaved

    def is_running(self, message_id: str) -> bool:
        return message_id in self._tasks

    def running(self) -> list[str]:
        return list(self._tasks)

    @property
    def failed_id(self) -> str | None:
        return self._failed

    def model(self) -> str:
        return self.tree.conversation.model or self._settings.default_model()

    def live_text(self, message_id: str) -> tuple[str, str] | None:
        """What a running reply has received so far (text, reasoning), else None."""
        reply = self._replies.get(message_id)
        if reply is None or reply.state.is_final:
            return None
        return reply.state.text, reply.state.reasoning

    def pending_retry(self) -> RetryPlanned | None:
        """The retry countdown now running (delay = seconds left), to re-show its banner."""
        reply = self._retrying()
        retry = reply.state.last_retry if reply is not None else None
        if reply is None or retry is None or reply.retry_deadline is None:
            return None
        left = max(0.0, reply.retry_deadline - self._clock())
        return self._retry_event(reply, retry, delay=left)

    # -- sending ---------------------------------------------------------------------------

    def send(self, text: str, *, images: Sequence[Attachment] = ()) -> str | None:
        """Send ``text`` (and ``images``); returns the reply's message id (None when there is
        nothing to send, or while busy).

        Raises :class:`SendRefused` before anything is added when the message cannot go to the
        model as it is: images for a model whose catalogue entry says it has no vision
        (``refusal.kind == "no_vision"``; offer to switch to a vision model, then send again).
        While an edit is pending, the new message becomes a sibling of the edited one (a new
        branch; the old one is kept).
        """
        text = text.strip()
        if (not text and not images) or self.is_busy:
            return None
        if (refusal := self.refusal(images)) is not None:
            raise SendRefused(refusal)
        edited, self._editing = self._editing, None
        if edited is not None:
            self._emit(EditingChanged(self.id, editing=False))
            parent_id = self.tree.get(edited).parent_id
        else:
            last = self.tree.last()
            parent_id = last.id if last is not None else None
        user = self._add_user(text, parent_id=parent_id, replaces=edited, images=images)
        return self._begin_reply(user, store_first=[user])

    def refusal(self, images: Sequence[Attachment], model: str | None = None) -> Refusal | None:
        """Why ``images`` could not be sent to ``model`` (default: the conversation's), or None.

        The composer can ask this as images are attached, before the user presses Send.
        """
        return refusal_for(model or self.model(), images, self._catalogue)

    def _add_user(
        self,
        text: str,
        *,
        parent_id: str | None,
        replaces: str | None,
        images: Sequence[Attachment] = (),
        role: str = ROLE_USER,
        tool_call_id: str | None = None,
    ) -> Message:
        previous = self.tree.last()
        user = Message(new_id(), self.id, parent_id, role, text)
        user.attachments, user.tool_call_id = list(images), tool_call_id
        self.tree.add(user)
        if replaces is not None:
            self._emit(PathChanged(self.id, replaces, (user,)))
            return user
        if previous is not None and previous.role == ROLE_ASSISTANT:
            self._emit(MessageChanged(self.id, previous))  # its Continue offer goes
        self._emit(MessageAdded(self.id, user))
        return user

    def send_compare(
        self,
        text: str,
        columns: Sequence[ColumnSpec],
        *,
        after: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        """Send one prompt to every column at once (or each column its own ``ColumnSpec.prompt``);
        returns each column's reply id, in order.

        The first round shares one user message and its replies are siblings (the columns);
        a follow-up (``after``: each column's last reply id) continues each column's own
        branch. Every reply runs, retries and fails on its own. None when busy or empty.
        """
        texts = [(c.prompt if c.prompt is not None else text).strip() for c in columns]
        if not columns or not all(texts) or self.is_busy:
            return None
        if after is not None and len(after) != len(columns):
            raise ValueError("A follow-up needs one previous reply per column.")
        self.cancel_edit()
        own_prompts = any(c.prompt is not None for c in columns)
        if after is None and not own_prompts:
            last = self.tree.last()
            user = self._add_user(texts[0], parent_id=last.id if last else None, replaces=None)
            users = [user] * len(columns)
        else:
            # Follow-ups continue each column's branch; columns with their own prompt (a
            # template run over rows) each get their own user message, as sibling branches.
            last = self.tree.last()
            parents = after if after is not None else [last.id if last else None] * len(columns)
            users = [
                self._add_user(t, parent_id=p, replaces=None)
                for t, p in zip(texts, parents, strict=True)
            ]
        replies: list[str] = []
        for index, (user, column) in enumerate(zip(users, columns, strict=True)):
            first = user is not users[index - 1] if index else True
            replies.append(
                self._begin_reply(user, store_first=[user] if first else [], column=column)
            )
        return replies

    def _begin_reply(
        self, parent: Message, *, store_first: list[Message], column: ColumnSpec | None = None
    ) -> str:
        sent_at = self._clock()
        assistant = Message(
            id=new_id(),
            conversation_id=self.id,
            parent_id=parent.id,
            role=ROLE_ASSISTANT,
            content="",
            status=STATUS_STREAMING,
            model=column.model if column is not None else self.model(),
        )
        if column is not None:
            self._columns[assistant.id] = column
        self.tree.add(assistant)
        flow = self._send_flow(assistant, store_first=store_first, sent_at=sent_at)
        self._start(assistant, flow)
        self._emit(TurnStarted(self.id, assistant.id))
        index, count = self.tree.sibling_position(assistant.id)
        if count > 1:
            self._emit(SiblingsChanged(self.id, assistant.id, index - 1, count))
        return assistant.id

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
            await self._run(reply)

    async def _add_rows(self, messages: list[Message]) -> None:
        """Commit new rows before going on, but never wait long on a failing database: after
        COMMIT_WAIT the write goes on in the background (kept in memory, said in a banner)."""
        if not messages:
            return
        if self._saver.failing:
            for message in messages:
                self._saver.keep(message)
            return
        task = self._jobs.spawn(self._store_rows(messages), name="store-rows")
        if task is not None:
            await asyncio.wait({task}, timeout=COMMIT_WAIT)

    async def _save_final(self, message: Message) -> None:
        """A message's whole record, waited for at most COMMIT_WAIT: while the database
        fails it is kept for the recovery loop, so a reply never waits on a locked store."""
        if self._saver.failing:
            self._saver.keep(message)
            return
        task = self._jobs.spawn(self._saver.finalise(message), name="save-final")
        if task is not None:
            await asyncio.wait({task}, timeout=COMMIT_WAIT)

    async def _store_rows(self, messages: list[Message]) -> None:
        if await self._saver.add(messages):
            self._emit(ConversationStored(self.id))

    async def _new_reply(
        self, message: Message, *, reject_if_busy: bool | None, sent_at: float
    ) -> Reply | None:
        """Build the request (fetching the model's schema first when its wire forms depend on
        it); a configuration problem or an unusable option fails the reply here (None)."""
        settings, conversation = self._settings, self.tree.conversation
        try:
            conn = settings.connection()
        except ConfigurationError as error:
            self._fail_unsent(message, text=" ".join(error.problems))
            return None
        column = self._columns.get(message.id)
        params = column.params if column is not None and column.params is not None else None
        system = column.system_prompt if column is not None else None
        model = message.model or settings.default_model()
        history = self.tree.path_to(message.parent_id) if message.parent_id else []
        try:
            capabilities = capabilities_from(conversation.params)
            schema = None
            if needs_schema(conn, capabilities, history):
                schema = await self._schemas.get(self._client, conn, model)
            request = build_request(
                model=model,
                history=history,
                system_prompt=conversation.system_prompt if system is None else system,
                params=settings.sampling(conversation.params if params is None else params),
                reject_if_busy=settings.reject_if_busy()
                if reject_if_busy is None
                else reject_if_busy,
                gateway=settings.gateway_options(),
                session_id=conversation.id,
                capabilities=capabilities,
                model_info=self._catalogue(model) if self._catalogue is not None else None,
                model_schema=schema,
            )
        except ValueError as error:  # ConfigurationError included: a bad option or image
            problems = getattr(error, "problems", None) or [str(error)]
            self._fail_unsent(message, text=" ".join(problems), kind=ErrorKind.BAD_REQUEST)
            return None
        message.request = records.request_record(conn, request)
        return Reply(message, conn, request, TurnState(started_at=sent_at))

    def _fail_unsent(
        self, message: Message, *, text: str, kind: ErrorKind = ErrorKind.CONFIG
    ) -> None:
        message.status = STATUS_FAILED
        message.error = {"kind": str(kind), "message": text}
        self._emit(TurnFinished(self.id, message, message.model or ""))
        self._failed = message.id
        extra = {"model": message.model or ""}
        self._emit(TurnFailed(self.id, message.id, kind, text, extra))

    async def _stopped_unsent(self, message: Message) -> None:
        """Stopped before the request went out: an empty "stopped" reply, kept and shown."""
        message.status = STATUS_STOPPED
        await self._save_final(message)
        self._emit(TurnFinished(self.id, message, message.model or ""))

    # -- running a reply ---------------------------------------------------------------

    def _start(self, message: Message, flow: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(flow, name=f"turn:{message.id}")
        was_busy = self.is_busy
        self._tasks[message.id] = task
        task.add_done_callback(functools.partial(self._task_done, message.id))
        if not was_busy:
            self._emit(BusyChanged(self.id, busy=True))

    def _task_done(self, message_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(message_id) is task:
            del self._tasks[message_id]
            if not self._tasks:
                self._emit(BusyChanged(self.id, busy=False))
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("reply task %s crashed", message_id, exc_info=error)

    def _streamer(self, reply: Reply) -> ChatStreamer:
        if self._gate is None:
            return self._client
        return GatedStreamer(self._client, self._gate, on_slot=lambda: self._sent(reply))

    async def _run(self, reply: Reply) -> None:
        """Stream the reply to its end; failures become a failed state, never an exception.

        Cancellation (stop, quit, Wait in queue, Cancel) finalises per ``reply.outcome``.
        """
        self._replies[reply.message.id] = reply
        self._failed = None
        if self._gate is not None and self._gate.would_wait(reply.model):
            self._phase(reply, Phase.HELD)
        elif self._gate is None:
            self._sent(reply)
        saving = self._jobs.spawn(self._save_while_streaming(reply), name="autosave")
        events = run_turn(
            self._streamer(reply),
            reply.conn,
            reply.request,
            policy=self._policy_factory(),
            sleep=functools.partial(self._wait_to_retry, reply),
        )
        try:
            async with aclosing(events) as stream:
                async for event in stream:
                    self._on_event(reply, event)
        except WorkersAIError as error:
            await self._end_saving(saving)
            if await self._agreed_again(reply, error):
                return
            reply.state = fail(reply.state, error, now=self._clock())
            await self._finalise(reply)
            self._failed = reply.message.id
            extra = failure_extra(error, model=reply.model, attempts=reply.state.attempt)
            extra["partial"] = reply.state.received_tokens
            self._emit(TurnFailed(self.id, reply.message.id, error.kind, error.message, extra))
        except ValueError as error:
            # The api refused to build the request (an image the model's input cannot take,
            # a reasoning effort it does not offer…): nothing was sent.
            await self._end_saving(saving)
            self._retry_over(reply)
            kind, message = ErrorKind.BAD_REQUEST, reply.message
            message.status = STATUS_FAILED
            message.error = {"kind": str(kind), "message": str(error)}
            await self._save_final(message)
            self._fail_unsent(message, text=str(error), kind=kind)
        except asyncio.CancelledError:
            await self._end_saving(saving)
            await self._on_cancelled(reply)
            raise
        else:
            await self._end_saving(saving)
            await self._finalise(reply)
        finally:
            if self._replies.get(reply.message.id) is reply:
                del self._replies[reply.message.id]

    async def _agreed_again(self, reply: Reply, error: WorkersAIError) -> bool:
        """A 5016 for a model whose licence the user accepted before (for this account): the
        agreement is sent again and the reply re-run once, without asking. False otherwise."""
        store, client = self._store, self._client
        if not isinstance(error, TermsNotAccepted) or reply.agreed:
            return False
        if not isinstance(store, AgreementStore) or not isinstance(client, TermsAgreer):
            return False
        model = error.model or reply.model
        try:
            if not await store.has_agreed(reply.conn.account_id, model):
                return False
            if not await client.agree_to_terms(reply.conn, model):
                return False
        except (StoreError, WorkersAIError) as failure:
            log.info("could not renew the licence agreement for %s: %s", model, failure)
            return False
        self._emit(Notice(self.id, reply.message.id, NoticeKind.TERMS_AGREED, AGREED_AGAIN))
        reply.agreed = True
        reply.state = TurnState(started_at=reply.state.started_at)
        await self._run(reply)
        return True

    def _sent(self, reply: Reply) -> None:
        queued = reply.request.reject_if_busy is False
        self._phase(reply, Phase.QUEUED if queued else Phase.SENT)

    def _phase(self, reply: Reply, phase: Phase) -> None:
        self._emit(PhaseChanged(self.id, reply.message.id, phase, self._clock()))

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
            self._emit(self._retry_event(reply, event, delay=event.delay))
            self._phase(reply, Phase.RETRY_WAIT)
        elif isinstance(event, ResponseMeta):
            self._retry_over(reply)
        elif isinstance(event, TextDelta | ReasoningDelta) and event.text:
            kind = TextAppended if isinstance(event, TextDelta) else ReasoningAppended
            self._emit(kind(self.id, message_id, event.text))
            if first:
                self._phase(reply, Phase.STREAMING)
        elif isinstance(event, ToolCallDelta):
            self._emit(
                ToolCallAppended(
                    self.id, message_id, event.index, event.id, event.name, event.arguments
                )
            )
            if first:
                self._phase(reply, Phase.STREAMING)
        elif isinstance(event, StreamingDisabled):
            self._emit(Notice(self.id, message_id, NoticeKind.STREAMING_DISABLED, event.reason))

    def _retry_event(self, reply: Reply, retry: RetryScheduled, *, delay: float) -> RetryPlanned:
        error = retry.error
        return RetryPlanned(
            self.id,
            reply.message.id,
            attempt=retry.attempt,
            max_attempts=retry.max_attempts,
            delay=delay,
            model=reply.model,
            kind=error.kind,
            reason=error.message,
        )

    def _retry_over(self, reply: Reply) -> None:
        if reply.banner_shown:
            reply.banner_shown = False
            self._emit(RetryOver(self.id, reply.message.id))

    async def _save_while_streaming(self, reply: Reply) -> None:
        """Save the text so far every ``save_interval`` seconds, whether or not more arrives,
        so a crash or kill loses at most that much of the reply."""
        while True:
            await asyncio.sleep(self._save_interval)
            if reply.take_text():
                if self._saver.failing:
                    self._saver.keep(reply.message, partial=True)
                else:
                    await self._saver.save_partial(reply.message)
                self._emit(TurnProgress(self.id, reply.message.id, reply.model, reply.state))

    async def _end_saving(self, saving: asyncio.Task[Any] | None) -> None:
        if saving is not None:
            saving.cancel()
            await asyncio.gather(saving, return_exceptions=True)

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
        self._retry_over(reply)
        await self._finalise(reply)

    async def _finalise(self, reply: Reply) -> None:
        state, message = reply.state, reply.message
        reply.take_text()
        message.status = state.status if state.is_final else "done"
        message.finish_reason = state.finish_reason
        message.usage = records.usage_record(state)
        message.meta = records.meta_record(state)
        message.timings = records.timings_record(state)
        error = state.error
        message.error = {"kind": str(error.kind), "message": error.message} if error else None
        message.tool_calls = records.tool_calls_record(state)
        await self._save_final(message)
        if message.tool_calls:
            calls = tuple(dict(c) for c in message.tool_calls)
            self._emit(ToolCallsReceived(self.id, message.id, calls))
        self._emit(TurnFinished(self.id, message, reply.model, state))

    # -- saving ----------------------------------------------------------------------------

    def _trouble(self, problem: str | None, unsaved: int) -> None:
        self._emit(StoreTrouble(self.id, problem, unsaved))
        if problem is not None and self._recovering is None:
            # Kept apart from the jobs: it may run until the database works again, and
            # waiting for the jobs (drain) must not wait for that.
            loop = asyncio.get_running_loop()
            self._recovering = loop.create_task(self._recover(), name=f"recover:{self.id[:8]}")

    async def _recover(self) -> None:
        """Write what a failed save kept, every RECOVERY_INTERVAL, until it is all written."""
        try:
            while self._saver.failing:
                await asyncio.sleep(RECOVERY_INTERVAL)
                if await self._saver.flush():
                    self._emit(ConversationStored(self.id))
        finally:
            self._recovering = None

    def _save_fields(self, **fields: Any) -> None:
        self._jobs.spawn(self._saver.update(**fields), name="save-conversation")

    # -- stop, regenerate, edit, continue, branches ----------------------------------------

    def stop(self, message_id: str | None = None) -> None:
        """Stop a reply (default: every reply of this conversation); its text so far is kept."""
        for target in [message_id] if message_id else list(self._tasks):
            if (reply := self._replies.get(target)) is not None:
                reply.outcome = Outcome.STOP
            if (task := self._tasks.get(target)) is not None:
                task.cancel()

    async def stop_all(self) -> None:
        """Stop every reply and wait until each is saved."""
        await asyncio.gather(*(self._cancel(m, Outcome.STOP) for m in list(self._tasks)))

    async def _cancel(self, message_id: str, outcome: Outcome) -> None:
        task = self._tasks.get(message_id)
        if task is None:
            return
        if (reply := self._replies.get(message_id)) is not None:
            reply.outcome = outcome
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def regenerate(self, message_id: str) -> str | None:
        """A new reply to the same user message, as a sibling: the old reply stays a branch."""
        if message_id not in self.tree or self.is_busy:
            return None
        message = self.tree.get(message_id)
        if message.role != ROLE_ASSISTANT or message.parent_id is None:
            return None
        self._emit(PathChanged(self.id, message_id))
        return self._begin_reply(self.tree.get(message.parent_id), store_first=[])

    def start_edit(self, message_id: str) -> None:
        """Put a user message in the composer; the next send makes a new branch from it."""
        if message_id not in self.tree or self.tree.get(message_id).role != ROLE_USER:
            return
        self._editing = message_id
        self._emit(EditingChanged(self.id, editing=True, text=self.tree.get(message_id).content))

    def edit_last(self) -> None:
        """Up in an empty composer: edit the last user message on the path."""
        users = [m for m in self.tree.path() if m.role == ROLE_USER]
        if users:
            self.start_edit(users[-1].id)

    def cancel_edit(self) -> None:
        if self._editing is not None:
            self._editing = None
            self._emit(EditingChanged(self.id, editing=False))

    def continue_reply(self, message_id: str) -> str | None:
        """Continue a reply cut at max_tokens, as a new user turn and a new assistant message.

        A new message rather than text appended to the old one, because every assistant
        message keeps the exact request, usage and timings that produced it: appending would
        mix two requests' records, and a failed continuation could put the saved text at
        risk. The "Continue" user message is stored too, so the tree shows what the model saw.
        """
        if message_id not in self.tree or self.is_busy:
            return None
        if not can_continue(self.tree, self.tree.get(message_id)):
            return None
        user = self._add_user(CONTINUE_PROMPT, parent_id=message_id, replaces=None)
        return self._begin_reply(user, store_first=[user])

    def switch_branch(self, message_id: str, step: int) -> None:
        """Show the previous (-1) or next (+1) sibling of a message, and its branch."""
        if message_id not in self.tree:
            return
        siblings = [m.id for m in self.tree.siblings(message_id)]
        index = siblings.index(message_id) + step
        if not 0 <= index < len(siblings):
            return
        self.tree.select(siblings[index])
        path = self.tree.path()
        start = next(i for i, m in enumerate(path) if m.id == siblings[index])
        self._emit(PathChanged(self.id, message_id, tuple(path[start:])))
        self._save_fields(selected=dict(self.tree.selected))

    def reveal(self, message_id: str) -> bool:
        """Put a message on the visible path (a search hit, a find match), choosing and saving
        its branch when it is on one not shown. False when it is not in this conversation."""
        if message_id not in self.tree:
            return False
        before = self.choose_branch(message_id)
        if before is not None:
            after = self.tree.path()
            pairs = enumerate(zip(before, after, strict=False))
            fork = next((i for i, (a, b) in pairs if a.id != b.id), len(before))
            first = before[fork].id if fork < len(before) else after[fork].id
            self._emit(PathChanged(self.id, first, tuple(after[fork:])))
        return True

    def choose_branch(self, message_id: str) -> list[Message] | None:
        """Choose (and save) the branch holding a message; the path shown before, or None
        when the message was on it already."""
        chain = self.tree.path_to(message_id)
        chosen = (self.tree.chosen_child(m.parent_id) for m in chain)
        if all(c is not None and c.id == m.id for c, m in zip(chosen, chain, strict=True)):
            return None
        before = self.tree.path()
        self.tree.select(message_id)
        self._save_fields(selected=dict(self.tree.selected))
        return before

    # -- model and options -----------------------------------------------------------------

    def set_model(self, model: str) -> None:
        """Use ``model`` from now on (saved with the conversation). A reply held up by
        capacity, or failed because its model is unavailable, is sent again with it."""
        self.tree.conversation.model = model
        self._save_fields(model=model)
        self.switch_model(model)

    def set_options(self, system_prompt: str, params: Mapping[str, Any]) -> None:
        """The conversation's system prompt and sampling parameters (saved with it)."""
        conversation = self.tree.conversation
        conversation.system_prompt, conversation.params = system_prompt, dict(params)
        self._save_fields(system_prompt=system_prompt, params=dict(params))

    # -- tools, JSON replies, licences ------------------------------------------------------

    def send_tool_results(self, reply_id: str, results: Mapping[str, str]) -> str | None:
        """Answer a reply's tool calls: one ``tool`` message per call (in the calls' order,
        each with its call id), then the model's next reply, whose id is returned.

        ``results`` maps every call id of the reply to its result text (a typed answer or a
        tool's canned one). None when the reply is not the last message on the path or the
        session is busy; ValueError when a call has no result or a result names no call.
        """
        if reply_id not in self.tree or self.is_busy:
            return None
        reply = self.tree.get(reply_id)
        last = self.tree.last()
        if reply.role != ROLE_ASSISTANT or not reply.tool_calls or last is None:
            return None
        if last.id != reply_id:
            return None
        ids = [str(call.get("id")) for call in reply.tool_calls]
        if missing := [i for i in ids if i not in results]:
            raise ValueError(f"No result for tool call {', '.join(missing)}.")
        if unknown := sorted(set(results) - set(ids)):
            raise ValueError(f"The reply made no tool call {', '.join(unknown)}.")
        self.cancel_edit()
        added: list[Message] = []
        parent_id = reply_id
        for call_id in ids:
            message = self._add_user(
                results[call_id],
                parent_id=parent_id,
                replaces=None,
                role=ROLE_TOOL,
                tool_call_id=call_id,
            )
            added.append(message)
            parent_id = message.id
        return self._begin_reply(added[-1], store_first=added)

    def json_verdict(self, message_id: str) -> JsonVerdict | None:
        """Whether a reply asked for as JSON parses and follows the schema it was asked for
        (read from its request record); None for a reply that was not asked for JSON."""
        if message_id not in self.tree:
            return None
        message = self.tree.get(message_id)
        asked = (message.request or {}).get(PARAM_RESPONSE_FORMAT)
        if message.role != ROLE_ASSISTANT or not isinstance(asked, Mapping):
            return None
        schema = asked.get("schema")
        return json_check(message.content, schema if isinstance(schema, Mapping) else None)

    def agree_terms(self, message_id: str | None = None) -> bool:
        """ "Agree and continue" on a 5016 banner: accept the model's licence for the account
        (the documented agreement request), remember it, then send the held reply again.

        False when the reply (default: the failed one) did not fail for licence terms or the
        client cannot agree; the outcome comes as events (Notice, then the reply's TurnStarted
        …, or a TurnFailed when the agreement did not go through).
        """
        target = message_id or self._failed
        if target is None or target not in self.tree or target in self._tasks:
            return False
        message = self.tree.get(target)
        if (message.error or {}).get("kind") != ErrorKind.TERMS:
            return False
        if not isinstance(self._client, TermsAgreer):
            return False
        self._jobs.spawn(self._agree_and_rerun(message, self._client), name="agree-terms")
        return True

    async def _agree_and_rerun(self, message: Message, client: TermsAgreer) -> None:
        model = message.model or self.model()
        try:
            conn = self._settings.connection()
            accepted = await client.agree_to_terms(conn, model)
        except ConfigurationError as error:
            self._emit(TurnFailed(self.id, message.id, ErrorKind.CONFIG, str(error), {}))
            return
        except WorkersAIError as error:
            extra = failure_extra(error, model=model, attempts=1)
            self._emit(TurnFailed(self.id, message.id, error.kind, error.message, extra))
            return
        if not accepted:
            extra = {"model": model, "terms_url": self._terms_url(model)}
            text = "The licence was not accepted; the model still asks for agreement."
            self._emit(TurnFailed(self.id, message.id, ErrorKind.TERMS, text, extra))
            return
        if isinstance(self._store, AgreementStore):
            try:
                await self._store.record_agreement(conn.account_id, model)
            except StoreError as error:  # accepted all the same; only the memory of it is lost
                log.warning("could not remember the licence agreement for %s: %s", model, error)
        self._emit(Notice(self.id, message.id, NoticeKind.TERMS_AGREED, AGREED))
        self._rerun(message.id, reject_if_busy=None)

    def _terms_url(self, model: str) -> str | None:
        info = self._catalogue(model) if self._catalogue is not None else None
        return info.terms_url if info is not None else None

    # -- the retry banner's actions --------------------------------------------------------

    def _retrying(self, message_id: str | None = None) -> Reply | None:
        """The reply waiting to retry: ``message_id``'s, or the first one (one-reply chats)."""
        if message_id is not None:
            reply = self._replies.get(message_id)
            return reply if reply is not None and reply.waiting_to_retry else None
        return next((r for r in self._replies.values() if r.waiting_to_retry), None)

    def retry_now(self, message_id: str | None = None) -> None:
        """Cut the countdown short; after the retry budget, send the failed reply again."""
        reply = self._retrying(message_id)
        if reply is not None:
            reply.sleep.cut()
        else:
            self.retry_failed(message_id)

    def wait_in_queue(self, message_id: str | None = None) -> None:
        """Send the reply again once with "Reject if busy" off: wait in Cloudflare's queue."""
        reply = self._retrying(message_id)
        failed = message_id or self._failed
        if reply is not None:
            self._requeue(reply, reject_if_busy=False)
        elif failed is not None:
            self._rerun(failed, reject_if_busy=False)

    def switch_model(self, model: str, message_id: str | None = None) -> None:
        """Send the reply waiting on capacity (or failed because its model is unavailable)
        again at once with ``model``: its retries end and its record becomes the new one."""
        reply = self._retrying(message_id)
        retry = reply.state.last_retry if reply is not None else None
        if reply is not None and retry is not None:
            if retry.error.kind == ErrorKind.CAPACITY and reply.model != model:
                reply.message.model = model
                self._retarget(reply.message.id, model)
                self._requeue(reply, reject_if_busy=None)
            return
        failed = message_id or self._failed
        if failed is None or failed not in self.tree:
            return
        message = self.tree.get(failed)
        if (message.error or {}).get("kind") in SWITCHABLE_FAILURES and message.model != model:
            message.model = model
            self._retarget(failed, model)
            self._rerun(failed, reject_if_busy=None)

    def _retarget(self, message_id: str, model: str) -> None:
        if (column := self._columns.get(message_id)) is not None:
            self._columns[message_id] = replace(column, model=model)

    def cancel_retry(self, message_id: str | None = None) -> None:
        """Stop retrying: the reply is marked failed with its error; nothing is invented."""
        reply = self._retrying(message_id)
        if reply is not None:
            self._jobs.spawn(self._cancel(reply.message.id, Outcome.CANCEL_RETRY), name="cancel")
        elif message_id is None or message_id == self._failed:
            self._failed = None

    def retry_failed(self, message_id: str | None = None) -> None:
        """Retry a failed or interrupted reply: in place when it has no text, else as a sibling
        (an interrupted reply's partial text is kept as its own branch)."""
        target = message_id or self._failed
        if target is None or target not in self.tree or self.is_busy:
            return
        message = self.tree.get(target)
        if message.content or message.reasoning:
            self.regenerate(target)
        else:
            self._rerun(target, reject_if_busy=None)

    def _requeue(self, reply: Reply, *, reject_if_busy: bool | None) -> None:
        """Send a reply waiting to retry again at once; its task is cancelled now, while it
        has no text. A switched model shows the reply anew."""
        task = self._tasks.get(reply.message.id)
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
        message = reply.message
        self._retry_over(reply)
        if message.id in self._tasks:
            return
        switched = message.model != reply.model
        if switched:
            self._emit(PathChanged(self.id, message.id))
        self._start(message, self._rerun_flow(message, reject_if_busy, sent_at=self._clock()))
        if switched:
            self._emit(TurnStarted(self.id, message.id))

    def _rerun(self, message_id: str, *, reject_if_busy: bool | None) -> None:
        # Only this reply must be idle: a compare column is retried while others stream. A
        # reply whose failure was just reported is final while its task still unwinds.
        running = self._replies.get(message_id)
        busy = message_id in self._tasks and (running is None or not running.state.is_final)
        if message_id not in self.tree or busy:
            return
        message = self.tree.get(message_id)
        message.status, message.error, message.finish_reason = STATUS_STREAMING, None, None
        self._failed = None
        self._emit(PathChanged(self.id, message_id))
        self._start(message, self._rerun_flow(message, reject_if_busy, sent_at=self._clock()))
        self._emit(TurnStarted(self.id, message_id))

    async def _rerun_flow(
        self, message: Message, reject_if_busy: bool | None, *, sent_at: float
    ) -> None:
        try:
            reply = await self._new_reply(message, reject_if_busy=reject_if_busy, sent_at=sent_at)
            await self._save_final(message)  # its new request record, status "streaming"
        except asyncio.CancelledError:
            await self._stopped_unsent(message)
            raise
        if reply is not None:
            await self._run(reply)

    # -- lifetime --------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop every reply (partial text saved as "stopped"), then every job; one last
        attempt to write anything a failed save kept."""
        await self.stop_all()
        if (recovering := self._recovering) is not None:
            recovering.cancel()
            await asyncio.gather(recovering, return_exceptions=True)
        await self._jobs.aclose()
        if self._saver.failing:
            with contextlib.suppress(Exception):
                await self._saver.flush()

    async def drain(self) -> None:
        """Wait until no reply or job runs (tests)."""
        while self._tasks or len(self._jobs):
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)
            await self._jobs.drain()

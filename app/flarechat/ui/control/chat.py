"""The chat controller: the Qt adapter over ``core.session`` — user intents in, session events
out as plain-value signals, and which conversation is on screen."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from flarechat.api.retry import RetryPolicy
from flarechat.core.current_model import CurrentModel
from flarechat.core.tasks import TaskKeeper
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.control.view_data import PathView

if TYPE_CHECKING:  # the session engine's modules are imported by ChatController.start
    from flarechat.api.models import ModelInfo
    from flarechat.core import session as ev
    from flarechat.core.conversation import Attachment, ConversationTree
    from flarechat.core.session import ChatSession, SessionBook
    from flarechat.core.session.book import BookStore
    from flarechat.core.store import StoreError
    from flarechat.core.turn import ChatStreamer
    from flarechat.ui.control.capabilities import ModelCapabilities
    from flarechat.ui.control.status_line import StatusLine
    from flarechat.ui.control.viewing import MessageViews

__all__ = ["ChatController", "DeltaBuffer"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _once_started(
    method: Callable[Concatenate[ChatController, _P], _R],
) -> Callable[Concatenate[ChatController, _P], _R | None]:
    """An intent made before :meth:`ChatController.start` waits for it (in order) and
    returns None; afterwards it runs at once."""

    def call(self: ChatController, /, *args: _P.args, **kwargs: _P.kwargs) -> _R | None:
        if self.started:
            return method(self, *args, **kwargs)
        self.when_started(functools.partial(method, self, *args, **kwargs))
        return None

    call.__doc__, call.__name__ = method.__doc__, method.__name__
    return call


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class DeltaBuffer:
    """Reply text (and reasoning) that came since the last relay, in order, runs joined.

    A fast stream hands the session hundreds of deltas in one turn of the event loop; relayed
    one signal each, the window's work (and PySide's per-emit cost) grows with tokens, not with
    turns. Whatever comes in one turn goes out as one signal per message and kind.
    """

    def __init__(self) -> None:
        self._runs: list[tuple[str, bool, list[str]]] = []  # message id, reasoning?, pieces

    def __bool__(self) -> bool:
        return bool(self._runs)

    def add(self, message_id: str, text: str, *, reasoning: bool) -> None:
        if self._runs and self._runs[-1][:2] == (message_id, reasoning):
            self._runs[-1][2].append(text)
        else:
            self._runs.append((message_id, reasoning, [text]))

    def take(self) -> list[tuple[str, bool, str]]:
        """(message id, reasoning?, text) runs in arrival order; the buffer is emptied."""
        runs, self._runs = self._runs, []
        return [(message_id, reasoning, "".join(pieces)) for message_id, reasoning, pieces in runs]


class ChatController(QObject):
    """Turns the user's intents into session calls and session events into signals.

    Signals:
        conversation_opened(str, object): conversation id, PathView of its visible path (id ""
            for the empty draft shown before ``start``; the real draft follows it).
        conversation_stored(str): a draft conversation got its row (the list changed).
        message_added(str, object): conversation id, MessageData of a new user message.
        message_updated(object): a MessageData to re-show (e.g. its Continue button went).
        path_changed(str, str, list): conversation id, the first message no longer shown (it
            and all after it go), MessageData of the path shown from there on.
        turn_started(str, str): conversation id, assistant message id: a reply begins.
        turn_continued(str, str): conversation id, assistant message id: a reply shown goes on
            growing from its text (Continue after max_tokens).
        turn_phase_changed(str, str): message id, ``core.session.Phase`` value (held, sent,
            queued, retry_wait, streaming).
        siblings_changed(str, int, int): message id, 0-based index, sibling count ("< 1/2 >").
        turn_text_appended(str, str) / turn_reasoning_appended(str, str): message id, text:
            all that came in one turn of the event loop, relayed once after it (and always
            before any other signal, so a reply's text comes before its turn_finished).
        turn_finished(str, object): message id, the final MessageData (a failure is a state,
            never written as the model's words).
        turn_failed(str, str, str, dict): message id, ErrorKind value, plain-English message,
            plain values (model, attempts, partial, status, code, retry_after, resets_at).
        retry_scheduled(str, int, int, float, str, str): message id, failed attempt, max
            attempts, seconds to the next attempt, model, ErrorKind value.
        retry_cleared(str): message id: the retry wait is over.
        busy_changed(bool): whether a reply runs in the current conversation.
        model_changed(str): the current conversation's model changed (``model``: the one
            place every widget that names it reads it from).
        options_changed(): the current conversation's system prompt or parameters changed
            (the context meter and the active-options chips follow).
        metrics_changed(str): the status bar's metrics line.
        composer_text_requested(str): put this text in the composer (edit flows).
        editing_changed(bool): whether the next send replaces an earlier message (a branch).
        store_problem(str): the database failed; a plain-English sentence for a banner.
        store_recovered(): what the database failed to save is now written.
        send_refused(str, str): model, why: the message was not sent (images to a model
            without vision); the composer keeps it, the user may switch model.
        turn_notice(str, str, str): message id, ``core.session.NoticeKind`` value, text
            (streaming turned off for JSON mode, licence accepted).
        catalogue_changed(): what is known of the models changed (``capabilities``).

    ``capabilities`` (ModelCapabilities) answers what the models can do; ``status`` (StatusLine)
    keeps the metrics line.
    """

    conversation_opened = Signal(str, object)  # a PathView: Qt would copy a list whole
    conversation_stored = Signal(str)
    message_added = Signal(str, object)
    message_updated = Signal(object)
    path_changed = Signal(str, str, list)
    turn_started = Signal(str, str)
    turn_continued = Signal(str, str)
    turn_phase_changed = Signal(str, str)
    siblings_changed = Signal(str, int, int)
    turn_text_appended = Signal(str, str)
    turn_reasoning_appended = Signal(str, str)
    turn_finished = Signal(str, object)
    turn_failed = Signal(str, str, str, dict)
    retry_scheduled = Signal(str, int, int, float, str, str)
    retry_cleared = Signal(str)
    busy_changed = Signal(bool)
    model_changed = Signal(str)
    options_changed = Signal()
    metrics_changed = Signal(str)
    composer_text_requested = Signal(str)
    editing_changed = Signal(bool)
    store_problem = Signal(str)
    store_recovered = Signal()
    send_refused = Signal(str, str)
    turn_notice = Signal(str, str, str)
    catalogue_changed = Signal()

    def __init__(
        self,
        *,
        client: ChatStreamer,
        store: BookStore,
        prefs: Preferences,
        policy_factory: Callable[[], RetryPolicy] = RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
        start: bool = True,
        parent: QObject | None = None,
    ) -> None:
        """``start=False``: the session engine (``core.session``, the model capabilities, the
        status line) is built by :meth:`start`; intents made before then wait for it. The app
        starts it one loop turn after the window's first paint (issue #12: its modules made
        ~90 dataclasses before the paint)."""
        super().__init__(parent)
        self._prefs = prefs
        self._engine_parts = (client, store, policy_factory, clock)
        self._started = False
        self._waiting: list[Callable[[], object]] = []
        self._replacing_look = False
        self._jobs = TaskKeeper("chat")
        self._last_problem: str | None = None
        self._deltas = DeltaBuffer()
        #: The current model, as every widget shows it; a change is said by model_changed.
        self.model = CurrentModel(prefs.default_model())
        self.model.subscribe(self.model_changed.emit)
        # Zero interval: fires once this turn of the event loop is over (the burst is read).
        self._relay_timer = QTimer(self)
        self._relay_timer.setObjectName("chatDeltaRelayTimer")
        self._relay_timer.setSingleShot(True)
        self._relay_timer.setInterval(0)
        self._relay_timer.timeout.connect(self._relay_deltas)
        if start:
            self.start()

    def start(self) -> None:
        """Build the session engine, then run the intents that waited for it, in order."""
        if self._started:
            return
        from flarechat.core.session import SessionBook
        from flarechat.ui.control.capabilities import ModelCapabilities
        from flarechat.ui.control.status_line import StatusLine
        from flarechat.ui.control.viewing import MessageViews

        client, store, policy_factory, clock = self._engine_parts
        self._book: SessionBook = SessionBook(
            client=client,
            store=store,
            settings=self._prefs,
            listener=self._on_event,
            policy_factory=policy_factory,
            clock=clock,
        )
        self.capabilities: ModelCapabilities = ModelCapabilities(
            self._book,
            client=client,
            prefs=self._prefs,
            current_model=self.current_model,
            refused=self.send_refused.emit,
            catalogue_changed=self.catalogue_changed.emit,
        )
        self.status: StatusLine = StatusLine(
            self._book,
            jobs=self._jobs,
            current_model=self.current_model,
            show_line=self.metrics_changed.emit,
        )
        self._views: MessageViews = MessageViews(self.capabilities.known)
        self._started = True
        waiting, self._waiting = self._waiting, []
        for call in waiting:
            call()

    @property
    def started(self) -> bool:
        """Whether the session engine is built (see :meth:`start`)."""
        return self._started

    def when_started(self, call: Callable[[], object]) -> None:
        """Run ``call`` now if the engine is built, else right after :meth:`start` builds it."""
        if self._started:
            call()
        else:
            self._waiting.append(call)

    # -- queries ---------------------------------------------------------------------------

    @property
    def session(self) -> ChatSession | None:
        """The conversation on screen (none before :meth:`start`)."""
        return self._book.current if self._started else None

    @property
    def current_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def current_tree(self) -> ConversationTree | None:
        return self.session.tree if self.session is not None else None

    def current_model(self) -> str:
        return self.session.model() if self.session is not None else self._prefs.default_model()

    def is_stored(self, conversation_id: str) -> bool:
        session = self._book.session(conversation_id) if self._started else None
        return session is None or session.stored  # only drafts are held in memory

    def is_running(self, message_id: str) -> bool:
        return message_id in self.running_turns()

    def is_shown(self, message_id: str) -> bool:
        """Whether this message belongs to the conversation on screen."""
        return self.session is not None and message_id in self.session.tree

    def is_busy(self) -> bool:
        return self.session is not None and self.session.is_busy

    def running_turns(self) -> list[str]:
        return self._book.running_turns() if self._started else []

    def pending_retry(self) -> tuple[str, int, int, float, str, str] | None:
        """The current conversation's retry countdown, to re-show its banner after a switch."""
        plan = self.session.pending_retry() if self.session is not None else None
        if plan is None:
            return None
        return (plan.message_id, plan.attempt, plan.max_attempts, plan.delay, plan.model, plan.kind)

    def path_view(self, conversation_id: str, *, focus: str | None = None) -> PathView:
        """The shown path's messages; each MessageData is made when first read. ``focus``:
        the message it opens at (a search hit: its newest page is never built)."""
        return self._views.path(self._book.session(conversation_id), focus=focus)

    # -- conversations ---------------------------------------------------------------------

    def new_conversation(self) -> str:
        """Show a draft conversation (it is stored with its first message); its id. Before
        :meth:`start` it is shown once the engine is built, and the id is ""."""
        if not self._started:
            self._show_draft_look()
            self.when_started(self._replace_draft_look)
            return ""
        return self._opened(self._book.new_conversation())

    @property
    def replacing_look(self) -> bool:
        """True while the engine's draft takes the place of the look shown before the engine
        was built: what a view shows since (a banner, the focus) is left as it is."""
        return self._replacing_look

    def _replace_draft_look(self) -> None:
        self._replacing_look = True
        try:
            self.new_conversation()
        finally:
            self._replacing_look = False

    def _show_draft_look(self) -> None:
        """What a new draft shows (no messages, the default model, not busy) before the engine
        that makes it is built, so the window's first frame is the same as with it."""
        self.conversation_opened.emit("", PathView.empty())
        self.model.update(self.current_model(), force=True)
        self.busy_changed.emit(False)

    async def open_conversation(self, conversation_id: str, *, at: str | None = None) -> bool:
        """Load (unless in memory) and show a stored conversation; False if it can't be read.

        ``at``: a message to be shown (a search hit); the branch holding it is chosen first.
        Asked before :meth:`start`, it waits for the engine.
        """
        if not self._started:
            built = asyncio.get_running_loop().create_future()
            self.when_started(functools.partial(_resolve, built))
            await built
        session = await self._book.open_conversation(conversation_id)
        if session is None:
            return False
        if at is not None and at in session.tree:
            session.choose_branch(at)
        self._opened(session, focus=at)
        return True

    def _opened(self, session: ChatSession, *, focus: str | None = None) -> str:
        self.conversation_opened.emit(session.id, self.path_view(session.id, focus=focus))
        self.model.update(self.current_model(), force=True)
        self.status.show(self.current_model(), None)  # not the figures of the chat left
        self.busy_changed.emit(session.is_busy)
        return session.id

    @_once_started
    def forget(self, conversation_id: str) -> None:
        """A conversation was deleted: drop it from memory (stop its replies first)."""
        self._book.forget(conversation_id)

    @_once_started
    def forget_left(self) -> None:
        """Drop the conversations kept in memory since they were left: each next open reads
        the store (memory pressure; benchmarks that time a cold open)."""
        self._book.forget_left()

    async def stop_conversation(self, conversation_id: str) -> None:
        """Stop every reply running in one conversation and wait until they are saved."""
        if self._started and (session := self._book.session(conversation_id)) is not None:
            await session.stop_all()

    @_once_started
    def set_model(self, model: str) -> None:
        """Use ``model`` for the current conversation and as the last used; a reply held up
        by capacity moves to it at once (the retry banner's Switch model…)."""
        self._prefs.settings.last_model = model
        self._jobs.spawn(self._prefs.save(), name="save-settings")
        if self.session is not None:
            self.session.set_model(model)
        self.model.update(self.current_model(), force=True)
        self.status.show(self.current_model(), None)

    @_once_started
    def set_options(self, system_prompt: str, params: dict[str, Any]) -> None:
        if self.session is not None:
            self.session.set_options(system_prompt, params)
            self.options_changed.emit()

    @_once_started
    def set_models(self, models: Sequence[ModelInfo], *_: object) -> None:
        """The catalogue (slot for ``models_loaded``), kept by ``capabilities``."""
        self.capabilities.set_models(models)

    # -- intents on the current conversation -----------------------------------------------

    @_once_started
    def send(self, text: str, *, images: Sequence[Attachment] = ()) -> str | None:
        """Send ``text`` (and ``images``); a refusal (no vision) is said by send_refused."""
        if self.session is None:
            self.new_conversation()
        if self.session is None:
            return None
        from flarechat.core.session import SendRefused  # loaded by start

        try:
            return self.session.send(text, images=images)
        except SendRefused as refused:
            self.send_refused.emit(refused.refusal.model, refused.refusal.message)
            return None

    def regenerate(self, message_id: str) -> str | None:
        return self.session.regenerate(message_id) if self.session is not None else None

    def continue_reply(self, message_id: str) -> str | None:
        return self.session.continue_reply(message_id) if self.session is not None else None

    def reveal(self, message_id: str) -> bool:
        return self.session is not None and self.session.reveal(message_id)

    def start_edit(self, message_id: str) -> None:
        if self.session is not None:
            self.session.start_edit(message_id)

    def edit_last(self) -> None:
        if self.session is not None:
            self.session.edit_last()

    def cancel_edit(self) -> None:
        if self.session is not None:
            self.session.cancel_edit()

    def switch_branch(self, message_id: str, step: int) -> None:
        if self.session is not None:
            self.session.switch_branch(message_id, step)

    def stop(self, message_id: str | None = None) -> None:
        if self.session is not None:
            self.session.stop(message_id)

    def retry_now(self) -> None:
        if self.session is not None:
            self.session.retry_now()

    def wait_in_queue(self) -> None:
        if self.session is not None:
            self.session.wait_in_queue()

    def cancel_retry(self) -> None:
        if self.session is not None:
            self.session.cancel_retry()

    def retry_failed(self, message_id: str | None = None) -> None:
        if self.session is not None:
            self.session.retry_failed(message_id)

    # -- session events become signals -----------------------------------------------------

    def _on_event(self, event: ev.SessionEvent) -> None:
        from flarechat.core import session as ev  # loaded by start (as are the two below)

        if isinstance(event, ev.TextAppended | ev.ReasoningAppended):
            reasoning = isinstance(event, ev.ReasoningAppended)
            self._deltas.add(event.message_id, event.text, reasoning=reasoning)
            if not self._relay_timer.isActive():
                self._relay_timer.start()
            return
        self._relay_deltas()  # text first: every other signal keeps its place after it
        session = self._book.session(event.conversation_id)
        if not self._relay_turn(event, session):
            self._relay_conversation(event, session)

    def _relay_deltas(self) -> None:
        """Emit the text buffered since the last relay: one signal per message and kind."""
        self._relay_timer.stop()
        for message_id, reasoning, text in self._deltas.take():
            signal = self.turn_reasoning_appended if reasoning else self.turn_text_appended
            signal.emit(message_id, text)

    def _relay_turn(self, event: ev.SessionEvent, session: ChatSession | None) -> bool:
        """A reply's events (not its text: see ``_on_event``); False for any other event."""
        from flarechat.core import session as ev

        if isinstance(event, ev.TurnStarted):
            started = self.turn_continued if event.continued else self.turn_started
            started.emit(event.conversation_id, event.message_id)
        elif isinstance(event, ev.PhaseChanged):
            self.turn_phase_changed.emit(event.message_id, str(event.phase))
        elif isinstance(event, ev.RetryPlanned):
            self.retry_scheduled.emit(
                event.message_id, event.attempt, event.max_attempts, event.delay,
                event.model, str(event.kind),
            )  # fmt: skip
        elif isinstance(event, ev.RetryOver):
            self.retry_cleared.emit(event.message_id)
        elif isinstance(event, ev.TurnProgress):
            if session is self.session:
                self.status.show(event.model, event.state)
        elif isinstance(event, ev.TurnFinished):
            self._finished(session, event)
        elif isinstance(event, ev.TurnFailed):
            self.turn_failed.emit(event.message_id, str(event.kind), event.message, event.extra)
        elif isinstance(event, ev.Notice):
            self.turn_notice.emit(event.message_id, str(event.kind), event.text)
        else:
            return False
        return True

    def _relay_conversation(self, event: ev.SessionEvent, session: ChatSession | None) -> None:
        from flarechat.core import session as ev

        if isinstance(event, ev.MessageAdded) and session is not None:
            self.message_added.emit(event.conversation_id, self._views.one(session, event.message))
        elif isinstance(event, ev.MessageChanged) and session is not None:
            self.message_updated.emit(self._views.one(session, event.message))
        elif isinstance(event, ev.PathChanged) and session is not None:
            shown = self._views.of(session, event.shown)
            self.path_changed.emit(event.conversation_id, event.first_gone, shown)
        elif isinstance(event, ev.SiblingsChanged):
            self.siblings_changed.emit(event.message_id, event.index, event.count)
        elif isinstance(event, ev.BusyChanged) and session is self.session:
            self.busy_changed.emit(event.busy)
        elif isinstance(event, ev.ConversationStored):
            self.conversation_stored.emit(event.conversation_id)
        elif isinstance(event, ev.EditingChanged):
            if event.text is not None:
                self.composer_text_requested.emit(event.text)
            self.editing_changed.emit(event.editing)
        elif isinstance(event, ev.StoreTrouble):
            self._store_trouble(event)

    def _finished(self, session: ChatSession | None, event: ev.TurnFinished) -> None:
        self.status.count(event.state)
        if session is not None and event.message.id in session.tree:
            self.turn_finished.emit(event.message.id, self._views.one(session, event.message))
        self.status.finished(event.model, event.state, on_screen=session is self.session)

    def _store_trouble(self, event: ev.StoreTrouble) -> None:
        if event.problem is None:
            self._last_problem = None
            self.store_recovered.emit()
            return
        text = event.problem
        if event.unsaved:
            text += " Unsaved messages are kept and will be saved once the database works again."
        self.report_store_problem(text)

    def report_store_problem(self, problem: StoreError | str) -> None:
        """Say once per distinct problem that the database failed (for a banner)."""
        text = str(problem)
        if text != self._last_problem:
            self._last_problem = text
            self.store_problem.emit(text)

    # -- lifetime --------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Quit: stop every reply (partial text saved as "stopped"), then every job."""
        if self._started:
            await self._book.shutdown()
        await self._jobs.aclose()

    async def drain(self) -> None:
        """Wait until no reply or job runs (tests)."""
        if not self._started:
            await self._jobs.drain()
            return
        while self._book.running_turns() or len(self._jobs):
            await self._book.drain()
            await self._jobs.drain()
        await self._book.drain()

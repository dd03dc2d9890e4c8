"""The app's open conversations: a ChatSession each, which one is on screen, and the figures
that span them (neurons spent today)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Protocol

from flarechat.api.models import ModelInfo
from flarechat.api.retry import RetryPolicy
from flarechat.core import ledger
from flarechat.core.connect import ConfigurationError
from flarechat.core.conversation import Conversation, ConversationTree, new_id
from flarechat.core.session import records
from flarechat.core.session.capabilities import Catalogue, SchemaBook
from flarechat.core.session.events import SessionListener, StoreTrouble
from flarechat.core.session.gate import ModelGate
from flarechat.core.session.requests import TurnSettings
from flarechat.core.session.saving import SessionStore
from flarechat.core.session.session import ChatSession
from flarechat.core.store import Revision, StoreError
from flarechat.core.turn import ChatStreamer, TurnState

__all__ = ["RECENT_CONVERSATIONS", "RECENT_MESSAGES", "BookSettings", "BookStore", "SessionBook"]

#: Conversations left for another kept in memory, so switching back is instant (a user flips
#: between two or three chats): at most this many, holding at most this many messages in all
#: (a 5,000-message chat is ~10 MB of objects; memory stays flat however many are opened).
RECENT_CONVERSATIONS = 3
RECENT_MESSAGES = 12_000


class BookStore(SessionStore, Protocol):
    """What the book reads besides what sessions write."""

    async def load_tree(self, conversation_id: str) -> ConversationTree: ...
    async def neurons_today(self, *, now: float | None = None, demo: bool = False) -> float: ...
    def revision(self, conversation_id: str) -> Awaitable[Revision]:
        """Asked at the call (counting every write asked for before it), not when awaited."""
        ...


@dataclass(slots=True)
class _Left:
    """A session left for another: shown again only while the store is where it was."""

    session: ChatSession
    #: the store's revision once the session's own writes were made (asked as it was left,
    #: so the store answers after every write the session had asked for)
    revision: asyncio.Future[Revision]
    #: the store's revision just before its tree was read (None: made here, not read);
    #: another connection's commit since then is in no tree of this process
    loaded: asyncio.Future[Revision] | None


class BookSettings(TurnSettings, Protocol):
    def default_system_prompt(self) -> str: ...


class SessionBook:
    """Opens, keeps and drops ChatSessions. The conversation on screen and those with a reply
    running stay in memory, and the last few left (see RECENT_CONVERSATIONS), shown again
    only if the store says nothing of them changed meanwhile; a session's events go to the
    one ``listener``."""

    def __init__(
        self,
        *,
        client: ChatStreamer,
        store: BookStore,
        settings: BookSettings,
        listener: SessionListener,
        gate: ModelGate | None = None,
        policy_factory: Callable[[], RetryPolicy] = RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
        catalogue: Catalogue | None = None,
    ) -> None:
        self.store = store
        #: what the app knows of each model (vision, licence URL…); None: nothing is known
        self.catalogue = catalogue
        #: model schemas, shared by every session of the book
        self.schemas = SchemaBook()
        self._settings = settings
        self._listener = listener
        self.gate = gate if gate is not None else ModelGate()
        self._client = client
        self._policy_factory = policy_factory
        self._clock = clock
        self._sessions: dict[str, ChatSession] = {}
        self._left: OrderedDict[str, _Left] = OrderedDict()  # oldest first
        #: per session read from the store: its revision just before the read
        self._loaded: dict[str, asyncio.Future[Revision]] = {}
        self.current: ChatSession | None = None
        #: Neurons spent today (UTC day, from the store, plus replies finished since).
        self._neurons: tuple[date, float] = (datetime.now(UTC).date(), 0.0)

    def _catalogue_lookup(self, model: str) -> ModelInfo | None:
        # Read at each use, so a catalogue set (or refreshed) later reaches open sessions.
        return self.catalogue(model) if self.catalogue is not None else None

    def session(self, conversation_id: str) -> ChatSession | None:
        return self._sessions.get(conversation_id)

    def sessions(self) -> list[ChatSession]:
        return list(self._sessions.values())

    def _new_session(self, tree: ConversationTree, *, stored: bool) -> ChatSession:
        session = ChatSession(
            tree,
            client=self._client,
            store=self.store,
            settings=self._settings,
            listener=self._listener,
            stored=stored,
            gate=self.gate,
            policy_factory=self._policy_factory,
            clock=self._clock,
            catalogue=self._catalogue_lookup,
            schemas=self.schemas,
        )
        self._sessions[tree.conversation.id] = session
        return session

    def new_conversation(self) -> ChatSession:
        """A draft conversation on screen (stored with its first message)."""
        settings = self._settings
        conversation = Conversation(
            id=new_id(),
            model=settings.default_model(),
            system_prompt=settings.default_system_prompt(),
        )
        return self.show(self._new_session(ConversationTree(conversation), stored=False))

    async def open_conversation(self, conversation_id: str) -> ChatSession | None:
        """Load (unless in memory) and show a stored conversation; None if it can't be read."""
        session = self._sessions.get(conversation_id) or await self._recall(conversation_id)
        if session is None:
            try:
                loaded = self._ask_revision(conversation_id)  # asked before the read
                tree = await self.store.load_tree(conversation_id)
            except StoreError as error:
                self._listener(StoreTrouble(conversation_id, str(error)))
                return None
            session = self._sessions.get(conversation_id)
            if session is None:
                session = self._new_session(tree, stored=True)
                if loaded is not None:
                    self._loaded[conversation_id] = loaded
        return self.show(session)

    def show(self, session: ChatSession) -> ChatSession:
        """Put ``session`` on screen; idle sessions off screen are dropped from memory."""
        if self.current is not None and self.current is not session:
            self.current.cancel_edit()
        self.current = session
        for other in list(self._sessions.values()):
            if other is not session and not other.is_busy and not other.unsaved:
                del self._sessions[other.id]
                self._keep_left(other)
        return session

    # -- conversations just left -----------------------------------------------------------

    def _keep_left(self, session: ChatSession) -> None:
        """Keep a stored session just left, with the store's revision once its writes are in."""
        if not session.stored:
            return
        loaded = self._loaded.pop(session.id, None)
        revision = self._ask_revision(session.id)  # after every write the session asked for
        if revision is None:
            return
        self._left.pop(session.id, None)
        self._left[session.id] = _Left(session, revision, loaded)
        kept = 0
        for conversation_id, left in list(reversed(self._left.items())):  # the newest stay
            kept += len(left.session.tree)
            if kept > RECENT_MESSAGES and conversation_id != session.id:
                self.forget_left(conversation_id)
        while len(self._left) > RECENT_CONVERSATIONS:
            self.forget_left(next(iter(self._left)))

    def _ask_revision(self, conversation_id: str) -> asyncio.Future[Revision] | None:
        """The store's revision, asked now (None without a running loop or an open store)."""
        try:
            revision = asyncio.ensure_future(self.store.revision(conversation_id))
        except (RuntimeError, StoreError):
            return None
        revision.add_done_callback(_consume)
        return revision

    async def _recall(self, conversation_id: str) -> ChatSession | None:
        """The session left for another, if nothing of its conversation was written since."""
        left = self._left.pop(conversation_id, None)
        if left is None:
            return None
        try:
            then = await left.revision
            loaded = await left.loaded if left.loaded is not None else then
            now = await self.store.revision(conversation_id)
        except StoreError:
            return None  # read it again: the read says what is wrong
        if then != now:
            return None  # written meanwhile (renamed, deleted, a reply, another window)
        if (loaded.store, loaded.outside) != (now.store, now.outside):
            return None  # another connection wrote while it was on screen
        if (opened := self._sessions.get(conversation_id)) is not None:
            return opened  # opened again while the store answered
        self._sessions[conversation_id] = left.session
        if left.loaded is not None:
            self._loaded[conversation_id] = left.loaded
        return left.session

    def forget_left(self, conversation_id: str | None = None) -> None:
        """Drop conversations kept since they were left (one, or all with None): the next
        open of each reads the store. For memory pressure and for cold-open benchmarks."""
        if conversation_id is None:
            self._left.clear()
        else:
            self._left.pop(conversation_id, None)

    def forget(self, conversation_id: str) -> None:
        """A conversation was deleted: drop it from memory (stop its replies first)."""
        self._sessions.pop(conversation_id, None)
        self._loaded.pop(conversation_id, None)
        self.forget_left(conversation_id)
        if self.current is not None and self.current.id == conversation_id:
            self.current = None

    def running_turns(self) -> list[str]:
        return [m for s in self._sessions.values() for m in s.running()]

    # -- neurons today -------------------------------------------------------------------

    def neurons_today(self) -> float | None:
        day, total = self._neurons
        return total if day == datetime.now(UTC).date() else None

    def count_neurons(self, state: TurnState | None) -> None:
        """Add a finished reply at once, as the ledger charges it (a cache HIT adds nothing);
        ``load_neurons`` then confirms it from the store."""
        today = datetime.now(UTC).date()  # the free allocation resets at 00:00 UTC
        day, total = self._neurons
        total = total if day == today else 0.0
        spent = None
        if state is not None:
            spent = ledger.charge(records.usage_record(state), records.meta_record(state), None)
        self._neurons = (today, total + (spent.neurons if spent is not None else 0.0))

    def _simulated(self) -> bool:
        """Whether replies now go to the built-in emulator (demo mode has its own day)."""
        try:
            return self._settings.connection().simulated
        except ConfigurationError:
            return False

    async def load_neurons(self) -> float | None:
        """Re-read today's neurons from the store, so the count survives restarts and includes
        replies finished in other windows; None (and a report) when the store failed."""
        today = datetime.now(UTC).date()
        try:
            total = await self.store.neurons_today(demo=self._simulated())
        except StoreError as error:
            self._listener(StoreTrouble("", str(error)))
            return None
        self._neurons = (today, total)
        return total

    # -- lifetime --------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Quit: stop every reply (partial text saved as "stopped"), then every job."""
        await asyncio.gather(*(s.shutdown() for s in list(self._sessions.values())))

    async def drain(self) -> None:
        """Wait until no reply or job runs in any session (tests)."""
        await asyncio.gather(*(s.drain() for s in list(self._sessions.values())))


def _consume(revision: asyncio.Future[Revision]) -> None:
    """A revision nobody asks for again (the session was dropped): its error is not news."""
    if not revision.cancelled():
        revision.exception()  # marks it retrieved

"""The app's open conversations: a ChatSession each, which one is on screen, and the figures
that span them (neurons spent today)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Protocol

from flarechat.api.models import ModelInfo
from flarechat.api.retry import RetryPolicy
from flarechat.core.conversation import Conversation, ConversationTree, new_id
from flarechat.core.session.capabilities import Catalogue, SchemaBook
from flarechat.core.session.events import SessionListener, StoreTrouble
from flarechat.core.session.gate import ModelGate
from flarechat.core.session.requests import TurnSettings
from flarechat.core.session.saving import SessionStore
from flarechat.core.session.session import ChatSession
from flarechat.core.store import StoreError
from flarechat.core.turn import ChatStreamer, TurnState

__all__ = ["BookSettings", "BookStore", "SessionBook"]


class BookStore(SessionStore, Protocol):
    """What the book reads besides what sessions write."""

    async def load_tree(self, conversation_id: str) -> ConversationTree: ...
    async def neurons_today(self, *, now: float | None = None) -> float: ...


class BookSettings(TurnSettings, Protocol):
    def default_system_prompt(self) -> str: ...


class SessionBook:
    """Opens, keeps and drops ChatSessions. Only the conversation on screen and those with a
    reply running stay in memory; a session's events go to the one ``listener``."""

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
        session = self._sessions.get(conversation_id)
        if session is None:
            try:
                tree = await self.store.load_tree(conversation_id)
            except StoreError as error:
                self._listener(StoreTrouble(conversation_id, str(error)))
                return None
            session = self._sessions.get(conversation_id) or self._new_session(tree, stored=True)
        return self.show(session)

    def show(self, session: ChatSession) -> ChatSession:
        """Put ``session`` on screen; idle sessions off screen are dropped from memory."""
        if self.current is not None and self.current is not session:
            self.current.cancel_edit()
        self.current = session
        for other in list(self._sessions.values()):
            if other is not session and not other.is_busy and not other.unsaved:
                del self._sessions[other.id]
        return session

    def forget(self, conversation_id: str) -> None:
        """A conversation was deleted: drop it from memory (stop its replies first)."""
        self._sessions.pop(conversation_id, None)
        if self.current is not None and self.current.id == conversation_id:
            self.current = None

    def running_turns(self) -> list[str]:
        return [m for s in self._sessions.values() for m in s.running()]

    # -- neurons today -------------------------------------------------------------------

    def neurons_today(self) -> float | None:
        day, total = self._neurons
        return total if day == datetime.now(UTC).date() else None

    def count_neurons(self, state: TurnState | None) -> None:
        """Add a finished reply at once; ``load_neurons`` then confirms it from the store."""
        today = datetime.now(UTC).date()  # the free allocation resets at 00:00 UTC
        day, total = self._neurons
        total = total if day == today else 0.0
        spent = state.neurons if state is not None else None
        self._neurons = (today, total + (spent or 0.0))

    async def load_neurons(self) -> float | None:
        """Re-read today's neurons from the store, so the count survives restarts and includes
        replies finished in other windows; None (and a report) when the store failed."""
        today = datetime.now(UTC).date()
        try:
            total = await self.store.neurons_today()
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

"""A plain-asyncio harness for ChatSession: real emulator over loopback, real SQLite, no Qt."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import Connection, GatewayOptions, SamplingParams, Secret
from flarechat.api.retry import RetryPolicy
from flarechat.core.conversation import Conversation, ConversationTree, new_id
from flarechat.core.session import ChatSession, ModelGate, SessionEvent, TurnFinished
from flarechat.core.store import AsyncChatStore
from flarechat.core.turn import ChatStreamer
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN
from flarechat.emulator.server import EmulatorServer

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
OTHER_MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
#: A retry wait that only Retry now / Wait in queue / Cancel ends within a test's time.
LONG_DELAY = 60.0

_E = TypeVar("_E")


def fast_policy(**overrides: Any) -> Callable[[], RetryPolicy]:
    values: dict[str, Any] = {"base_delay": 0.01, "max_delay": 0.05, "random": lambda: 1.0}
    values.update(overrides)
    return lambda: RetryPolicy(**values)


def slow_policy() -> Callable[[], RetryPolicy]:
    return fast_policy(base_delay=LONG_DELAY, max_delay=LONG_DELAY)


@dataclass
class Settings:
    """A TurnSettings for tests: the emulator's account, plain values."""

    conn: Connection | None
    model: str = MODEL
    busy: bool = False
    max_tokens: int = 512

    def connection(self) -> Connection:
        from flarechat.core.connect import ConfigurationError

        if self.conn is None:
            raise ConfigurationError(["Add your account ID and API token."], incomplete=True)
        return self.conn

    def sampling(self, params: Mapping[str, object]) -> SamplingParams:
        max_tokens = params.get("max_tokens", self.max_tokens)
        return SamplingParams(max_tokens=max_tokens if isinstance(max_tokens, int) else 512)

    def reject_if_busy(self) -> bool:
        return self.busy

    def gateway_options(self) -> GatewayOptions:
        return GatewayOptions()

    def default_model(self) -> str:
        return self.model

    def default_system_prompt(self) -> str:
        return ""


def emulator_conn(emulator: EmulatorServer) -> Connection:
    return Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret(DEMO_TOKEN),
        api_base=emulator.api_base,
        gateway_base=emulator.gateway_base,
    )


@dataclass
class Events:
    """Every event a session reported, with a way to await the next matching one."""

    seen: list[SessionEvent] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: SessionEvent) -> None:
        self.seen.append(event)
        self._changed.set()

    def of(self, kind: type[_E]) -> list[_E]:
        return [e for e in self.seen if isinstance(e, kind)]

    async def wait(
        self, kind: type[_E], match: Callable[[_E], bool] = lambda _e: True, *, within: float = 20
    ) -> _E:
        async def find() -> _E:
            while True:
                for event in self.seen:
                    if isinstance(event, kind) and match(event):
                        return event
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(find(), within)

    async def finished(self, message_id: str, status: str | None = None) -> TurnFinished:
        def done(e: TurnFinished) -> bool:
            return e.message.id == message_id and (status is None or e.message.status == status)

        return await self.wait(TurnFinished, done)


async def until(condition: Callable[[], bool]) -> None:
    """Poll state that lives in the emulator's thread (it has no event to await)."""
    async with asyncio.timeout(10):
        while not condition():  # noqa: ASYNC110 - another thread's state, no event to wait on
            await asyncio.sleep(0.01)


@dataclass
class Harness:
    session: ChatSession
    events: Events
    store: AsyncChatStore
    settings: Settings

    def new_session(self, **kwargs: Any) -> ChatSession:
        """Another conversation sharing the client and store (and a gate, if passed)."""
        return ChatSession(
            ConversationTree(Conversation(id=new_id(), model=kwargs.pop("model", MODEL))),
            client=self.session._client,
            store=self.store,
            settings=self.settings,
            listener=self.events,
            stored=False,
            **kwargs,
        )


@asynccontextmanager
async def session_env(
    emulator: EmulatorServer,
    tmp_path: Path,
    *,
    client: ChatStreamer | None = None,
    store: AsyncChatStore | None = None,
    settings: Settings | None = None,
    **kwargs: Any,
) -> AsyncIterator[Harness]:
    """A draft conversation's session against the emulator, with a real database."""
    own_client = WorkersAIClient() if client is None else None
    store = store or await AsyncChatStore.open(tmp_path / "chat.sqlite3")
    settings = settings or Settings(emulator_conn(emulator))
    events = Events()
    kwargs.setdefault("policy_factory", fast_policy())
    tree = ConversationTree(Conversation(id=new_id(), model=settings.model))
    session = ChatSession(
        tree,
        client=client or own_client,  # type: ignore[arg-type]
        store=store,
        settings=settings,
        listener=events,
        stored=False,
        **kwargs,
    )
    try:
        yield Harness(session, events, store, settings)
    finally:
        await session.shutdown()
        if own_client is not None:
            await own_client.aclose()
        await store.close()


__all__ = [
    "LONG_DELAY",
    "MODEL",
    "OTHER_MODEL",
    "Events",
    "Harness",
    "ModelGate",
    "Settings",
    "emulator_conn",
    "fast_policy",
    "session_env",
    "slow_policy",
    "until",
]

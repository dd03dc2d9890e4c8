"""Helpers for the window-shell tests: a chat controller wired to the emulator, signal capture."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject

from flarechat.api.client import WorkersAIClient
from flarechat.api.retry import RetryPolicy
from flarechat.core.catalogue import CatalogueCache
from flarechat.core.store import AsyncChatStore, ChatStore
from flarechat.emulator import DEMO_ACCOUNT_ID, EmulatorServer
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import API_TOKEN, MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.preferences import DemoBackend, Preferences
from flarechat.ui.control.workspace import WorkspaceController

MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
#: Distinctive, so a leak into a file, a log or a signal is easy to spot.
TOKEN = "tok-e2a1c9f0d3b47a55-secret"
#: Long enough that the test, not the timer, decides when a retry happens.
LONG_DELAY = 60.0
WAIT = 15.0  # seconds a test waits for a signal before failing (never reached when green)

CHAT_SIGNALS = (
    "conversation_opened",
    "conversation_stored",
    "message_added",
    "message_updated",
    "path_changed",
    "turn_started",
    "turn_continued",
    "turn_phase_changed",
    "siblings_changed",
    "turn_text_appended",
    "turn_reasoning_appended",
    "turn_finished",
    "turn_failed",
    "retry_scheduled",
    "retry_cleared",
    "busy_changed",
    "model_changed",
    "metrics_changed",
    "composer_text_requested",
    "editing_changed",
    "store_problem",
    "store_recovered",
)


def fast_policy(**overrides: Any) -> Callable[[], RetryPolicy]:
    """A retry policy with tiny, jitter-free delays (unless overridden)."""
    values: dict[str, Any] = {"base_delay": 0.01, "max_delay": 0.05, "random": lambda: 1.0}
    values.update(overrides)
    return lambda: RetryPolicy(**values)


def slow_policy(max_attempts: int = 4) -> Callable[[], RetryPolicy]:
    """A policy whose waits only end when the test says so (Retry now, Wait in queue...)."""
    return fast_policy(base_delay=LONG_DELAY, max_delay=LONG_DELAY, max_attempts=max_attempts)


class Recorder:
    """Records every emission of the named signals; ``wait`` awaits a matching one."""

    def __init__(self, source: QObject, names: tuple[str, ...]) -> None:
        self.events: list[tuple[str, tuple[Any, ...]]] = []
        self._waiters: list[tuple[str, Callable[..., bool], asyncio.Future[tuple[Any, ...]]]] = []
        for name in names:
            getattr(source, name).connect(self._catcher(name))

    def _catcher(self, name: str) -> Callable[..., None]:
        def catch(*args: Any) -> None:
            self.events.append((name, args))
            for wanted, predicate, future in list(self._waiters):
                if wanted == name and not future.done() and predicate(*args):
                    future.set_result(args)

        return catch

    def args(self, name: str) -> list[tuple[Any, ...]]:
        return [args for event, args in self.events if event == name]

    def mark(self) -> int:
        """A position in the record: ``wait(after=mark)`` ignores what came before it."""
        return len(self.events)

    async def wait(
        self,
        name: str,
        predicate: Callable[..., bool] = lambda *_: True,
        *,
        seen: bool = True,
        after: int = 0,
    ) -> tuple[Any, ...]:
        """The first emission of ``name`` matching ``predicate``, counting those already
        recorded (from position ``after``) unless ``seen`` is False."""
        if seen:
            for event, args in self.events[after:]:
                if event == name and predicate(*args):
                    return args
        future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()
        self._waiters.append((name, predicate, future))
        return await asyncio.wait_for(future, WAIT)


@dataclass
class ChatEnv:
    emulator: EmulatorServer
    prefs: Preferences
    client: WorkersAIClient
    store: AsyncChatStore
    chat: ChatController
    workspace: WorkspaceController
    recorder: Recorder
    profile: Path
    demo_starts: list[int] = field(default_factory=list)

    async def finished(self, message_id: str) -> Any:
        """The final MessageData of a reply."""
        args = await self.recorder.wait("turn_finished", lambda m, _d: m == message_id)
        return args[1]


def make_settings(emulator: EmulatorServer, **changes: Any) -> Settings:
    values: dict[str, Any] = {
        "account_id": DEMO_ACCOUNT_ID,
        "api_base": emulator.api_base,
        "gateway_base": emulator.gateway_base,
        "last_model": MODEL,
    }
    values.update(changes)
    return Settings(**values)


def _demo_starter(emulator: EmulatorServer, starts: list[int]) -> Callable[[], DemoBackend]:
    """What flarechat.main gives the window for "Try demo mode": here, the test's emulator."""

    def start_demo() -> DemoBackend:
        starts.append(1)
        return DemoBackend(
            api_base=emulator.api_base,
            gateway_base=emulator.gateway_base,
            account_id=DEMO_ACCOUNT_ID,
            token="demo-token",
            stop=lambda: None,
            control=emulator.control,  # the Simulate menu's way in, as flarechat.main gives it
        )

    return start_demo


async def _open_store(path: Path, *, read_only: bool) -> AsyncChatStore:
    if not read_only:
        return await AsyncChatStore.open(path)
    ChatStore(path).close()  # an existing database that can no longer be written
    return AsyncChatStore(ChatStore(path, read_only=True))


@asynccontextmanager
async def chat_env(
    emulator: EmulatorServer,
    profile: Path,
    *,
    token: str | None = TOKEN,
    policy: Callable[[], RetryPolicy] | None = None,
    read_only: bool = False,
    **settings: Any,
) -> AsyncIterator[ChatEnv]:
    """A ChatController + WorkspaceController on a real store file, talking to the emulator."""
    await asyncio.to_thread(profile.mkdir, parents=True, exist_ok=True)
    secrets = MemorySecretStore({API_TOKEN: token} if token else {})
    prefs = Preferences(
        store=SettingsStore(profile / "settings.json"),
        secrets=secrets,
        settings=make_settings(emulator, **settings),
        env={},
    )
    prefs.api_token = token
    client = WorkersAIClient()
    store = await _open_store(profile / "chat.sqlite3", read_only=read_only)
    chat = ChatController(
        client=client, store=store, prefs=prefs, policy_factory=policy or fast_policy()
    )
    starts: list[int] = []
    workspace = WorkspaceController(
        chat=chat,
        store=store,
        client=client,
        prefs=prefs,
        catalogue=CatalogueCache(profile / "models.json"),
        start_demo=_demo_starter(emulator, starts),
    )
    recorder = Recorder(chat, CHAT_SIGNALS)
    env = ChatEnv(emulator, prefs, client, store, chat, workspace, recorder, profile, starts)
    try:
        yield env
    finally:
        await chat.shutdown()
        await workspace.shutdown()
        await client.aclose()
        await store.close()

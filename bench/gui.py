"""The real window for benchmarks: ui.app's Session with injected deps, offscreen, in-process.

Prefs come from an in-memory keychain and a settings file in a throwaway profile, pointing at
an in-process emulator; the store is a real SQLite file (optionally pre-filled by profiles.py).
Everything runs on the app's own loop (FlareEventLoop) like ``flarechat``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.ui.shared.loop import FlareEventLoop
from flarechat.ui.shared.theme import apply_theme

__all__ = ["MODEL", "TOKEN", "Emulator", "PaintWaiter", "run_in_app", "session", "settle"]

T = TypeVar("T")


class Emulator(Protocol):
    """Where an emulator listens: an in-process EmulatorServer or the streaming bench's
    EmulatorProcess."""

    @property
    def api_base(self) -> str: ...

    @property
    def gateway_base(self) -> str: ...


MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
TOKEN = "bench-token-0d5c1e7a9f"
#: Let deleted widgets go and pending paints land before the next measurement.
SETTLE_S = 0.2
PAINT_TIMEOUT_S = 30.0


def run_in_app(main: Callable[[], Awaitable[T]]) -> T:
    """Run ``main`` on a FlareEventLoop over a themed, offscreen QApplication."""
    app = QApplication.instance() or QApplication(["flarechat-bench"])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, "light")
    with asyncio.Runner(loop_factory=lambda: FlareEventLoop(app)) as runner:
        return runner.run(main())  # type: ignore[arg-type]


async def settle(seconds: float = SETTLE_S) -> None:
    await asyncio.sleep(seconds)


class PaintWaiter(QObject):
    """``await painted()``: the time just after ``widget``'s next paint pass has finished."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        self._future: asyncio.Future[float] | None = None
        widget.installEventFilter(self)

    async def painted(self, *, request: bool = True) -> float:
        self._future = asyncio.get_running_loop().create_future()
        if request:
            self._widget.update()
        return await asyncio.wait_for(self._future, PAINT_TIMEOUT_S)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self._future is not None:
            future, self._future = self._future, None
            asyncio.get_running_loop().call_soon(_resolve, future)  # after the whole pass
        return super().eventFilter(watched, event)


def _resolve(future: asyncio.Future[float]) -> None:
    if not future.done():
        future.set_result(time.perf_counter())


@asynccontextmanager
async def session(profile: Path, emulator: Emulator, **settings: Any) -> AsyncIterator[Any]:
    """A shown main window (``Session`` from flarechat.ui.app) over ``profile``'s store."""
    from flarechat.api.client import WorkersAIClient
    from flarechat.core.store import AsyncChatStore, default_path
    from flarechat.settings.schema import Settings
    from flarechat.settings.secrets import API_TOKEN, MemorySecretStore
    from flarechat.settings.store import SettingsStore
    from flarechat.ui.app import GuiOptions, Session
    from flarechat.ui.control.preferences import Preferences

    await asyncio.to_thread(profile.mkdir, parents=True, exist_ok=True)
    os.environ["FLARECHAT_HOME"] = str(profile)
    values: dict[str, Any] = {
        "account_id": DEMO_ACCOUNT_ID,
        "api_base": emulator.api_base,
        "gateway_base": emulator.gateway_base,
        "last_model": MODEL,
    } | settings
    prefs = Preferences(
        store=SettingsStore(profile / "settings.json"),
        secrets=MemorySecretStore({API_TOKEN: TOKEN}),
        settings=Settings(**values),
        env={},
    )
    prefs.api_token = TOKEN
    default_path().parent.mkdir(parents=True, exist_ok=True)
    store = await AsyncChatStore.open(default_path())
    shown = Session(prefs=prefs, client=WorkersAIClient(), store=store, options=GuiOptions())
    shown.show([])
    shown.window.resize(1180, 780)
    await settle()
    try:
        yield shown
    finally:
        shown.window.close()
        await shown.shutdown()
        await settle()

"""Compare screenshots for make_screenshots.py: the compare window over the demo emulator.

``compare``: three columns, two finished with their metrics while the third waits for capacity
with its own retry banner (compare-<theme>.png). ``compare-blind``: a blind run of two columns
waiting for the vote (compare-blind-<theme>.png).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from flarechat.api.client import WorkersAIClient
from flarechat.api.retry import RetryPolicy
from flarechat.core.store import AsyncChatStore, default_path
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN, EmulatorServer
from flarechat.settings.secrets import API_TOKEN, MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.app import GuiOptions, Session
from flarechat.ui.control.preferences import DemoBackend, Preferences
from flarechat.ui.lab.compare_view import CompareWindow

__all__ = ["COMPARE_SCENES", "shoot"]

OUT = Path(__file__).resolve().parent
COMPARE_SCENES = ("compare", "compare-blind")
COMPARE_SIZE = (1280, 760)
#: Long enough that the waiting column's countdown is in the picture.
RETRY_DELAY = 20.0
SETTLE = 0.6
WAIT = 30.0
AT_CAPACITY = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
COLUMNS = (
    "@cf/meta/llama-3.1-8b-instruct-fast",
    "@cf/mistralai/mistral-small-3.1-24b-instruct",
    AT_CAPACITY,
)
BLIND_COLUMNS = (
    "@cf/meta/llama-3.1-8b-instruct-fast",
    "@cf/ibm-granite/granite-4.0-h-micro",
)
#: Short enough that the emulator's replies stop before naming their model (real models don't).
BLIND_MAX_TOKENS = 16
PROMPT = "In two sentences: why does a Workers AI request get a 429?"
BLIND_PROMPT = "Write a haiku about the edge of the network."


def _noop() -> None:
    """The demo emulator is owned by make_screenshots.main()."""


async def _session(server: EmulatorServer, scheme: str) -> Session:
    prefs = Preferences(
        store=SettingsStore(), secrets=MemorySecretStore({API_TOKEN: "cfut_" + "x" * 40})
    )
    await prefs.load()
    prefs.use_demo(
        DemoBackend(server.api_base, server.gateway_base, DEMO_ACCOUNT_ID, DEMO_TOKEN, _noop)
    )
    prefs.settings.reject_if_busy = True  # the capacity column fails fast and waits to retry
    prefs.settings.theme = scheme
    options = GuiOptions(
        retry_policy_factory=lambda: RetryPolicy(base_delay=RETRY_DELAY, max_delay=RETRY_DELAY)
    )
    store = await AsyncChatStore.open(default_path())
    session = Session(prefs=prefs, client=WorkersAIClient(), store=store, options=options)
    session.show([])
    session.workspace.demo_changed.emit(True)
    session.workspace.configured_changed.emit(True)
    async with asyncio.timeout(WAIT):
        while not session.window.picker.models():  # noqa: ASYNC110 - widget state, no event
            await asyncio.sleep(0.1)
    return session


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():  # noqa: ASYNC110 - widget state, no event to await
            await asyncio.sleep(0.1)


def _done(window: CompareWindow, column: int) -> bool:
    message = window.controller.message(column)
    return message is not None and message.status == "done"


def _open(session: Session, models: tuple[str, ...], *, blind: bool) -> CompareWindow:
    session.window.open_compare()
    window = session.window.compare_window
    assert window is not None
    window.resize(*COMPARE_SIZE)
    window.count_box.setValue(len(models))
    for column, model in zip(window.columns, models, strict=True):
        column.picker.set_current(model)
    window.blind_box.setChecked(blind)
    return window


async def shoot(scheme: str, scene: str, server: EmulatorServer) -> None:
    session = await _session(server, scheme)
    if scene == "compare":
        server.state.hold_slots(AT_CAPACITY, 600)
        window = _open(session, COLUMNS, blind=False)
        window.columns[1].temperature.setValue(0.2)
        window.prompt.setPlainText(PROMPT)
        window.send()
        await _until(lambda: _done(window, 0) and _done(window, 1))
        await _until(window.columns[2].retry_banner.isVisible)
    else:
        window = _open(session, BLIND_COLUMNS, blind=True)
        for column in window.columns:  # the demo emulator names its model a few words in
            column.max_tokens.setValue(BLIND_MAX_TOKENS)
        window.prompt.setPlainText(BLIND_PROMPT)
        window.send()
        await _until(window.vote_bar.isVisible)
    await asyncio.sleep(SETTLE)
    window.grab().save(str(OUT / f"{scene}-{scheme}.png"))
    server.state.reset()
    window.close()
    session.window.close()
    await session.shutdown()

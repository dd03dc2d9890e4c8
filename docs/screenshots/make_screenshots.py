"""Regenerate the README screenshots: the real window against the demo emulator, both themes.

Usage (from the repo root)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_screenshots.py [scene ...]

Scenes: chat, retry, settings, picker, presets, code… (default: all), each saved as
``<scene>-<theme>.png`` next to this file. A throwaway profile is used; nothing touches
your own settings or keychain.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

from PySide6.QtCore import QPoint, QPointF
from PySide6.QtGui import QEnterEvent, QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from flarechat.api.client import WorkersAIClient
from flarechat.api.retry import RetryPolicy
from flarechat.core.store import AsyncChatStore, default_path
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN, EmulatorConfig, EmulatorServer
from flarechat.settings.secrets import API_TOKEN, MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.app import GuiOptions, Session
from flarechat.ui.control.preferences import DemoBackend, Preferences
from flarechat.ui.shared import theme
from flarechat.ui.shared.loop import FlareEventLoop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capability_scenes import CAPABILITY_SCENES, capability_scene
from compare_scenes import COMPARE_SCENES
from compare_scenes import shoot as shoot_compare

OUT = Path(__file__).resolve().parent
WINDOW_SIZE = (1280, 820)
SCENES = (
    *("chat", "retry", "settings", "picker", "empty", "narrow", "presets", "code"),
    *CAPABILITY_SCENES,
    *COMPARE_SCENES,
)
#: The "narrow" scene: a small laptop window, where the sidebar gives the chat room.
NARROW_SIZE = (800, 500)
CHAT_PROMPTS = (
    "Plan a three-day trip to Lisbon",
    "Explain AI Gateway caching",
    "What can Workers AI do? Show me Python code and a table.",
)
#: Long enough that the countdown is visible in the picture.
SHOT_RETRY_DELAY = 20.0
SETTLE = 0.6
SAMPLE_ACCOUNT_ID = "9a7f3c1e5b2d4f6a8c0e1b3d5f7a9c2e"
#: The settings shot shows the Connection tab: route, gateway and "Reject if busy".
SETTINGS_TAB = 1


async def _session(server: EmulatorServer, scene: str, scheme: str) -> Session:
    secrets = MemorySecretStore({API_TOKEN: "cfut_" + "x" * 40})
    prefs = Preferences(store=SettingsStore(), secrets=secrets)
    await prefs.load()
    # with its control endpoint, as `flarechat --demo` has it: the menu bar shows Simulate
    demo = DemoBackend(
        server.api_base,
        server.gateway_base,
        DEMO_ACCOUNT_ID,
        DEMO_TOKEN,
        _noop,
        control=server.control,
    )
    prefs.use_demo(demo)
    prefs.settings.reject_if_busy = scene in ("retry", "settings")
    prefs.settings.theme = scheme
    if scene == "settings":  # what a configured account looks like
        prefs.settings.account_id = SAMPLE_ACCOUNT_ID
        prefs.settings.route = "gateway-rest"
        prefs.settings.gateway_id = "team-gateway"
        prefs.settings.cache_ttl = 3600
    store = await AsyncChatStore.open(default_path())
    options = GuiOptions(
        retry_policy_factory=lambda: RetryPolicy(
            base_delay=SHOT_RETRY_DELAY, max_delay=SHOT_RETRY_DELAY
        )
    )
    session = Session(prefs=prefs, client=WorkersAIClient(), store=store, options=options)
    session.window.resize(*(NARROW_SIZE if scene == "narrow" else WINDOW_SIZE))
    session.show([])
    session.workspace.demo_changed.emit(True)
    session.workspace.configured_changed.emit(True)
    await asyncio.sleep(SETTLE)
    return session


def _noop() -> None:
    """The demo emulator here is owned by main(), not by the session."""


def _finished(session: Session) -> asyncio.Future[str]:
    """Resolves with the id of the next reply that finishes."""
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_finished(message_id: str, _data: object) -> None:
        if not future.done():
            future.set_result(message_id)

    session.chat.turn_finished.connect(on_finished)
    return future


async def _chat(session: Session) -> None:
    for text in CHAT_PROMPTS:
        session.chat.new_conversation()
        finished = _finished(session)
        session.chat.send(text)
        await finished
    await asyncio.sleep(1.0)


async def _shoot(scheme: str, scene: str, server: EmulatorServer) -> None:
    session = await _session(server, scene, scheme)
    window = session.window
    if scene in ("chat", "settings", "picker", "narrow"):
        await _chat(session)
    if scene == "chat":
        _hover_question(session)
    if scene == "empty":
        await _chat(session)
        session.chat.new_conversation()
        await asyncio.sleep(SETTLE)
    if scene in CAPABILITY_SCENES:
        await capability_scene(session, scene)
    if scene == "retry":
        server.state.hold_slots(session.chat.current_model(), 600)
        session.chat.send("Summarise the Workers AI pricing model in three bullets.")
        await asyncio.sleep(2.5)
    target: QWidget = window
    if scene in LAB_SCENES:
        await _chat(session)
        await LAB_SCENES[scene](session, scheme)
        await _close(session, server)
        return
    if scene == "settings":
        window.open_settings()
        await asyncio.sleep(SETTLE)
        assert window.settings_dialog is not None
        target = window.settings_dialog
        tabs = target.findChild(QTabWidget)
        assert tabs is not None
        tabs.setCurrentIndex(SETTINGS_TAB)
        await asyncio.sleep(SETTLE)
    elif scene == "picker":
        window.picker.open_popup()
        await asyncio.sleep(SETTLE)
        target = window.picker.popup
    target.grab().save(str(OUT / f"{scene}-{scheme}.png"))
    if target is not window:
        target.hide()
    server.state.reset()
    window.close()
    await session.shutdown()


def _hover_question(session: Session) -> None:
    """The pointer over the last question, so its actions (edit, copy) show as on hover; the
    latest reply shows its own without it."""
    transcript = session.window.pane.transcript
    question = next(m for m in reversed(transcript.messages()) if m.role == "user")
    transcript.scroll_to(question.id)
    view = transcript.view_for(question.id)
    assert view is not None
    point = QPointF(view.width() - 20, 12)
    QApplication.sendEvent(view, QEnterEvent(point, point, QPointF(view.mapToGlobal(point))))


async def _close(session: Session, server: EmulatorServer) -> None:
    server.state.reset()
    session.window.close()
    await session.shutdown()


async def _presets_shot(session: Session, scheme: str) -> None:
    """The Preset menu open above the composer, over the window (presets-<theme>.png)."""
    hooks = session.window.lab_hooks
    lab = hooks.lab
    session.chat.set_options("You are a careful code reviewer. Be terse.", {"temperature": 0.2})
    for name in ("Terse reviewer", "Creative writer", "JSON extractor"):
        lab.save_preset(name)
    lab.set_default_preset(lab.presets()[0].id)
    lab.save_prompt("You are a careful code reviewer. Be terse.", "Code reviewer")
    await lab.drain()
    button, menu = hooks.bar.preset_button, hooks.bar.preset_menu
    menu.aboutToShow.emit()
    menu.popup(button.mapToGlobal(QPoint(0, 0)) - QPoint(0, menu.sizeHint().height()))
    await asyncio.sleep(SETTLE)
    shot: QPixmap = session.window.grab()
    painter = QPainter(shot)
    painter.drawPixmap(session.window.mapFromGlobal(menu.pos()), menu.grab())
    painter.end()
    menu.hide()
    shot.save(str(OUT / f"presets-{scheme}.png"))


async def _code_shot(session: Session, scheme: str) -> None:
    """View as code for the last reply, the curl tab (code-<theme>.png)."""
    hooks = session.window.lab_hooks
    hooks.view_last_code()
    await asyncio.sleep(SETTLE)
    assert hooks.code_dialog is not None
    hooks.code_dialog.grab().save(str(OUT / f"code-{scheme}.png"))
    hooks.code_dialog.close()


LAB_SCENES = {"presets": _presets_shot, "code": _code_shot}


def main() -> None:
    scenes = sys.argv[1:] or list(SCENES)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([])
    app.setQuitOnLastWindowClosed(False)
    with EmulatorServer(config=EmulatorConfig(tokens_per_second=400)) as server:
        for scheme in ("light", "dark"):
            theme.apply_theme(app, scheme)
            for scene in scenes:
                os.environ["FLARECHAT_HOME"] = tempfile.mkdtemp(prefix="flarechat-shots-")
                with asyncio.Runner(loop_factory=lambda: FlareEventLoop(app)) as runner:
                    shoot = shoot_compare if scene in COMPARE_SCENES else _shoot
                    runner.run(shoot(scheme, scene, server))


if __name__ == "__main__":
    main()

"""The window started as ``flarechat.ui.app`` starts it (settings and keychain loaded, the
database opened, start-up problems shown), over broken local files or a broken keychain."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from drive import DB_NAME, Run
from heartbeat import Heartbeat
from leaks import assert_no_secret
from PySide6.QtWidgets import QApplication
from shell_helpers import CHAT_SIGNALS, TOKEN, ChatEnv, Recorder, fast_policy
from window_helpers import WORKSPACE_SIGNALS

from flarechat.api.client import WorkersAIClient
from flarechat.core.store import AsyncChatStore
from flarechat.emulator import EmulatorServer
from flarechat.settings.secrets import API_TOKEN, SecretStore, aset
from flarechat.settings.store import SETTINGS_FILENAME, SettingsStore
from flarechat.ui.app import STARTUP_NOTICE_TITLE, GuiOptions, Session
from flarechat.ui.control.preferences import Preferences

__all__ = ["STARTUP_NOTICE_TITLE", "enter_token_for_this_session", "started_window"]


@asynccontextmanager
async def started_window(
    emulator: EmulatorServer,
    profile: Path,
    logged: pytest.LogCaptureFixture,
    *,
    secrets: SecretStore,
    texts: Iterable[str] = (),
) -> AsyncIterator[Run]:
    """``ui.app._run`` up to the shown window, with the heartbeat running from the first
    await (a slow keychain or a damaged file must not freeze the loop either). Afterwards
    the window is shut down as quitting does, then the profile and log are scanned."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as ui.app does: closing is _run's decision
    gc.collect()
    gc.freeze()
    loading = Heartbeat().start()  # the keychain and the files: the faults' own part
    prefs = _preferences(profile, secrets)
    problems = await prefs.load()
    store = await AsyncChatStore.open(profile / DB_NAME)
    problems += store.report.problems
    loading.assert_responsive()
    client = WorkersAIClient()
    options = GuiOptions(retry_policy_factory=fast_policy())
    session = Session(prefs=prefs, client=client, store=store, options=options)
    recorder = Recorder(session.chat, CHAT_SIGNALS)
    seen = Recorder(session.workspace, WORKSPACE_SIGNALS)
    env = ChatEnv(
        emulator, prefs, client, store, session.chat, session.workspace, recorder, profile
    )
    run = Run(env, session.window, seen, Heartbeat(), profile)
    try:
        session.show(problems)
        await seen.wait("conversations_changed")
        run.heartbeat.start()  # building the window is not a fault's stall; what follows is
        yield run
        run.heartbeat.assert_responsive()
    finally:
        gc.unfreeze()
        session.window.close()
        await session.shutdown()
    banners = [session.window.pane.notice_banner.text, session.window.pane.retry_banner.text]
    assert_no_secret(TOKEN, paths=[profile], texts=[logged.text, *banners, *texts])


def _preferences(profile: Path, secrets: SecretStore) -> Preferences:
    return Preferences(store=SettingsStore(profile / SETTINGS_FILENAME), secrets=secrets, env={})


async def enter_token_for_this_session(run: Run) -> None:
    """What the settings dialog does with a token when the keychain is down: the session-only
    store and the live preferences, never a file."""
    prefs = run.env.prefs
    await aset(prefs.session, API_TOKEN, TOKEN)
    run.env.workspace.set_tokens({API_TOKEN: TOKEN})

"""Start-up in two steps (issue #12): settings before the first paint, the keychain right after.

The window is up before the tokens are read; then the account is used (the live catalogue is
fetched), a keychain problem joins the start-up banner, and a returning user's first paint is
the chat, not the welcome panel.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from shell_helpers import TOKEN, make_settings

from flarechat.core.store import AsyncChatStore
from flarechat.emulator import EmulatorServer
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import (
    API_TOKEN,
    MemorySecretStore,
    SecretStore,
    SecretStoreUnavailable,
)
from flarechat.settings.store import SettingsStore
from flarechat.ui import app as gui_app
from flarechat.ui.app import STARTUP_NOTICE_TITLE, FirstPaint, GuiOptions, Session
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.lazy_client import LazyClient
from flarechat.ui.shared import settling

KEYCHAIN_PROBLEM = (
    "No system keychain is available (no backend found). Tokens will be kept for this session only."
)
SETTINGS_PROBLEM = "The settings file was set aside (test)."
WAIT_S = 15.0


class NoKeychain:
    """A keychain that is not there at all."""

    def get(self, name: str) -> str | None:
        raise SecretStoreUnavailable("The keychain is missing.", reason="no backend found")

    def set(self, name: str, value: str) -> None:
        self.get(name)

    def delete(self, name: str) -> None:
        self.get(name)


async def _prefs(tmp_path: Path, secrets: SecretStore, settings: Settings | None) -> Preferences:
    store = SettingsStore(tmp_path / "settings.json")
    if settings is not None:
        await asyncio.to_thread(store.save, settings)
    prefs = Preferences(store=store, secrets=secrets, env={})
    await prefs.load_settings()
    return prefs


@asynccontextmanager
async def _session(
    tmp_path: Path, prefs: Preferences, problems: list[str], *, paints: bool = True
) -> AsyncIterator[Session]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    store = await AsyncChatStore.open(tmp_path / "chat.sqlite3")
    session = Session(prefs=prefs, client=LazyClient(), store=store, options=GuiOptions())
    if not paints:  # as a window shown minimized or off-screen: no first paint comes
        for probe in session.window.findChildren(FirstPaint):
            session.window.removeEventFilter(probe)
    try:
        session.show(problems)
        yield session
    finally:
        session.window.close()
        await session.shutdown()


@pytest.mark.asyncio
async def test_a_saved_account_counts_as_configured_until_its_token_is_read(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    secrets = MemorySecretStore({API_TOKEN: TOKEN})
    prefs = await _prefs(tmp_path, secrets, make_settings(emulator))
    before = (prefs.tokens_pending, prefs.configured, prefs.account_ready)
    # The chat, not the welcome panel, at the first paint; but nothing is sent, and demo
    # mode is not left, until the token is read.
    assert before == (True, True, False)
    assert await prefs.load_tokens() == []
    assert (prefs.tokens_pending, prefs.configured, prefs.account_ready) == (False, True, True)
    assert prefs.api_token == TOKEN


@pytest.mark.asyncio
async def test_without_a_saved_account_a_fresh_profile_is_not_configured(tmp_path: Path) -> None:
    prefs = await _prefs(tmp_path, MemorySecretStore(), None)
    assert prefs.tokens_pending
    assert not prefs.configured
    await prefs.load_tokens()
    assert not prefs.configured


@pytest.mark.asyncio
async def test_the_account_is_used_once_the_keychain_is_read_after_the_first_paint(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    secrets = MemorySecretStore({API_TOKEN: TOKEN})
    prefs = await _prefs(tmp_path, secrets, make_settings(emulator))
    async with _session(tmp_path, prefs, []) as session:
        workspace = session.workspace
        loaded: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def on_models(models: list[object], _at: object, offline: bool) -> None:
            if models and not loaded.done():
                loaded.set_result(offline)

        workspace.models_loaded.connect(on_models)
        assert session.window.stack.currentWidget() is session.window.pane
        await asyncio.wait_for(session.tokens_loaded.wait(), WAIT_S)
        assert prefs.api_token == TOKEN
        assert await asyncio.wait_for(loaded, WAIT_S) is False  # the live catalogue
        assert isinstance(session.client, LazyClient)
        assert session.client.built
        assert session.window.stack.currentWidget() is session.window.pane


@pytest.mark.asyncio
async def test_a_keychain_problem_joins_the_start_up_banner_after_the_first_paint(
    tmp_path: Path,
) -> None:
    prefs = await _prefs(tmp_path, NoKeychain(), None)
    async with _session(tmp_path, prefs, [SETTINGS_PROBLEM]) as session:
        notice = session.window.pane.notice_banner
        assert notice.title == STARTUP_NOTICE_TITLE
        assert SETTINGS_PROBLEM in notice.text
        assert KEYCHAIN_PROBLEM not in notice.text  # not read yet: the window came first
        await asyncio.wait_for(session.tokens_loaded.wait(), WAIT_S)
        assert notice.isVisible()
        assert notice.kind == "warning"
        assert SETTINGS_PROBLEM in notice.text
        assert KEYCHAIN_PROBLEM in notice.text
        assert prefs.keychain_problem == KEYCHAIN_PROBLEM


@pytest.mark.asyncio
async def test_the_keychain_is_read_even_when_the_window_never_paints(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    secrets = MemorySecretStore({API_TOKEN: TOKEN})
    prefs = await _prefs(tmp_path, secrets, make_settings(emulator))
    async with _session(tmp_path, prefs, [], paints=False) as session:
        await asyncio.wait_for(session.tokens_loaded.wait(), WAIT_S)
        assert prefs.api_token == TOKEN
        assert prefs.account_ready


@pytest.mark.asyncio
async def test_what_start_up_built_is_frozen_out_of_full_collections(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    """The modules, window and session live as long as the app: once start-up is over they
    are out of the collector's full passes, which otherwise walked them mid-switch."""
    gc.unfreeze()  # whatever an earlier test in this process froze
    assert gc.get_freeze_count() == 0
    secrets = MemorySecretStore({API_TOKEN: TOKEN})
    prefs = await _prefs(tmp_path, secrets, make_settings(emulator))
    async with _session(tmp_path, prefs, []) as session:
        await asyncio.wait_for(session.tokens_loaded.wait(), WAIT_S)
        assert gc.get_freeze_count() > 0


@pytest.mark.asyncio
async def test_start_up_settles_at_the_first_paint_then_after_the_keychain_read(
    tmp_path: Path, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each settling point freezes what was made since the one before: an object made just
    before the first paint's point, then one made just before the keychain's, each joins the
    frozen generation there (frozen objects are not in ``gc.get_objects()``)."""
    gc.unfreeze()
    settled: list[tuple[str, bool, bool]] = []

    def settle(point: str) -> None:
        made = [point]  # a tracked object made since the last point
        before = _is_frozen(made)
        settling.start_up_settled(point)
        settled.append((point, before, _is_frozen(made)))

    monkeypatch.setattr(gui_app, "start_up_settled", settle)
    secrets = MemorySecretStore({API_TOKEN: TOKEN})
    prefs = await _prefs(tmp_path, secrets, make_settings(emulator))
    async with _session(tmp_path, prefs, []) as session:
        await asyncio.wait_for(session.tokens_loaded.wait(), WAIT_S)
    assert settled == [("first paint", False, True), ("keychain read", False, True)]


def _is_frozen(obj: object) -> bool:
    """Whether ``obj`` (tracked by the collector) is in the frozen generation."""
    return not any(tracked is obj for tracked in gc.get_objects())

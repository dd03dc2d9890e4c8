"""Start-up problems are shown: an unusable keychain says tokens are kept for this session only."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from flarechat.api.client import WorkersAIClient
from flarechat.core.store import AsyncChatStore
from flarechat.settings.secrets import MemorySecretStore, SecretStore, SecretStoreUnavailable
from flarechat.settings.store import SettingsStore
from flarechat.ui.app import STARTUP_NOTICE_TITLE, GuiOptions, Session
from flarechat.ui.control.preferences import Preferences

EXPECTED = (
    "No system keychain is available (no backend found). Tokens will be kept for this session only."
)


class NoKeychain:
    """A keychain backend that is not there at all."""

    def get(self, name: str) -> str | None:
        raise SecretStoreUnavailable("The keychain is missing.", reason="no backend found")

    def set(self, name: str, value: str) -> None:
        raise SecretStoreUnavailable("The keychain is missing.", reason="no backend found")

    def delete(self, name: str) -> None:
        raise SecretStoreUnavailable("The keychain is missing.", reason="no backend found")


def _prefs(tmp_path: Path, secrets: SecretStore) -> Preferences:
    return Preferences(
        store=SettingsStore(tmp_path / "settings.json"),
        secrets=secrets,
        env={},
    )


@pytest.mark.asyncio
async def test_load_reports_an_unavailable_keychain(tmp_path: Path) -> None:
    prefs = _prefs(tmp_path, NoKeychain())
    problems = await prefs.load()
    assert problems == [EXPECTED]
    assert prefs.keychain_problem == EXPECTED
    assert prefs.api_token is None


@pytest.mark.asyncio
async def test_no_keychain_warning_when_the_token_comes_from_the_environment(
    tmp_path: Path,
) -> None:
    prefs = Preferences(
        store=SettingsStore(tmp_path / "settings.json"),
        secrets=NoKeychain(),
        env={"CLOUDFLARE_API_TOKEN": "from-the-environment-0123456789"},
    )
    assert await prefs.load() == []  # nothing needs the keychain, so nothing to warn about


@pytest.mark.asyncio
async def test_a_working_keychain_reports_nothing(tmp_path: Path) -> None:
    prefs = _prefs(tmp_path, MemorySecretStore())
    assert await prefs.load() == []
    assert prefs.keychain_problem is None


@pytest.mark.asyncio
async def test_the_window_shows_the_keychain_problem_at_start(tmp_path: Path) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    prefs = _prefs(tmp_path, NoKeychain())
    problems = await prefs.load()
    store = await AsyncChatStore.open(tmp_path / "chat.sqlite3")
    session = Session(prefs=prefs, client=WorkersAIClient(), store=store, options=GuiOptions())
    try:
        session.show(problems)
        notice = session.window.pane.notice_banner
        assert notice.isVisible()
        assert notice.kind == "warning"
        assert notice.title == STARTUP_NOTICE_TITLE
        assert EXPECTED in notice.text
    finally:
        session.window.close()
        await session.shutdown()

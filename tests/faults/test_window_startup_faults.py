"""The window started over a broken keychain (missing, locked, slow), a broken settings file
(garbage, wrong types, from a newer Flarechat) or a damaged database: it starts, says what it
found in plain words, stays responsive, keeps the chat, and writes the token nowhere."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import keyring.errors
import pytest
from drive import DB_NAME, Run, assert_plain, saved
from keyring.backends import fail
from PySide6.QtWidgets import QPushButton
from shell_helpers import TOKEN, make_settings
from startup import STARTUP_NOTICE_TITLE, enter_token_for_this_session, started_window
from window_helpers import until

from flarechat.core.connect import KEYCHAIN_TIMEOUT
from flarechat.emulator import EmulatorServer
from flarechat.settings import secrets as secret_api
from flarechat.settings.schema import SCHEMA_VERSION
from flarechat.settings.secrets import KeyringSecretStore, MemorySecretStore
from flarechat.settings.store import SETTINGS_FILENAME, SettingsStore

pytestmark = pytest.mark.asyncio

PROMPT = "Is anything lost?"
#: A slow keychain answers this long after Flarechat stopped waiting for it.
SLOW_KEYCHAIN_S = max(KEYCHAIN_TIMEOUT, secret_api.DEFAULT_TIMEOUT) + 5.0


class _Backend:
    """A keyring backend that looks like a real keychain (keyring's priority above 1)."""

    name = "Test keychain"
    priority = 5.0

    def get_password(self, service: str, username: str) -> str | None:
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("refused")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.PasswordDeleteError("nothing there")


class _LockedBackend(_Backend):
    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("Failed to unlock the collection")


class _SlowBackend(_Backend):
    """Answers only after ``SLOW_KEYCHAIN_S`` (or when the test releases it)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def get_password(self, service: str, username: str) -> str | None:
        self.release.wait(SLOW_KEYCHAIN_S)
        return TOKEN  # too late to be used: it must not end up anywhere either


@pytest.fixture
def slow_backend() -> Iterator[_SlowBackend]:
    backend = _SlowBackend()
    yield backend
    backend.release.set()


def _set_aside(folder: Path, name: str) -> list[bytes]:
    """The bytes of every ``<name>.corrupt-<stamp>`` file (not its -wal/-shm companions)."""
    found = sorted(folder.glob(f"{name}.corrupt-*"))
    return [p.read_bytes() for p in found if not p.name.endswith(("-wal", "-shm"))]


def _save_settings(emulator: EmulatorServer, profile: Path) -> None:
    SettingsStore(profile / SETTINGS_FILENAME).save(make_settings(emulator))


async def _keychain_problem_then_chat(run: Run) -> str:
    """No token yet: the chat pane stands in for the first-run panel, so the start-up notice
    is seen, and it offers Open settings (the dialog that keeps tokens for the session) and
    Try demo mode. With the token entered, the notice still says what became of the
    keychain; a message is then sent, shown and saved. The notice's text is returned."""
    assert not run.main.welcome.isVisible()
    banner = run.main.pane.notice_banner
    assert "Open settings" in [b.text() for b in banner.findChildren(QPushButton)]
    await enter_token_for_this_session(run)
    await until(run.main.pane.isVisible, "the chat to replace the first-run panel")
    title, text = run.banner()
    assert title == STARTUP_NOTICE_TITLE
    assert "this session only" in text
    assert_plain(text)
    outcome = await run.ask(PROMPT)
    assert outcome.data.status == "done"
    rows = await run.settle()
    assert ("user", PROMPT, "done") in rows
    assert ("assistant", outcome.data.content, "done") in rows
    assert ("user", PROMPT, "done") in run.shown()
    return text


# -- the keychain -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("missing", "No system keychain"),
        ("locked", "locked"),
    ],
)
async def test_an_unusable_keychain_leaves_tokens_session_only(
    name: str,
    words: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
) -> None:
    backend = fail.Keyring() if name == "missing" else _LockedBackend()
    _save_settings(emulator, isolated_profile)
    store = KeyringSecretStore(backend=backend)  # type: ignore[arg-type]
    async with started_window(emulator, isolated_profile, logged, secrets=store) as run:
        assert words in await _keychain_problem_then_chat(run)


@pytest.mark.slow
async def test_a_slow_keychain_times_out_and_the_window_starts_anyway(
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
    slow_backend: _SlowBackend,
) -> None:
    _save_settings(emulator, isolated_profile)
    store = KeyringSecretStore(backend=slow_backend)  # type: ignore[arg-type]
    async with started_window(emulator, isolated_profile, logged, secrets=store) as run:
        text = await _keychain_problem_then_chat(run)
        assert f"no answer in {secret_api.DEFAULT_TIMEOUT:g} s" in text


# -- the settings file --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("garbage-bytes", b"\x00\xff\xfe{ not json \x9c\x01" * 40, "moved to"),
        ("truncated-json", b'{"account_id": "0123', "is not valid JSON"),
        ("not-an-object", b"[1, 2, 3]", "does not contain a settings object"),
    ],
)
async def test_a_corrupt_settings_file_is_moved_aside_and_reported(
    name: str,
    content: bytes,
    words: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
) -> None:
    (isolated_profile / SETTINGS_FILENAME).write_bytes(content)
    memory = MemorySecretStore()
    async with started_window(emulator, isolated_profile, logged, secrets=memory) as run:
        kept = _set_aside(isolated_profile, SETTINGS_FILENAME)
        assert kept == [content]  # nothing of the old file lost
        found = " ".join(run.env.prefs.store.problems)
        assert words in found
        assert "default settings are used" in found
        assert_plain(found)
        title, text = run.banner()  # what the user is told, where the welcome would be
        assert title == STARTUP_NOTICE_TITLE
        assert words in text
        await asyncio.sleep(0.1)  # the window idles responsive with the notice up


async def test_settings_of_the_wrong_types_fall_back_field_by_field(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    good = make_settings(emulator)
    data = {
        "schema_version": SCHEMA_VERSION,
        "account_id": good.account_id,
        "api_base": good.api_base,
        "last_model": good.last_model,
        "default_max_tokens": "lots",
        "request_timeout": [1, 2],
        "reject_if_busy": "yes",
        "gateway_metadata": {"a": {"deep": True}},
        "idle_timeout": None,
    }
    (isolated_profile / SETTINGS_FILENAME).write_text(json.dumps(data))
    memory = MemorySecretStore({"api-token": TOKEN})
    async with started_window(emulator, isolated_profile, logged, secrets=memory) as run:
        _title, text = run.banner()
        for name in ("default_max_tokens", "request_timeout", "reject_if_busy", "idle_timeout"):
            assert f"'{name}'" in text
        assert "the default is used" in text
        assert_plain(text)
        outcome = await run.ask(PROMPT)  # the good fields were kept: the account works
        assert outcome.data.status == "done"
        assert ("user", PROMPT, "done") in await run.settle()


async def test_settings_from_a_newer_flarechat_are_used_and_never_overwritten(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    good = make_settings(emulator)
    data = {
        "schema_version": SCHEMA_VERSION + 40,
        "account_id": good.account_id,
        "api_base": good.api_base,
        "last_model": good.last_model,
        "a_setting_from_the_future": {"kept": [1, 2, 3]},
    }
    path = isolated_profile / SETTINGS_FILENAME
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    memory = MemorySecretStore({"api-token": TOKEN})
    async with started_window(emulator, isolated_profile, logged, secrets=memory) as run:
        _title, text = run.banner()
        assert "newer Flarechat" in text
        assert_plain(text)
        outcome = await run.ask(PROMPT)
        assert outcome.data.status == "done"
    assert path.read_bytes() == before  # quitting saved nothing over the newer file


# -- the database -------------------------------------------------------------------------------


async def test_a_corrupt_database_is_moved_aside_and_a_fresh_one_used(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    garbage = b"SQLite format 3\x00" + bytes(range(256)) * 64
    (isolated_profile / DB_NAME).write_bytes(garbage)
    _save_settings(emulator, isolated_profile)
    memory = MemorySecretStore({"api-token": TOKEN})
    async with started_window(emulator, isolated_profile, logged, secrets=memory) as run:
        _title, text = run.banner()
        assert "moved to" in text
        assert "new, empty database" in text
        assert_plain(text)
        outcome = await run.ask(PROMPT)
        assert outcome.data.status == "done"
        assert ("user", PROMPT, "done") in await run.settle()
    assert _set_aside(isolated_profile, DB_NAME) == [garbage]  # nothing of the old file deleted
    assert ("user", PROMPT, "done") in saved(isolated_profile / DB_NAME)

"""Secret stores: memory store, keyring store failure mapping and backend refusal, async helpers.

The fake backends below are duck-typed on purpose: subclassing keyring's KeyringBackend
registers the class process-wide, and keyring's own detection would then consider it.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import cast

import keyring.backend
import keyring.errors
import pytest

from flarechat.settings import secrets
from flarechat.settings.secrets import (
    API_TOKEN,
    GATEWAY_TOKEN,
    KeyringSecretStore,
    MemorySecretStore,
    SecretStore,
    SecretStoreUnavailable,
)

TOKEN = "cfut_secretVALUE0123456789abcdefghijklmnop"
#: Long enough to notice a hang, short enough to keep the suite fast.
SHORT_TIMEOUT = 0.1
#: Bound on waiting for a released thread to finish (never reached when green).
PATIENCE = 30.0


class DictBackend:
    """A working keychain: priority like the real OS backends, values in a dict."""

    priority = 5.0
    name = "Fake Secure Keyring"

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.values.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.values[service, username] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.values:
            raise keyring.errors.PasswordDeleteError("No such password!")
        del self.values[service, username]


class DBusErrorResponse(Exception):
    """Stands in for jeepney's error: not a KeyringError, as real D-Bus failures are not."""


class FailingBackend(DictBackend):
    """Every call raises ``error``; set_password echoes the secret, as a careless backend might."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def get_password(self, service: str, username: str) -> str | None:
        raise self.error

    def set_password(self, service: str, username: str, password: str) -> None:
        raise type(self.error)(f"{self.error} while storing {password}")

    def delete_password(self, service: str, username: str) -> None:
        raise self.error


class PlaintextKeyring(DictBackend):
    """Looks like keyrings.alt's file backend (module name and its priority of 0.5)."""

    priority = 0.5
    name = "file PlaintextKeyring"


PlaintextKeyring.__module__ = "keyrings.alt.file"


class LowPriorityKeyring(DictBackend):
    priority = 0.2
    name = "Odd Keyring"


def _store(backend: object) -> KeyringSecretStore:
    return KeyringSecretStore(backend=cast(keyring.backend.KeyringBackend, backend))


# -- MemorySecretStore -------------------------------------------------------------------------


def test_memory_store_round_trip() -> None:
    store: SecretStore = MemorySecretStore()
    assert store.get(API_TOKEN) is None
    store.set(API_TOKEN, TOKEN)
    store.set(GATEWAY_TOKEN, "gw-token")
    assert (store.get(API_TOKEN), store.get(GATEWAY_TOKEN)) == (TOKEN, "gw-token")
    store.delete(API_TOKEN)
    store.delete(API_TOKEN)  # deleting twice is fine
    assert store.get(API_TOKEN) is None
    assert store.get(GATEWAY_TOKEN) == "gw-token"


def test_memory_store_empty_value_deletes_and_repr_hides_values() -> None:
    store = MemorySecretStore({API_TOKEN: TOKEN, GATEWAY_TOKEN: "gw-token"})
    store.set(GATEWAY_TOKEN, "")
    assert store.get(GATEWAY_TOKEN) is None
    assert TOKEN not in repr(store)
    assert API_TOKEN in repr(store)


# -- KeyringSecretStore: refusal and failure mapping ----------------------------------------


def _assert_session_only(error: SecretStoreUnavailable) -> None:
    assert error.message == str(error)
    assert "Flarechat can keep the token for this session only." in error.message
    assert TOKEN not in error.message


def test_fail_backend_means_no_keychain() -> None:
    # tests/conftest.py forces keyring.backends.fail.Keyring for every unmarked test.
    store = KeyringSecretStore()
    with pytest.raises(SecretStoreUnavailable) as on_get:
        store.get(API_TOKEN)
    with pytest.raises(SecretStoreUnavailable) as on_set:
        store.set(API_TOKEN, TOKEN)
    with pytest.raises(SecretStoreUnavailable) as on_delete:
        store.delete(API_TOKEN)
    for caught in (on_get, on_set, on_delete):
        _assert_session_only(caught.value)
        assert caught.value.message.startswith("No system keychain is available (")


@pytest.mark.parametrize(
    ("backend_name", "reason"),
    [
        ("keyring.backends.null.Keyring", "disabled"),
        ("keyring.backends.fail.Keyring", "no keychain backend was found"),
        ("no_such_module.Keyring", "ModuleNotFoundError"),
    ],
)
def test_forced_unusable_backends_are_refused(
    monkeypatch: pytest.MonkeyPatch, backend_name: str, reason: str
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", backend_name)
    with pytest.raises(SecretStoreUnavailable) as caught:
        KeyringSecretStore().set(API_TOKEN, TOKEN)
    assert reason in caught.value.reason
    _assert_session_only(caught.value)


@pytest.mark.parametrize(
    ("backend", "reason"),
    [
        (PlaintextKeyring(), "plain file"),
        (LowPriorityKeyring(), "not a secure keychain (keyring priority 0.2)"),
    ],
)
def test_insecure_backends_are_never_used(backend: DictBackend, reason: str) -> None:
    store = _store(backend)
    with pytest.raises(SecretStoreUnavailable) as caught:
        store.set(API_TOKEN, TOKEN)
    assert reason in caught.value.reason
    assert backend.values == {}


@pytest.mark.parametrize(
    ("error", "lead"),
    [
        (keyring.errors.NoKeyringError("no backend"), "No system keychain is available"),
        (keyring.errors.KeyringLocked("Failed to unlock"), "locked or access to it was refused"),
        (keyring.errors.InitError("collection"), "could not be used"),
        (DBusErrorResponse("org.freedesktop.DBus.Error.NoReply"), "could not be used"),
        (OSError(111, "Connection refused"), "could not be used"),
    ],
)
def test_backend_errors_become_secret_store_unavailable(error: Exception, lead: str) -> None:
    store = _store(FailingBackend(error))
    with pytest.raises(SecretStoreUnavailable) as on_get:
        store.get(API_TOKEN)
    assert lead in on_get.value.message
    assert type(error).__name__ in on_get.value.reason
    assert on_get.value.__cause__ is error
    _assert_session_only(on_get.value)
    with pytest.raises(SecretStoreUnavailable):
        store.delete(API_TOKEN)


def test_a_failed_set_never_echoes_the_secret() -> None:
    store = _store(FailingBackend(DBusErrorResponse("refused")))
    with pytest.raises(SecretStoreUnavailable) as caught:
        store.set(API_TOKEN, TOKEN)
    assert "while storing ********" in caught.value.reason
    _assert_session_only(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_working_backend_round_trip_under_the_flarechat_service() -> None:
    backend = DictBackend()
    store = _store(backend)
    store.set(API_TOKEN, TOKEN)
    assert backend.values == {("flarechat", "api-token"): TOKEN}
    assert store.get(API_TOKEN) == TOKEN
    assert store.get(GATEWAY_TOKEN) is None
    store.set(API_TOKEN, "")  # empty means remove
    assert backend.values == {}
    store.delete(API_TOKEN)  # nothing stored: not an error
    assert store.describe() == "Fake Secure Keyring"
    assert TOKEN not in repr(store)


# -- detection and describe_backend ------------------------------------------------------------


@pytest.fixture
def detect_from(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[object]:
    """Unforced detection over a controlled list of viable backends (no env, no config file)."""
    viable: list[object] = []
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-keyring-config"))
    monkeypatch.setattr(keyring.backend, "get_all_keyring", lambda: list(viable))
    return viable


def test_detection_prefers_a_secure_backend_over_plaintext(detect_from: list[object]) -> None:
    secure = DictBackend()
    secure.priority = 4.5
    detect_from.extend([PlaintextKeyring(), secure, LowPriorityKeyring()])
    store = KeyringSecretStore()
    store.set(API_TOKEN, TOKEN)
    assert secure.values == {("flarechat", "api-token"): TOKEN}
    assert secrets.describe_backend() == "Fake Secure Keyring"


def test_detection_with_only_insecure_backends_is_unavailable(detect_from: list[object]) -> None:
    detect_from.append(PlaintextKeyring())
    with pytest.raises(SecretStoreUnavailable, match="no keychain backend was found"):
        KeyringSecretStore().get(API_TOKEN)
    assert secrets.describe_backend() == "none: no keychain backend was found"


def test_an_unusable_keychain_is_retried_on_the_next_call(detect_from: list[object]) -> None:
    store = KeyringSecretStore()
    with pytest.raises(SecretStoreUnavailable):
        store.get(API_TOKEN)
    backend = DictBackend()
    backend.values["flarechat", "api-token"] = TOKEN
    detect_from.append(backend)  # e.g. the user unlocked or started their keychain
    assert store.get(API_TOKEN) == TOKEN


def test_describe_backend_names_the_reason_when_there_is_none() -> None:
    assert secrets.describe_backend() == "none: no keychain backend was found"


# -- async helpers -----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_async_helpers_round_trip() -> None:
    store = MemorySecretStore()
    await secrets.aset(store, API_TOKEN, TOKEN)
    assert await secrets.aget(store, API_TOKEN) == TOKEN
    await secrets.adelete(store, API_TOKEN)
    assert await secrets.aget(store, API_TOKEN) is None


@pytest.mark.asyncio
async def test_async_helpers_pass_store_errors_through() -> None:
    with pytest.raises(SecretStoreUnavailable, match="No system keychain"):
        await secrets.aget(KeyringSecretStore(), API_TOKEN)
    store = _store(FailingBackend(KeyError("bug")))
    with pytest.raises(SecretStoreUnavailable, match="could not be used"):
        await secrets.aset(store, API_TOKEN, TOKEN)


class BlockingStore(MemorySecretStore):
    """A keychain that hangs (as D-Bus does with a missing HOME) until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__({API_TOKEN: TOKEN})
        self.release = threading.Event()
        self.returned = threading.Event()

    def get(self, name: str) -> str | None:
        self.release.wait()
        try:
            return super().get(name)
        finally:
            self.returned.set()

    def delete(self, name: str) -> None:
        self.release.wait()
        super().delete(name)
        self.returned.set()


@pytest.mark.asyncio
async def test_a_hung_keychain_times_out_as_unavailable() -> None:
    store = BlockingStore()
    try:
        with pytest.raises(SecretStoreUnavailable) as caught:
            await secrets.aget(store, API_TOKEN, timeout=SHORT_TIMEOUT)
        assert caught.value.message.startswith("The system keychain did not answer in 0.1 s.")
        assert "session only" in caught.value.message
        with pytest.raises(SecretStoreUnavailable, match="did not answer"):
            await secrets.adelete(store, API_TOKEN, timeout=SHORT_TIMEOUT)
    finally:
        store.release.set()
    # The late answer lands on an abandoned future: it must be dropped without any warning.
    assert await asyncio.to_thread(store.returned.wait, PATIENCE)
    await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_the_event_loop_keeps_running_while_the_keychain_hangs() -> None:
    store = BlockingStore()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        with pytest.raises(SecretStoreUnavailable):
            await secrets.aget(store, API_TOKEN, timeout=SHORT_TIMEOUT)
    finally:
        store.release.set()
        task.cancel()
    assert ticks > 1


def test_keychain_threads_are_daemons_so_quitting_never_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[threading.Thread] = []
    real_start = threading.Thread.start

    def recording_start(thread: threading.Thread) -> None:
        started.append(thread)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    assert asyncio.run(secrets.aget(MemorySecretStore({API_TOKEN: TOKEN}), API_TOKEN)) == TOKEN
    assert [thread.daemon for thread in started] == [True]

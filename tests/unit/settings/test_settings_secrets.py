"""Secret stores: memory store, keyring store failure mapping and backend refusal, async helpers.

The fake backends below are duck-typed on purpose: subclassing keyring's KeyringBackend
registers the class process-wide, and keyring's own detection would then consider it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
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
    # a session bus to ask (never connected to: the backends above are fakes), so keyring decides
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'bus'}")
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


# -- no bus, no keyring --------------------------------------------------------------------------

#: What a process prints when reading a token with no bus, nothing chosen, nothing plugged in.
_READ_WITHOUT_BUS = """
import sys
from flarechat.settings.secrets import KeyringSecretStore, SecretStoreUnavailable
try:
    KeyringSecretStore().get("api-token")
except SecretStoreUnavailable as error:
    print(error.reason, "keyring" in sys.modules, "cryptography" in sys.modules)
"""


@pytest.fixture
def no_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """Linux with no D-Bus session bus, no keyring choice and no plugin; counts keyring's
    backend discoveries (each still runs keyring's own)."""
    discoveries: list[int] = []
    discover = keyring.backend.get_all_keyring

    def counted() -> list[keyring.backend.KeyringBackend]:
        discoveries.append(1)
        return discover()

    monkeypatch.delenv("PYTHON_KEYRING_BACKEND")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(keyring.backend, "get_all_keyring", counted)
    return discoveries


def test_without_a_session_bus_there_is_no_keychain_and_keyring_is_not_asked(
    no_bus: list[int],
) -> None:
    with pytest.raises(SecretStoreUnavailable, match="no keychain backend was found"):
        KeyringSecretStore().get(API_TOKEN)
    assert no_bus == []


def test_without_a_session_bus_keyring_is_not_even_imported(no_bus: list[int]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_KEYRING_BACKEND"}
    read = subprocess.run(
        [sys.executable, "-c", _READ_WITHOUT_BUS],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert read.stdout.split() == ["no", "keychain", "backend", "was", "found", "False", "False"]


def test_a_session_bus_socket_in_the_runtime_dir_leaves_it_to_keyring(
    no_bus: list[int], tmp_path: Path
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    with socket.socket(socket.AF_UNIX) as bus:  # a socket libdbus would find, answering nothing
        bus.bind(str(runtime / "bus"))
        with pytest.raises(SecretStoreUnavailable):
            KeyringSecretStore().get(API_TOKEN)
    assert no_bus == [1]


def test_a_keyring_config_file_is_honoured_without_a_session_bus(
    no_bus: list[int], tmp_path: Path
) -> None:
    config = tmp_path / "config" / "python_keyring" / "keyringrc.cfg"
    config.parent.mkdir(parents=True)
    config.write_text("[backend]\ndefault-keyring=keyring.backends.null.Keyring\n")
    with pytest.raises(SecretStoreUnavailable, match="null backend"):
        KeyringSecretStore().get(API_TOKEN)


def test_a_plugged_in_backend_is_asked_without_a_session_bus(
    no_bus: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "site" / "keyring_fileplug-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: keyring-fileplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[keyring.backends]\nfileplug = keyring_fileplug\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(SecretStoreUnavailable):  # the plugin's module is not there to import
        KeyringSecretStore().get(API_TOKEN)
    assert no_bus == [1]


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

"""Secrets (the API and gateway tokens) in the OS keychain: the only module that imports keyring.

Every keychain failure becomes ``SecretStoreUnavailable`` with a plain-English message; there is
no plaintext fallback, and keyring's insecure backends (keyrings.alt files, null/fail) count as
"no keychain". The store methods block (D-Bus, Keychain, Credential Manager): in the app, call
them through ``aget``/``aset``/``adelete``, which run them off the event loop with a timeout.
keyring itself is imported on first use (on that worker thread in the app), not with this
module: it and its backend discovery cost ~170 ms, which the window's first paint never waits for.
Where keyring could only end at "no keychain" (Linux without a D-Bus session bus, nothing chosen
or plugged in), that is learnt without importing it (its discovery loads cryptography: ~18 MiB).
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = [
    "API_TOKEN",
    "DEFAULT_TIMEOUT",
    "GATEWAY_TOKEN",
    "SERVICE",
    "KeyringSecretStore",
    "MemorySecretStore",
    "SecretStore",
    "SecretStoreUnavailable",
    "adelete",
    "aget",
    "aset",
    "describe_backend",
]

API_TOKEN = "api-token"
GATEWAY_TOKEN = "gateway-token"
SERVICE = "flarechat"
#: Seconds to wait for the keychain before offering session-only storage.
DEFAULT_TIMEOUT = 5.0
#: keyring's own threshold: below this a backend is "not recommended" (plain files, null…).
_MIN_PRIORITY = 1.0
_INSECURE_MODULE_PREFIX = "keyrings.alt"
_REASON_MAX_CHARS = 200
_NOT_FOUND = "no keychain backend was found"
#: Platforms whose keychain keyring reaches without D-Bus (Keychain, Credential Manager).
_NATIVE_KEYCHAIN_PLATFORMS = ("darwin", "win32", "cygwin")
_BACKEND_ENV = "PYTHON_KEYRING_BACKEND"
_SESSION_BUS_ENV = "DBUS_SESSION_BUS_ADDRESS"
#: Where libdbus and GDBus look for the session bus when the variable is unset.
_RUNTIME_DIR_ENV, _RUNTIME_BUS = "XDG_RUNTIME_DIR", "bus"
#: keyring's config file (keyring.util.platform_.config_root on Linux and the BSDs).
_CONFIG_HOME_ENV, _CONFIG_FILE = "XDG_CONFIG_HOME", Path("python_keyring", "keyringrc.cfg")
#: The entry-point group keyring discovers backends in; its own live in this package.
_BACKENDS_GROUP, _OWN_BACKENDS = "keyring.backends", "keyring.backends."
_SESSION_ONLY = "Flarechat can keep the token for this session only."

_T = TypeVar("_T")


class SecretStoreUnavailable(Exception):
    """The keychain cannot be used; ``message`` says so plainly, ``reason`` is the technical why."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


class SecretStore(Protocol):
    """Where tokens live. Blocking; may raise ``SecretStoreUnavailable``."""

    def get(self, name: str) -> str | None: ...

    def set(self, name: str, value: str) -> None: ...

    def delete(self, name: str) -> None: ...


class MemorySecretStore:
    """Tokens in a dict: for tests and the "this session only" choice. Forgets them on exit."""

    def __init__(self, initial: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = dict(initial or {})

    def get(self, name: str) -> str | None:
        return self._values.get(name)

    def set(self, name: str, value: str) -> None:
        if value:
            self._values[name] = value
        else:
            self._values.pop(name, None)

    def delete(self, name: str) -> None:
        self._values.pop(name, None)

    def __repr__(self) -> str:
        return f"MemorySecretStore(names={sorted(self._values)!r})"


class KeyringSecretStore:
    """The OS keychain through keyring, under one service name; entries are named by token kind.

    ``backend`` forces a keyring backend (tests); by default one is detected on first use.
    Setting an empty value deletes the entry; deleting a missing entry is not an error.
    """

    def __init__(self, service: str = SERVICE, *, backend: KeyringBackend | None = None) -> None:
        self._service = service
        self._forced = backend
        self._usable: KeyringBackend | None = None
        self._lock = threading.Lock()

    def get(self, name: str) -> str | None:
        backend = self._usable_backend()
        try:
            return backend.get_password(self._service, name)
        # Broad on purpose: backends leak non-keyring errors (jeepney DBusErrorResponse, OSError
        # from a dead bus, secretstorage errors), and each one means "no keychain" to the user.
        except Exception as exc:
            raise _unavailable(exc) from exc

    def set(self, name: str, value: str) -> None:
        if not value:
            self.delete(name)
            return
        backend = self._usable_backend()
        try:
            backend.set_password(self._service, name, value)
        except Exception as exc:  # noqa: BLE001  # broad for the same reason as in get()
            # ``from None``: the original error could in theory echo what was being stored.
            raise _unavailable(exc, secret=value) from None

    def delete(self, name: str) -> None:
        import keyring.errors  # on first use (module doc)

        backend = self._usable_backend()
        try:
            backend.delete_password(self._service, name)
        except keyring.errors.PasswordDeleteError:
            return  # nothing stored under that name: already deleted
        except Exception as exc:  # broad for the same reason as in get()
            raise _unavailable(exc) from exc

    def describe(self) -> str:
        """The backend's display name, e.g. "SecretService Keyring" (may block)."""
        return self._usable_backend().name

    def __repr__(self) -> str:
        return f"KeyringSecretStore(service={self._service!r})"

    def _usable_backend(self) -> KeyringBackend:
        """The checked backend; an unusable one is not cached, so a later call retries."""
        with self._lock:
            if self._usable is None:
                backend = self._forced if self._forced is not None else _detect_backend()
                reason = _insecure_reason(backend)
                if reason is not None:
                    raise _no_keychain(reason)
                self._usable = backend
            return self._usable


def describe_backend() -> str:
    """For ``--self-check``: "SecretService Keyring", or "none: <reason>". May block."""
    try:
        return KeyringSecretStore().describe()
    except SecretStoreUnavailable as exc:
        return f"none: {exc.reason}"


def _detect_backend() -> KeyringBackend:
    """The backend keyring would pick, minus insecure ones.

    Not ``keyring.get_keyring()``: that caches one backend for the whole process, so a backend
    forced earlier (as tests do with PYTHON_KEYRING_BACKEND) would stick. Explicit choices
    (PYTHON_KEYRING_BACKEND, keyringrc.cfg) are honoured and then checked like any other.
    """
    if _surely_no_keychain():
        raise _no_keychain(_NOT_FOUND)
    try:
        import keyring.backend  # on first use (module doc); may fail too
        import keyring.core
        from keyring.backends import chainer

        chosen = keyring.core.load_env() or keyring.core.load_config()
        if chosen is not None:
            return chosen
        candidates = [
            ring
            for ring in keyring.backend.get_all_keyring()
            if not isinstance(ring, chainer.ChainerBackend) and _insecure_reason(ring) is None
        ]
    # Broad on purpose: a misconfigured backend name raises ImportError, ValueError or
    # RuntimeError, a half-working D-Bus raises its own types; all mean "no keychain".
    except Exception as exc:
        raise _no_keychain(_short(exc)) from exc
    if not candidates:
        raise _no_keychain(_NOT_FOUND)
    return max(candidates, key=keyring.backend.by_priority)


def _surely_no_keychain() -> bool:
    """True where keyring's detection could only end at "no keychain"; it is then not imported.

    On Linux and the BSDs keyring's own backends (Secret Service, KWallet, libsecret) all talk
    over the D-Bus session bus: with no bus address and no socket where libdbus and GDBus look,
    and no backend chosen (PYTHON_KEYRING_BACKEND, keyringrc.cfg) or added by a plugin, none can
    answer. Any of those present: keyring decides, as before.
    """
    if sys.platform.startswith(_NATIVE_KEYCHAIN_PLATFORMS) or os.environ.get(_BACKEND_ENV):
        return False
    if os.environ.get(_SESSION_BUS_ENV) or _runtime_bus().exists():
        return False
    return not _keyring_config().exists() and not _plugin_backends()


def _runtime_bus() -> Path:
    runtime = os.environ.get(_RUNTIME_DIR_ENV) or f"/run/user/{os.getuid()}"
    return Path(runtime, _RUNTIME_BUS)


def _keyring_config() -> Path:
    config_home = os.environ.get(_CONFIG_HOME_ENV) or str(Path.home() / ".config")
    return Path(config_home) / _CONFIG_FILE


def _plugin_backends() -> list[str]:
    """Backends other packages add to keyring (read from their metadata, not imported)."""
    from importlib.metadata import entry_points  # only where no bus was found

    found = entry_points(group=_BACKENDS_GROUP)
    return [point.value for point in found if not point.value.startswith(_OWN_BACKENDS)]


def _insecure_reason(backend: KeyringBackend) -> str | None:
    """Why this backend must not hold a token, or None if it is a real keychain."""
    from keyring.backends import fail, null  # on first use (module doc)

    if isinstance(backend, fail.Keyring):
        return _NOT_FOUND
    if isinstance(backend, null.Keyring):
        return "keyring is disabled (null backend)"
    module = type(backend).__module__
    if module.startswith(_INSECURE_MODULE_PREFIX):
        return f"{backend.name} stores secrets in a plain file, which Flarechat refuses to use"
    try:
        priority = float(backend.priority)
    except Exception as exc:  # noqa: BLE001  # priority probes the service and may raise anything
        return f"{backend.name} is not usable ({_short(exc)})"
    if priority < _MIN_PRIORITY:
        return f"{backend.name} is not a secure keychain (keyring priority {priority:g})"
    return None


def _short(exc: BaseException, *, secret: str = "") -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if secret:
        text = text.replace(secret, "********")
    text = " ".join(text.split())
    if len(text) > _REASON_MAX_CHARS:
        text = text[: _REASON_MAX_CHARS - 1] + "…"
    return text


def _no_keychain(reason: str) -> SecretStoreUnavailable:
    return SecretStoreUnavailable(
        f"No system keychain is available ({reason}). {_SESSION_ONLY}", reason=reason
    )


def _unavailable(exc: BaseException, *, secret: str = "") -> SecretStoreUnavailable:
    import keyring.errors  # on first use (module doc)

    reason = _short(exc, secret=secret)
    if isinstance(exc, keyring.errors.NoKeyringError):
        return _no_keychain(reason)
    if isinstance(exc, keyring.errors.KeyringLocked):
        lead = "The system keychain is locked or access to it was refused"
    else:
        lead = "The system keychain could not be used"
    return SecretStoreUnavailable(f"{lead} ({reason}). {_SESSION_ONLY}", reason=reason)


# -- async helpers ------------------------------------------------------------------------


# The ``timeout`` parameters (ASYNC109) are the contract: expiry must become
# SecretStoreUnavailable with a message for people, not a bare TimeoutError from the caller's scope.


async def aget(
    store: SecretStore,
    name: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
) -> str | None:
    """``store.get(name)`` off the event loop; a slow keychain raises SecretStoreUnavailable."""
    return await _off_loop(functools.partial(store.get, name), seconds=timeout)


async def aset(
    store: SecretStore,
    name: str,
    value: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
) -> None:
    """``store.set(name, value)`` off the event loop, with a timeout."""
    await _off_loop(functools.partial(store.set, name, value), seconds=timeout)


async def adelete(
    store: SecretStore,
    name: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
) -> None:
    """``store.delete(name)`` off the event loop, with a timeout."""
    await _off_loop(functools.partial(store.delete, name), seconds=timeout)


async def _off_loop(call: Callable[[], _T], *, seconds: float) -> _T:
    """Run ``call`` on a daemon thread and wait at most ``seconds``.

    Not ``asyncio.to_thread``: a keychain that never answers (a D-Bus call can hang for 120 s)
    would pin a default-executor thread, and the loop's shutdown and interpreter exit both join
    those, so quitting would hang. A daemon thread is simply abandoned.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def work() -> None:
        try:
            result = call()
        # Broad on purpose: every error is handed to the awaiting coroutine, not swallowed.
        except Exception as exc:  # noqa: BLE001
            _deliver(future, settle=functools.partial(future.set_exception, exc))
        else:
            _deliver(future, settle=functools.partial(future.set_result, result))

    threading.Thread(target=work, name="flarechat-keychain", daemon=True).start()
    try:
        async with asyncio.timeout(seconds):  # not wait_for: on 3.11 it can eat a cancel
            return await future
    except TimeoutError:
        raise SecretStoreUnavailable(
            f"The system keychain did not answer in {seconds:g} s. {_SESSION_ONLY}",
            reason=f"no answer in {seconds:g} s",
        ) from None


def _deliver(future: asyncio.Future[_T], *, settle: Callable[[], None]) -> None:
    """Settle ``future`` on its loop, unless it timed out meanwhile or the loop is gone."""

    def settle_if_pending() -> None:
        if not future.done():
            settle()

    try:
        future.get_loop().call_soon_threadsafe(settle_if_pending)
    except RuntimeError:  # the loop was closed while the keychain was still busy
        return

"""A real Secret Service keyring for tests: a private D-Bus session bus plus gnome-keyring.

``real_secret_service(base)`` starts ``dbus-daemon --session`` and an unlocked
``gnome-keyring-daemon --components=secrets`` under a temporary HOME and XDG_RUNTIME_DIR (0700),
points ``DBUS_SESSION_BUS_ADDRESS`` and the XDG dirs at them, unsets ``PYTHON_KEYRING_BACKEND``
(so keyring detects the Secret Service), and undoes all of it on exit. Nothing touches the
developer's own session or keyrings. Tests using it need ``@pytest.mark.keyring_real``, which
stops tests/conftest.py from forcing keyring's fail backend.

Missing tools skip the test with the install command, unless ``FLARECHAT_REQUIRE_KEYRING=1``
(CI), where a missing keyring must fail instead of silently passing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

__all__ = ["SecretServiceSession", "real_secret_service"]

REQUIRE_ENV = "FLARECHAT_REQUIRE_KEYRING"
INSTALL_HINT = "sudo apt-get install -y --no-install-recommends gnome-keyring dbus"
KEYRING_PASSWORD = b"flarechat-test-password"
SECRETS_BUS_NAME = "org.freedesktop.secrets"
READY_TIMEOUT = 10.0  # seconds for gnome-keyring to claim its bus name
POLL_INTERVAL = 0.05
STOP_TIMEOUT = 5.0
_PRIVATE_DIR_MODE = 0o700
#: Environment variables the session replaces (and restores afterwards).
_ENV_KEYS = (
    "HOME",
    "XDG_RUNTIME_DIR",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "DBUS_SESSION_BUS_ADDRESS",
    "PYTHON_KEYRING_BACKEND",
)


@dataclass(frozen=True)
class SecretServiceSession:
    """The running session: its bus address and the temporary HOME (where keyrings live)."""

    bus_address: str
    home: Path


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1 requires the real keyring test to run)")
    pytest.skip(f"{reason}; install with: {INSTALL_HINT}")


def _require_tools() -> tuple[str, str]:
    dbus = shutil.which("dbus-daemon")
    keyring_daemon = shutil.which("gnome-keyring-daemon")
    if dbus is None or keyring_daemon is None:
        _unavailable("dbus-daemon and gnome-keyring-daemon are needed for a real keyring")
    try:
        # keyring's Secret Service backend talks D-Bus through jeepney (untyped).
        import jeepney  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        _unavailable("jeepney (a keyring dependency on Linux) is not installed")
    return dbus, keyring_daemon


def _private_env(base: Path) -> dict[str, str]:
    home = base / "home"
    runtime = base / "runtime"
    for path in (home, runtime):
        path.mkdir(parents=True)
    runtime.chmod(_PRIVATE_DIR_MODE)
    return {
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }


@contextlib.contextmanager
def _patched_environ(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in _ENV_KEYS}
    try:
        os.environ.pop("PYTHON_KEYRING_BACKEND", None)
        os.environ.update(values)
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def _start_bus(dbus: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    bus = subprocess.Popen(
        [dbus, "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().decode().strip()  # printed once the bus listens
    if not address:
        _stop(bus)
        pytest.fail("dbus-daemon exited without printing its address")
    return bus, address


def _start_keyring(daemon: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    # --foreground (beyond the usual --unlock --components=secrets) keeps the daemon our child,
    # so teardown can stop exactly this process.
    process = subprocess.Popen(
        [daemon, "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert process.stdin is not None
    process.stdin.write(KEYRING_PASSWORD)
    process.stdin.close()
    return process


def _wait_for_secrets_service(address: str, daemon: subprocess.Popen[bytes]) -> None:
    from jeepney.bus_messages import message_bus  # type: ignore[import-untyped]
    from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

    deadline = time.monotonic() + READY_TIMEOUT
    with open_dbus_connection(bus=address) as connection:
        while time.monotonic() < deadline:
            if daemon.poll() is not None:
                pytest.fail(f"gnome-keyring-daemon exited early (status {daemon.returncode})")
            reply = connection.send_and_get_reply(message_bus.NameHasOwner(SECRETS_BUS_NAME))
            if reply.body[0]:
                return
            time.sleep(POLL_INTERVAL)
    pytest.fail(f"gnome-keyring-daemon did not claim {SECRETS_BUS_NAME} in {READY_TIMEOUT:g} s")


def _forget_keyring_detection() -> None:
    """keyring caches which backends are viable; drop what it saw before/after our bus."""
    import keyring.backend

    reset = getattr(keyring.backend.get_all_keyring, "reset", None)
    if callable(reset):
        with contextlib.suppress(AttributeError, KeyError):
            reset()


@contextlib.contextmanager
def real_secret_service(base: Path) -> Iterator[SecretServiceSession]:
    """Run a private Secret Service under ``base`` for the duration of the block."""
    dbus, daemon = _require_tools()
    env_values = _private_env(base)
    child_env = {k: v for k, v in os.environ.items() if k != "PYTHON_KEYRING_BACKEND"}
    child_env.update(env_values)
    bus, address = _start_bus(dbus, child_env)
    keyring_process: subprocess.Popen[bytes] | None = None
    try:
        child_env["DBUS_SESSION_BUS_ADDRESS"] = address
        keyring_process = _start_keyring(daemon, child_env)
        _wait_for_secrets_service(address, keyring_process)
        with _patched_environ({**env_values, "DBUS_SESSION_BUS_ADDRESS": address}):
            _forget_keyring_detection()
            try:
                yield SecretServiceSession(bus_address=address, home=Path(env_values["HOME"]))
            finally:
                _forget_keyring_detection()
    finally:
        if keyring_process is not None:
            _stop(keyring_process)
        _stop(bus)

"""Where things live (resources, the profile dirs) and how files there are replaced safely."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

__all__ = [
    "atomic_write_text",
    "cache_dir",
    "config_dir",
    "data_dir",
    "free_sibling",
    "log_dir",
    "profile_dir",
    "resource_path",
]

APP_NAME = "Flarechat"
#: Overrides the whole profile (settings, data, logs, cache) — used by tests and portable installs.
HOME_ENV = "FLARECHAT_HOME"


def _resources_root() -> Path:
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root is not None:  # PyInstaller bundle
        return Path(frozen_root) / "resources"
    packaged = Path(__file__).resolve().parent / "_resources"  # installed wheel
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "resources"  # source checkout / editable


def resource_path(*parts: str) -> Path:
    """The one way to find a file under ``resources/``, wherever the app runs from."""
    return _resources_root().joinpath(*parts)


def profile_dir() -> Path | None:
    """The ``FLARECHAT_HOME`` profile directory, or ``None`` to use the platform's dirs."""
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser() if home else None


_PLATFORM_DIRS: dict[str, Callable[..., Path]] = {
    "config": platformdirs.user_config_path,
    "data": platformdirs.user_data_path,
    "logs": platformdirs.user_log_path,
    "cache": platformdirs.user_cache_path,
}


def _dir(kind: str) -> Path:
    home = profile_dir()
    if home is not None:
        path = home / kind
    else:
        getter: Callable[..., Path] = _PLATFORM_DIRS[kind]
        path = getter(APP_NAME, appauthor=False)
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_dir() -> Path:
    return _dir("config")


def data_dir() -> Path:
    return _dir("data")


def log_dir() -> Path:
    return _dir("logs")


def cache_dir() -> Path:
    return _dir("cache")


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a crash leaves either the old file or the new one.

    Temp file in the same directory + fsync + os.replace, then an fsync of the directory so the
    rename itself is durable (POSIX only; Windows cannot open a directory).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    if os.name == "posix":
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def free_sibling(path: Path, label: str, *, now: float | None = None) -> Path:
    """An unused name beside ``path``: ``<name>.<label>-<UTC stamp>``, then ``-2``, ``-3``…

    For files set aside (corrupt files, backups): an earlier one is never overwritten.
    ``now`` is a Unix time (default: the current time).
    """
    moment = dt.datetime.now(dt.UTC) if now is None else dt.datetime.fromtimestamp(now, dt.UTC)
    base = f"{path.name}.{label}-{moment:%Y%m%dT%H%M%SZ}"
    target = path.with_name(base)
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{base}-{counter}")
    return target

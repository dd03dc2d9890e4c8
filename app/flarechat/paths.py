"""Where things live (resources, the profile dirs) and how files there are replaced safely."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

__all__ = [
    "LOW_SPACE_BYTES",
    "MAX_IMPORT_BYTES",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "FileTooLarge",
    "NotRegularFile",
    "ProfileUnavailable",
    "atomic_write_text",
    "cache_dir",
    "config_dir",
    "data_dir",
    "disk_full",
    "free_sibling",
    "log_dir",
    "private_file",
    "profile_dir",
    "profile_problem",
    "read_regular_file",
    "resource_path",
    "storage_refusal",
]

APP_NAME = "Flarechat"
#: Overrides the whole profile (settings, data, logs, cache) — used by tests and portable installs.
HOME_ENV = "FLARECHAT_HOME"
#: Chats, settings, logs and caches are the user's alone: folders we create are rwx------ …
PRIVATE_DIR_MODE = 0o700
#: … and files we create rw-------.
PRIVATE_FILE_MODE = 0o600


class ProfileUnavailable(OSError):
    """A profile folder cannot be used; ``str(error)`` is a sentence the CLI and window show.

    An ``OSError`` so code that already copes with a refusing disk copes with this too.
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"Flarechat can't use the folder {path}: {problem}. "
            f"Fix that, or set {HOME_ENV} to a folder you can write."
        )
        self.path = path
        self.problem = problem


class NotRegularFile(OSError):
    """The path is a pipe, a device or a socket: reading it could block forever or never end."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.EINVAL, "not a regular file (a pipe, device or socket)", str(path))

    def __str__(self) -> str:
        return f"{self.filename} is not a regular file (a pipe, device or socket)."


class FileTooLarge(OSError):
    """The file holds more than the limit; ``size`` is its size when the file says it."""

    def __init__(self, path: Path, *, limit: int, size: int | None) -> None:
        super().__init__(errno.EFBIG, "the file is too large", str(path))
        self.limit = limit
        self.size = size

    def __str__(self) -> str:
        return f"{self.filename} is over the {self.limit / 1024 / 1024:g} MB this can read."


_READ_CHUNK = 1024 * 1024
#: The most an import of the user's (conversations, the lab, votes) reads.
MAX_IMPORT_BYTES = 512 * 1024 * 1024


def read_regular_file(path: Path, *, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    For every file a user names (an image, a schema, an import): a named pipe is opened
    without waiting for a writer and refused, as is any device (``/dev/zero`` never ends) or
    socket; a folder is IsADirectoryError. At most ``limit`` + 1 bytes are ever read, whatever
    the file claims its size is: FileTooLarge when there are more than ``limit``.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "it is a folder, not a file", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path)
        if info.st_size > limit:
            raise FileTooLarge(path, limit=limit, size=info.st_size)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileTooLarge(path, limit=limit, size=None)  # it grew, or its size was not true
    return data


_PROFILE_UNUSABLE = (
    "The profile folder cannot be used ({why}). Point FLARECHAT_HOME to a writable folder, "
    "or unset it to use the default."
)


def profile_problem(error: OSError) -> str:
    """What the command line and the window both say when the profile can't be used."""
    if error.strerror is None:  # ProfileUnavailable: already a whole sentence
        return str(error)
    cause = storage_refusal(error) or error.strerror
    return _PROFILE_UNUSABLE.format(why=f"{cause}: {error.filename}")


#: Why a disk refuses a write, by errno: the one place that names the cause, so a full disk is
#: never called read-only (nor a read-only mount a permissions problem).
_REFUSALS = {
    errno.ENOSPC: "the disk is full",
    errno.EROFS: "the disk or folder is mounted read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    **({errno.EDQUOT: "the disk quota is used up"} if hasattr(errno, "EDQUOT") else {}),
}


def storage_refusal(error: OSError) -> str | None:
    """What stopped a write, in a few plain words ("the disk is full"), when ``error`` is a
    disk's refusal (full, over quota, read-only, not allowed); None for any other failure."""
    return _REFUSALS.get(error.errno) if error.errno is not None else None


#: Free space below which a write that failed without saying why (SQLite's "disk I/O error"
#: when it cannot grow its shared-memory file) is put down to a full disk.
LOW_SPACE_BYTES = 1 << 20


def disk_full(path: Path) -> bool:
    """Whether the filesystem that holds ``path`` (or would: its nearest existing folder) is
    writable and has next to no room left (under LOW_SPACE_BYTES for this user)."""
    folder = next((p for p in (path, *path.parents) if p.exists()), None)
    if folder is None:
        return False
    try:
        free = shutil.disk_usage(folder).free
        read_only = hasattr(os, "statvfs") and bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False
    return not read_only and free < LOW_SPACE_BYTES


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
        if home.exists() and not home.is_dir():
            raise ProfileUnavailable(home, f"{HOME_ENV} names a file, not a folder")
        path = home / kind
    else:
        getter: Callable[..., Path] = _PLATFORM_DIRS[kind]
        path = getter(APP_NAME, appauthor=False)
    _ensure_private_dir(path)
    return path


def _ensure_private_dir(path: Path) -> None:
    """``path`` exists as a writable folder; any folder made on the way is PRIVATE_DIR_MODE.

    ProfileUnavailable (with what is wrong) otherwise.
    """
    if path.exists() and not path.is_dir():
        raise ProfileUnavailable(path, "it is a file, not a folder")
    missing = [p for p in (path, *path.parents) if not p.exists()]
    try:
        for folder in reversed(missing):  # outermost first
            with contextlib.suppress(FileExistsError):  # another process made it meanwhile
                folder.mkdir(mode=PRIVATE_DIR_MODE)
                os.chmod(folder, PRIVATE_DIR_MODE)  # the umask may have taken bits away
    except OSError as error:
        raise ProfileUnavailable(path, _refusal(error)) from error
    if not path.is_dir():
        raise ProfileUnavailable(path, "it is not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ProfileUnavailable(path, f"it can't be written: {_unwritable(path)}")


def _unwritable(folder: Path) -> str:
    """Why a folder that access() refuses can't be written: its mount, else the permissions."""
    try:
        mounted_read_only = hasattr(os, "statvfs") and bool(
            os.statvfs(folder).f_flag & os.ST_RDONLY
        )
    except OSError:
        mounted_read_only = False
    return _REFUSALS[errno.EROFS if mounted_read_only else errno.EACCES]


def _refusal(error: OSError) -> str:
    if isinstance(error, NotADirectoryError | FileExistsError):
        return "a file is in the way where a folder should be"
    cause = storage_refusal(error)
    if cause is not None:
        return f"it or a folder above it can't be written: {cause}"
    return f"it could not be created ({error.strerror or type(error).__name__})"


def private_file(path: Path) -> Path:
    """Create ``path`` empty with PRIVATE_FILE_MODE if it is missing (an existing file is left
    as it is); for files opened by libraries that would otherwise use the umask (SQLite, the
    log handler). Returns ``path``."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
        os.close(fd)
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
    rename itself is durable (POSIX only; Windows cannot open a directory). The file is
    PRIVATE_FILE_MODE (mkstemp's), and a folder made for it PRIVATE_DIR_MODE.
    """
    _ensure_private_dir(path.parent)
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

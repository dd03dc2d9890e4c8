"""The profile folders: private modes, and a plain ProfileUnavailable when one can't be used."""

from __future__ import annotations

import errno
import logging
import logging.handlers
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat import paths
from flarechat.core.catalogue import CatalogueCache
from flarechat.core.store import ChatStore, default_path, open_store
from flarechat.logsetup import configure_file_logging
from flarechat.paths import ProfileUnavailable, cache_dir, config_dir, data_dir, log_dir


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """A umask that lets everyone read (022, the common default): what we make must not."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.usefixtures("loose_umask")
def test_profile_folders_we_create_are_private(isolated_profile: Path) -> None:
    home = isolated_profile / "new" / "home"
    os.environ[paths.HOME_ENV] = str(home)  # the isolated_profile fixture restores it
    for getter in (config_dir, data_dir, log_dir, cache_dir):
        assert mode(getter()) == paths.PRIVATE_DIR_MODE
    assert mode(home) == mode(home.parent) == paths.PRIVATE_DIR_MODE


@pytest.mark.usefixtures("loose_umask")
def test_database_and_its_wal_and_shm_are_private() -> None:
    path = default_path()
    with open_store(path) as store:
        store.create_conversation()
        side = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
        assert all(p.exists() for p in side)
        assert [mode(p) for p in (path, *side)] == [paths.PRIVATE_FILE_MODE] * 3


@pytest.mark.usefixtures("loose_umask")
def test_migration_backup_is_private(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE legacy (x)")  # not blank: migrating it takes a backup first
    conn.close()
    with ChatStore(path) as store:
        backup = store.report.migration.backup if store.report.migration else None
    assert backup is not None
    assert mode(backup) == paths.PRIVATE_FILE_MODE


@pytest.mark.usefixtures("loose_umask")
def test_log_file_and_its_rollovers_are_private() -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    path = configure_file_logging()
    try:
        logging.getLogger("flarechat.test").warning("hello")
        handler = next(h for h in root.handlers if h not in before)
        assert isinstance(handler, logging.handlers.RotatingFileHandler)
        handler.doRollover()
        logging.getLogger("flarechat.test").warning("after rollover")
    finally:
        for handler in root.handlers[:]:
            if handler not in before:
                root.removeHandler(handler)
                handler.close()
    assert mode(path) == paths.PRIVATE_FILE_MODE
    assert mode(path.with_name(path.name + ".1")) == paths.PRIVATE_FILE_MODE


@pytest.mark.usefixtures("loose_umask")
def test_catalogue_cache_is_private() -> None:
    cache = CatalogueCache()
    cache.save([])
    assert mode(cache.path) == paths.PRIVATE_FILE_MODE
    assert mode(cache.path.parent) == paths.PRIVATE_DIR_MODE


def test_home_that_is_a_file_is_a_plain_profile_error(
    isolated_profile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_profile / "not-a-folder"
    home.write_text("oops", encoding="utf-8")
    monkeypatch.setenv(paths.HOME_ENV, str(home))
    for getter in (config_dir, data_dir, log_dir, cache_dir):
        with pytest.raises(ProfileUnavailable, match="names a file, not a folder") as caught:
            getter()
        assert caught.value.path == home
        assert str(home) in str(caught.value)


def test_read_only_home_is_a_plain_profile_error(
    isolated_profile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A home in a read-only folder: creating ``config`` there is refused.

    Tests run as root, which chmod 0555 does not stop, so the refusal a normal user gets
    (mkdir -> EACCES) is injected at ``Path.mkdir``; the chmod keeps the test honest when run
    unprivileged.
    """
    home = isolated_profile / "locked"
    home.mkdir()
    home.chmod(0o555)

    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    monkeypatch.setenv(paths.HOME_ENV, str(home))
    try:
        with pytest.raises(ProfileUnavailable, match="permission denied") as caught:
            config_dir()
        assert caught.value.path == home / "config"
        assert "Traceback" not in str(caught.value)
    finally:
        home.chmod(0o700)


def test_existing_folder_that_cannot_be_written_is_a_plain_profile_error(
    isolated_profile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``config`` exists with mode 555; root would be let through, so os.access is asked as
    for a normal user. On a writable disk that is a permission, never "read-only" (the real
    read-only mount and the real refusal without root's override: the fault suite's
    test_a_profile_the_disk_refuses_is_refused_naming_the_real_cause)."""
    (isolated_profile / "config").mkdir()
    (isolated_profile / "config").chmod(0o555)
    monkeypatch.setattr(os, "access", lambda path, flags: False)
    try:
        with pytest.raises(ProfileUnavailable, match="can't be written: permission denied"):
            config_dir()
    finally:
        (isolated_profile / "config").chmod(0o700)


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EDQUOT, "the disk quota is used up"),
        (errno.EROFS, "the disk or folder is mounted read-only"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "permission denied"),
        (errno.EIO, None),
        (errno.ENOENT, None),
    ],
)
def test_one_function_names_why_a_disk_refused_a_write(code: int, cause: str | None) -> None:
    error = OSError(code, os.strerror(code), "/some/file")
    assert paths.storage_refusal(error) == cause
    said = paths.profile_problem(error)
    assert (cause or os.strerror(code)) in said
    if code != errno.EROFS:
        assert "read-only" not in said  # a full disk, a quota or a permission is not that

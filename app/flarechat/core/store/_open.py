"""open_store: open the chat database, moving a corrupt file aside instead of overwriting it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from flarechat.core.store._chat import INDEX_REBUILT, ChatStore, is_search_index_problem
from flarechat.core.store._errors import (
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreUnavailable,
)
from flarechat.paths import free_sibling, storage_refusal

__all__ = ["open_store"]

#: Files SQLite keeps next to a database; they belong to it and move with it.
_SIDE_FILES = ("-wal", "-shm", "-journal")
#: Side files SQLite deletes when the last connection closes cleanly: found before opening,
#: the last session was killed, crashed or lost power (or another instance has it open now).
_LEFT_BY_UNCLEAN_CLOSE = ("-wal", "-journal")
#: Every SQLite 3 database file starts with these bytes.
_SQLITE_MAGIC = b"SQLite format 3\x00"
_NOT_A_DATABASE = "file is not a database"
#: How many integrity problems are quoted in the report (the full list can be long).
_PROBLEMS_QUOTED = 3


def _looks_like_sqlite(path: Path) -> bool:
    """False for a non-empty file without the SQLite header.

    Checked before SQLite opens the file: on closing a connection to such a file SQLite
    deletes its -wal, which must move aside with it untouched.
    """
    if path.is_dir():
        raise StoreUnavailable(path, "it is a folder, not a file; move or rename that folder")
    try:
        with path.open("rb") as file:
            head = file.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return True
    except OSError as error:
        raise StoreUnavailable(path, f"it could not be read ({_os_reason(error)})") from error
    return head in (b"", _SQLITE_MAGIC)


def _os_reason(error: OSError) -> str:
    return storage_refusal(error) or error.strerror or type(error).__name__


def _closed_uncleanly(path: Path) -> bool:
    """Whether SQLite's own side files say the database was not closed cleanly last time."""
    return any(path.with_name(path.name + suffix).exists() for suffix in _LEFT_BY_UNCLEAN_CLOSE)


def _open_checked(path: Path, *, clock: Callable[[], float], read_only: bool) -> ChatStore:
    """Open (migrating if needed) and insist that the integrity check passes.

    After a clean close the check is ``PRAGMA quick_check`` (damaged pages and records: what a
    disk or another program does to a file at rest) -- a fifth of the full checks' time on a
    large history, paid on every start. After an unclean close (see _closed_uncleanly) it is the
    full integrity_check plus the search indexes' checks, which also find an index that no
    longer matches its table, the damage an interrupted write may leave.

    A file that cannot be written (permissions, read-only folder or mount, full disk) opens
    read-only with ``report.read_only_reason`` set: never taken for damage, never fatal.
    """
    if not _looks_like_sqlite(path):
        raise StoreCorrupt(path, _NOT_A_DATABASE)
    quick = not _closed_uncleanly(path)  # looked at before SQLite opens (and recovers) it
    try:
        store = ChatStore(path, clock=clock, read_only=read_only)
    except (StoreReadOnly, StoreFull) as refused:
        if read_only:
            raise
        # A write-protected file at the current schema can still be read: show the history.
        store = _read_only_after(refused, path, clock=clock, closed_cleanly=quick)
        store.was_refused(refused)
    try:
        problems = _checked_problems(store, quick=quick)
    except (StoreReadOnly, StoreFull) as refused:
        # The integrity check or the index rebuild had to write and the file said no.
        store.enter_read_only(refused)
        problems = _checked_problems(store, quick=quick)
    except StoreError:
        store.close()
        raise
    if problems:
        store.close()
        raise StoreCorrupt(path, "; ".join(problems[:_PROBLEMS_QUOTED]))
    return store


def _read_only_after(
    refused: StoreReadOnly | StoreFull,
    path: Path,
    *,
    clock: Callable[[], float],
    closed_cleanly: bool,
) -> ChatStore:
    """The history, read-only, of a file that refused to be written (``refused`` says why).

    On a full disk SQLite cannot make the -shm it needs even to read: a file closed cleanly
    (its last changes are in the file itself) is then read as it stands. A file that cannot be
    read either (new, or at an older schema: it must be written first) raises ``refused``, so
    a full disk is never called "read-only".
    """
    try:
        return ChatStore(path, clock=clock, read_only=True)
    except (StoreReadOnly, StoreFull) as also:
        if not (isinstance(refused, StoreFull) and closed_cleanly and path.stat().st_size):
            raise refused from also
    try:
        return ChatStore(path, clock=clock, immutable=True)
    except (StoreReadOnly, StoreFull) as also:
        raise refused from also


def _checked_problems(store: ChatStore, *, quick: bool) -> list[str]:
    """The integrity check, after rebuilding a damaged search index (the text is fine then)."""
    try:
        problems = store.check_integrity(quick=quick)
        if problems and not store.read_only and all(map(is_search_index_problem, problems)):
            store.rebuild_search_index()  # no reason to move the file
            store.report.problems.append(INDEX_REBUILT)
            problems = store.check_integrity()
    except StoreError:
        if store.read_only:
            store.close()
        raise
    return problems


def _move_aside(path: Path, *, now: float) -> Path:
    """Rename the database (and its -wal/-shm) to ``<name>.corrupt-<timestamp>``."""
    target = free_sibling(path, "corrupt", now=now)
    path.rename(target)
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target


def open_store(
    path: Path, *, clock: Callable[[], float] = time.time, read_only: bool = False
) -> ChatStore:
    """Open the store for the app: check it, recover from damage, mark crashed replies.

    A damaged file is never overwritten: it is moved aside, a fresh database is started and
    ``store.report`` says where the old one went. A database that cannot be written (file or
    folder permissions, a read-only mount, a full disk) opens read-only: ``store.read_only`` and
    ``report.read_only`` are set and ``report.read_only_reason`` is a sentence for the UI
    ("changes won't be saved"). ``read_only=True`` asks for that (e.g. to look at a backup).
    Other StoreErrors (newer schema, busy, I/O) reach the caller.
    """
    try:
        store = _open_checked(path, clock=clock, read_only=read_only)
    except StoreCorrupt as error:
        if read_only:
            raise  # moving files is a write too
        moved = _move_aside(path, now=clock())
        store = ChatStore(path, clock=clock)
        store.report.moved_aside = moved
        store.report.corrupt_detail = error.detail
        store.report.problems.append(
            f"{error} It was moved to {moved} and a new, empty database was started."
        )
    if not store.read_only:
        try:
            store.report.interrupted = store.mark_unfinished_as_interrupted()
        except (StoreReadOnly, StoreFull) as refused:
            store.enter_read_only(refused)
    if store.read_only:
        store.report.problems.append(store.report.read_only_reason or str(StoreReadOnly(path)))
    return store

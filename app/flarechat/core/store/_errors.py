"""The chat store's exceptions, with plain-English messages, and the sqlite3 error translation.

StoreError
 ├── StoreReadOnly         the file or its folder cannot be written (SQLITE_READONLY)
 ├── StoreFull             the disk (or the size cap) is full (SQLITE_FULL)
 ├── StoreCorrupt          not a database, or integrity_check fails (SQLITE_CORRUPT/NOTADB)
 ├── StoreSearchIndexDamaged  only the search index is, and a read-only store can't rebuild it
 ├── StoreBusy             another instance held the write lock past the busy timeout
 ├── StoreTooNew           written by a newer Flarechat (schema version above ours)
 ├── StoreTimeout          the worker thread did not answer in time (AsyncChatStore)
 ├── StoreUnavailable      the database path cannot be a database (a folder, unreadable)
 └── NotFound              no such conversation or message (also: a parent that is gone)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from flarechat.paths import disk_full

__all__ = [
    "NotFound",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreReadOnly",
    "StoreSearchIndexDamaged",
    "StoreTimeout",
    "StoreTooNew",
    "StoreUnavailable",
    "translate",
]

# SQLite primary result codes (the low byte of an extended code).
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6
_SQLITE_READONLY = 8
_SQLITE_IOERR = 10
_SQLITE_CORRUPT = 11
_SQLITE_FULL = 13
_SQLITE_CANTOPEN = 14
_SQLITE_NOTADB = 26
_PRIMARY_CODE_MASK = 0xFF


class StoreError(Exception):
    """The chat database failed; ``str(error)`` is a sentence fit for a banner."""


class StoreReadOnly(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"The database is read-only, so new messages can't be saved. Check that {path} and "
            "its folder can be written. What is on screen stays available."
        )


class StoreFull(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"The disk is full, so new messages can't be saved to {path}. Free some space and "
            "try again. What is on screen stays available."
        )


class StoreCorrupt(StoreError):
    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"The chat database {path} is damaged ({detail}).")
        self.detail = detail


class StoreSearchIndexDamaged(StoreError):
    """Not a StoreCorrupt: the text is sound, so nothing may move the file aside for this."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"The search index of the chat database {path} is damaged and can't be rebuilt "
            "while the database is read-only, so search can't be used. No message was lost: "
            "the index is rebuilt at the first search once the database can be written."
        )


class StoreBusy(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"The chat database {path} stayed locked by another Flarechat window. "
            "Try again in a moment."
        )


class StoreTooNew(StoreError):
    def __init__(self, path: Path, *, found: int, supported: int) -> None:
        super().__init__(
            f"The chat database {path} was written by a newer Flarechat (schema {found}; this "
            f"version knows up to {supported}). Update Flarechat to open it; nothing was changed."
        )


class StoreTimeout(StoreError):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"The chat database did not answer within {seconds:g} seconds.")


class StoreUnavailable(StoreError):
    """The database path cannot hold a database at all; ``problem`` says what is wrong."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"The chat database {path} can't be opened: {problem}.")
        self.path = path
        self.problem = problem


class Unstorable(StoreError):
    """This one record holds a value SQLite cannot (the database itself is fine): retrying
    it cannot help, and it must not hold up the records after it."""


class NotFound(StoreError):
    """No conversation or message with that id."""


def _primary_code(error: sqlite3.Error) -> int | None:
    code = getattr(error, "sqlite_errorcode", None)
    return code & _PRIMARY_CODE_MASK if isinstance(code, int) else None


def translate(error: sqlite3.Error, path: Path) -> StoreError:
    """The StoreError for a sqlite3 error (raise it ``from error``)."""
    code = _primary_code(error)
    text = str(error)
    if isinstance(error, sqlite3.IntegrityError):
        return _integrity(text, path)
    if code == _SQLITE_READONLY or "readonly database" in text:
        return StoreReadOnly(path)
    if code == _SQLITE_FULL or "database or disk is full" in text:
        return StoreFull(path)
    if code == _SQLITE_IOERR and disk_full(path):
        # SQLite says only "disk I/O error" when it cannot grow its -shm or -wal for want of
        # room (SQLITE_IOERR_SHMSIZE, _WRITE): a full disk, not a broken one.
        return StoreFull(path)
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or "malformed" in text:
        return StoreCorrupt(path, text)
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StoreBusy(path)
    if code == _SQLITE_CANTOPEN or "unable to open database file" in text:
        return StoreUnavailable(path, _cannot_open_reason(path))
    return StoreError(f"The chat database {path} failed: {text}.")


def _integrity(text: str, path: Path) -> StoreError:
    """A constraint refused a write: nothing was changed (the transaction is rolled back)."""
    if "FOREIGN KEY" in text:
        return NotFound(
            "This was not saved: the conversation or message it belongs to is no longer in "
            "the chat database (it may have been deleted)."
        )
    if "UNIQUE" in text:
        return StoreError(f"This was not saved: it is already in the chat database {path}.")
    return StoreError(f"The chat database {path} refused a change ({text}); nothing was saved.")


def _cannot_open_reason(path: Path) -> str:
    if path.is_dir():
        return "it is a folder, not a file; move or rename that folder"
    return "the file or its folder could not be opened; check that both exist and can be read"

"""The chat store: conversations and messages in SQLite — the public face of core.store._*.

``ChatStore`` is the synchronous store (one connection, one worker thread); ``AsyncChatStore``
is what the GUI uses; ``open_store`` opens the app's database, recovering from damage.
"""

from __future__ import annotations

from pathlib import Path

from flarechat.core.store._async import BULK_TIMEOUT, DEFAULT_TIMEOUT, AsyncChatStore
from flarechat.core.store._chat import BUSY_TIMEOUT_MS, ChatStore
from flarechat.core.store._errors import (
    NotFound,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreSearchIndexDamaged,
    StoreTimeout,
    StoreTooNew,
    StoreUnavailable,
    Unstorable,
)
from flarechat.core.store._experiments import BatchRecord, ExperimentStore, RunRecord
from flarechat.core.store._open import open_store
from flarechat.core.store._schema import SCHEMA_VERSION, MigrationResult
from flarechat.core.store._search import HIGHLIGHT_END, HIGHLIGHT_START, SearchHit
from flarechat.core.store._types import UNSET, ConversationSummary, OpenReport, Revision, Unset
from flarechat.core.store._usage import utc_day_start
from flarechat.paths import data_dir

__all__ = [
    "BULK_TIMEOUT",
    "BUSY_TIMEOUT_MS",
    "DB_FILENAME",
    "DEFAULT_TIMEOUT",
    "HIGHLIGHT_END",
    "HIGHLIGHT_START",
    "SCHEMA_VERSION",
    "STREAM_SAVE_INTERVAL",
    "UNDO_PURGE_AGE",
    "UNSET",
    "AsyncChatStore",
    "BatchRecord",
    "ChatStore",
    "ConversationSummary",
    "ExperimentStore",
    "MigrationResult",
    "NotFound",
    "OpenReport",
    "Revision",
    "RunRecord",
    "SearchHit",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreReadOnly",
    "StoreSearchIndexDamaged",
    "StoreTimeout",
    "StoreTooNew",
    "StoreUnavailable",
    "Unset",
    "Unstorable",
    "default_path",
    "open_store",
    "utc_day_start",
]

DB_FILENAME = "flarechat.sqlite3"
#: Seconds between saves of a streaming reply (a crash loses at most this much of it).
STREAM_SAVE_INTERVAL = 0.5
#: Deleted conversations are kept this long (seconds) before purge_deleted removes them.
UNDO_PURGE_AGE = 30 * 24 * 60 * 60.0


def default_path() -> Path:
    """The app's database: ``data_dir()/flarechat.sqlite3`` (FLARECHAT_HOME aware)."""
    return data_dir() / DB_FILENAME

"""The chat database schema as numbered migrations, and the backup taken before running any.

``MIGRATIONS[n]`` takes a database from ``PRAGMA user_version`` n to n + 1, inside one transaction
that also sets the new version. Adding a version is one function appended to ``MIGRATIONS`` (and a
frozen fixture of the version before it in the tests). v2 added tool calls, images (the
``attachments`` table) and remembered licence agreements; v3 the experiment tables.

Search uses two FTS5 tables with *external content* (the text lives once, in ``messages`` and
``conversations``), kept in step by triggers. Both content tables have an ``INTEGER PRIMARY KEY``
(``seq``) because FTS5 addresses rows by rowid and VACUUM may renumber implicit rowids.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from flarechat.paths import free_sibling, private_file

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "MigrationResult", "backup", "migrate"]

Migration = Callable[[sqlite3.Connection], None]

_V1_STATEMENTS = (
    """CREATE TABLE conversations (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        deleted_at REAL,
        model TEXT,
        system_prompt TEXT NOT NULL DEFAULT '',
        params_json TEXT NOT NULL DEFAULT '{}',
        selected_json TEXT NOT NULL DEFAULT '{}'
    )""",
    """CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        parent_id TEXT REFERENCES messages(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        reasoning TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        model TEXT,
        finish_reason TEXT,
        request_json TEXT,
        usage_json TEXT,
        meta_json TEXT,
        timings_json TEXT,
        error_json TEXT
    )""",
    "CREATE INDEX messages_by_conversation ON messages(conversation_id, seq)",
    "CREATE INDEX messages_by_parent ON messages(parent_id)",
    "CREATE INDEX messages_by_status ON messages(status)",
    "CREATE INDEX conversations_listing ON conversations(deleted_at, pinned, updated_at)",
    """CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content='messages', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
    END""",
    """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            VALUES ('delete', old.seq, old.content);
    END""",
    """CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts(messages_fts, rowid, content)
            VALUES ('delete', old.seq, old.content);
        INSERT INTO messages_fts(rowid, content) VALUES (new.seq, new.content);
    END""",
    """CREATE VIRTUAL TABLE titles_fts USING fts5(
        title, content='conversations', content_rowid='seq',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER titles_fts_insert AFTER INSERT ON conversations BEGIN
        INSERT INTO titles_fts(rowid, title) VALUES (new.seq, new.title);
    END""",
    """CREATE TRIGGER titles_fts_delete AFTER DELETE ON conversations BEGIN
        INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', old.seq, old.title);
    END""",
    """CREATE TRIGGER titles_fts_update AFTER UPDATE OF title ON conversations BEGIN
        INSERT INTO titles_fts(titles_fts, rowid, title) VALUES ('delete', old.seq, old.title);
        INSERT INTO titles_fts(rowid, title) VALUES (new.seq, new.title);
    END""",
)


def _v0_to_v1(conn: sqlite3.Connection) -> None:
    """The first real schema: conversations, messages, full-text search."""
    for statement in _V1_STATEMENTS:
        conn.execute(statement)


_V2_STATEMENTS = (
    # A reply's tool calls ([{id, name, arguments}] as JSON) and a tool result's call id.
    "ALTER TABLE messages ADD COLUMN tool_calls_json TEXT",
    "ALTER TABLE messages ADD COLUMN tool_call_id TEXT",
    # Images live in their own table: loading a conversation's text never reads megabytes it
    # does not show, and search (messages_fts) finds them through their message's words.
    """CREATE TABLE attachments (
        seq INTEGER PRIMARY KEY,
        message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        mime_type TEXT NOT NULL,
        name TEXT NOT NULL DEFAULT '',
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        data BLOB NOT NULL,
        UNIQUE (message_id, position)
    )""",
    # Model licences the user agreed to (5016), per account: the app never asks twice.
    """CREATE TABLE terms_agreements (
        account_id TEXT NOT NULL,
        model TEXT NOT NULL,
        agreed_at REAL NOT NULL,
        PRIMARY KEY (account_id, model)
    )""",
)


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Images, tool calls and tool results, and remembered licence agreements."""
    for statement in _V2_STATEMENTS:
        conn.execute(statement)


_V3_STATEMENTS = (
    # Experiments (issue 24): each run of an experiment file, with the spec it ran.
    """CREATE TABLE experiment_runs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        spec_json TEXT NOT NULL,
        mode TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        note TEXT NOT NULL DEFAULT '',
        summary_json TEXT
    )""",
    # Every finished cell (a reply, a judge's grade, a pair of embeddings) by the hash of the
    # request that made it: a resumed run or a later one re-sends none of them.
    """CREATE TABLE experiment_cells (
        key TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        model TEXT NOT NULL,
        result_json TEXT NOT NULL,
        created_at REAL NOT NULL
    )""",
    "CREATE INDEX experiment_cells_by_run ON experiment_cells(run_id)",
    # Batches queued on Workers AI's Batch API and not yet collected: polling survives a quit.
    """CREATE TABLE experiment_batches (
        request_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        model TEXT NOT NULL,
        keys_json TEXT NOT NULL,
        status TEXT NOT NULL,
        submitted_at REAL NOT NULL,
        error TEXT
    )""",
    "CREATE INDEX experiment_batches_by_status ON experiment_batches(status)",
)


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Experiments: runs, finished cells by request hash, and pending batches."""
    for statement in _V3_STATEMENTS:
        conn.execute(statement)


MIGRATIONS: tuple[Migration, ...] = (_v0_to_v1, _v1_to_v2, _v2_to_v3)
SCHEMA_VERSION = len(MIGRATIONS)


@dataclass(frozen=True, slots=True)
class MigrationResult:
    from_version: int
    to_version: int
    backup: Path | None  # the copy taken before migrating, None when nothing needed saving


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _is_blank(conn: sqlite3.Connection) -> bool:
    """A brand-new database (no tables, version 0): there is nothing a backup could save."""
    row = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return int(row[0]) == 0 and user_version(conn) == 0


def backup(conn: sqlite3.Connection, path: Path, *, version: int, now: float) -> Path:
    """Copy the live database (WAL included) to ``<name>.bak-v<N>-<timestamp>`` via SQLite."""
    target = free_sibling(path, f"bak-v{version}", now=now)
    copy = sqlite3.connect(private_file(target))  # as private as the database itself
    try:
        conn.backup(copy)
    finally:
        copy.close()
    return target


def migrate(
    conn: sqlite3.Connection,
    path: Path,
    *,
    now: float,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> MigrationResult:
    """Bring the database to ``len(migrations)``; back it up first if any step will run.

    The caller has checked the version is not newer than ``len(migrations)``. ``conn`` must be in
    autocommit mode (``isolation_level=None``) so each step is exactly one explicit transaction.
    """
    start = user_version(conn)
    target = len(migrations)
    saved = None
    if start < target and not _is_blank(conn):
        saved = backup(conn, path, version=start, now=now)
    for version in range(start, target):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if user_version(conn) == version:  # another instance may have migrated meanwhile
                migrations[version](conn)
                conn.execute(f"PRAGMA user_version = {version + 1:d}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return MigrationResult(from_version=start, to_version=max(start, target), backup=saved)

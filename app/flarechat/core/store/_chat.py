"""ChatStore: the synchronous SQLite store of conversations and messages (one connection)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import itertools
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from flarechat.core import ledger
from flarechat.core.conversation import (
    STATUS_INTERRUPTED,
    STATUS_STREAMING,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.ledger import LedgerRow
from flarechat.core.store import _codec as codec
from flarechat.core.store._errors import (
    NotFound,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreSearchIndexDamaged,
    StoreTooNew,
    Unstorable,
    translate,
)
from flarechat.core.store._schema import (
    MIGRATIONS,
    Migration,
    migrate,
    user_version,
)
from flarechat.core.store._search import SearchHit, search
from flarechat.core.store._selection import explicit_selection, selection_after_add
from flarechat.core.store._types import UNSET, ConversationSummary, OpenReport, Revision, Unset
from flarechat.core.store._usage import replies_since, utc_day_start
from flarechat.paths import private_file

__all__ = [
    "BUSY_TIMEOUT_MS",
    "INDEX_REBUILT",
    "SEARCH_INDEXES",
    "ChatStore",
    "is_search_index_problem",
]

log = logging.getLogger(__name__)

#: How long a write waits for another instance's write lock before StoreBusy.
BUSY_TIMEOUT_MS = 5000
_MS_PER_SECOND = 1000
_OK = "ok"
_SECONDS_PER_DAY = 24 * 60 * 60
#: The FTS5 tables (external content: rebuildable from messages / conversations).
SEARCH_INDEXES = ("messages_fts", "titles_fts")
_FTS5_PROBLEM = re.compile(r"FTS5 table \w+\.(?:" + "|".join(SEARCH_INDEXES) + r")\b")
#: Said (in the report) once a damaged search index was rebuilt from the stored text.
INDEX_REBUILT = "The search index was damaged and has been rebuilt; no message was lost."

#: Numbers each ChatStore object, so revisions of a reopened store never match older ones.
_STORE_NUMBERS = itertools.count(1)

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _translated(
    method: Callable[Concatenate[ChatStore, _P], _T],
) -> Callable[Concatenate[ChatStore, _P], _T]:
    """Serialise access to the connection and turn sqlite3 errors into StoreErrors.

    A call that fails because the search index is damaged (and nothing else is) rebuilds the
    index and runs once more: every call, a search or a write that updates the index.
    """

    @functools.wraps(method)
    def wrapper(self: ChatStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        with self._lock:
            try:
                return _translating(method, self, *args, **kwargs)
            except StoreCorrupt as damage:
                if not self._rebuilt_damaged_index(damage):
                    raise
            return _translating(method, self, *args, **kwargs)  # on the rebuilt index

    return wrapper


def _translating(
    method: Callable[Concatenate[ChatStore, _P], _T],
    store: ChatStore,
    /,
    *args: _P.args,
    **kwargs: _P.kwargs,
) -> _T:
    try:
        return method(store, *args, **kwargs)
    except sqlite3.Error as error:
        refused = translate(error, store.path)
        if isinstance(refused, StoreReadOnly) and store.write_refusal is not StoreReadOnly:
            refused = store.write_refusal(store.path)  # read-only because the disk is full
        raise refused from error
    except (OverflowError, RecursionError, TypeError, ValueError) as error:
        # A value SQLite or JSON cannot hold: still a StoreError, never a silent loss.
        raise Unstorable(
            f"The chat database {store.path} could not store this ({error}); nothing was saved."
        ) from error


def is_search_index_problem(problem: str) -> bool:
    """Whether an integrity problem is a search index's (rebuildable from the text) only.

    check_integrity names the index first; SQLite 3.44 and later also check FTS5 tables in
    ``PRAGMA integrity_check`` ("malformed inverted index for FTS5 table main.messages_fts").
    """
    return problem.startswith(tuple(f"{table}:" for table in SEARCH_INDEXES)) or bool(
        _FTS5_PROBLEM.search(problem)
    )


def _index_unreadable(path: Path) -> bool:
    """Read every entry of each search index (an ``fts5vocab`` scan) on a read-only connection
    of its own: True when that fails as damage does. For a store that cannot write, where the
    FTS5 integrity check (an INSERT) cannot run; what it creates is in its own TEMP schema."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        for table in SEARCH_INDEXES:
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.{table}_entries USING fts5vocab(main, {table}, "
                "'instance')"
            )
            try:
                conn.execute(f"SELECT count(*) FROM temp.{table}_entries").fetchall()
            except sqlite3.DatabaseError as error:
                if isinstance(translate(error, path), StoreCorrupt):
                    return True
                raise
        return False
    finally:
        conn.close()


class ChatStore:
    """Conversations and messages in one SQLite file (WAL; every write one transaction).

    Synchronous and meant to live on ONE worker thread (see AsyncChatStore); calls are also
    serialised by a lock, so a store built on one thread may be handed to another.
    ``max_page_count`` caps the file size (tests use it to simulate a full disk).
    ``immutable`` (with ``read_only``) reads the file as it stands, without the -shm SQLite
    otherwise needs even to read (a full disk cannot hold one): only for a file that was
    closed cleanly (no -wal) and that nothing else can write meanwhile.
    """

    def __init__(
        self,
        path: Path,
        *,
        read_only: bool = False,
        immutable: bool = False,
        clock: Callable[[], float] = time.time,
        migrations: Sequence[Migration] = MIGRATIONS,
        max_page_count: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only or immutable
        self._immutable = immutable
        #: what a refused write raises (see was_refused)
        self.write_refusal: type[StoreReadOnly] | type[StoreFull] = StoreReadOnly
        self._clock = clock
        self._lock = threading.RLock()
        self._secrets: tuple[str, ...] = ()
        self._number = next(_STORE_NUMBERS)
        #: Writes through this store per conversation, and to all of them at once.
        self._writes: dict[str, int] = {}
        self._writes_to_all = 0
        #: set while a damaged search index is looked at and rebuilt (no second repair inside)
        self._repairing = False
        self.report = OpenReport(path=self.path, read_only=self.read_only)
        self._conn = self._connect()
        try:
            self._prepare(migrations, max_page_count)
        except sqlite3.Error as error:
            self._conn.close()
            raise translate(error, self.path) from error
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        query = "?mode=ro&immutable=1" if self._immutable else "?mode=ro"
        target = f"{self.path.resolve().as_uri()}{query}" if self.read_only else str(self.path)
        if not self.read_only:  # SQLite gives the -wal and -shm the database's mode
            with contextlib.suppress(OSError):  # SQLite's own open below says what is wrong
                private_file(self.path)
        try:
            conn = sqlite3.connect(
                target,
                uri=self.read_only,
                isolation_level=None,  # autocommit: transactions are explicit (see _write)
                check_same_thread=False,  # confinement is AsyncChatStore's job; see class doc
                timeout=BUSY_TIMEOUT_MS / _MS_PER_SECOND,
            )
        except sqlite3.Error as error:
            raise translate(error, self.path) from error
        conn.row_factory = sqlite3.Row
        return conn

    def _prepare(self, migrations: Sequence[Migration], max_page_count: int | None) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS:d}")
        conn.execute("PRAGMA foreign_keys = ON")
        if max_page_count is not None:
            conn.execute(f"PRAGMA max_page_count = {max_page_count:d}")
        found = user_version(conn)  # the first read: raises "not a database" on garbage
        if found > len(migrations):
            raise StoreTooNew(self.path, found=found, supported=len(migrations))
        if self.read_only:
            if found < len(migrations):
                raise StoreReadOnly(self.path)
            return
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        result = migrate(conn, self.path, now=self._clock(), migrations=migrations)
        if result.from_version != result.to_version:
            self.report.migration = result

    # -- plumbing -------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; BEGIN IMMEDIATE takes the lock up front (busy_timeout waits)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:  # COMMIT itself may fail (disk full, I/O error)
                self._conn.execute("ROLLBACK")
            raise

    @contextmanager
    def locked_write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction for the store's sibling tables (experiments), under the lock,
        with sqlite3 errors turned into StoreErrors as every other write's are."""
        with self._lock:
            try:
                with self._write() as conn:
                    yield conn
            except sqlite3.Error as error:
                raise translate(error, self.path) from error

    def locked_read(self, query: str, args: Sequence[object] = ()) -> list[sqlite3.Row]:
        """Every row of one query, under the lock (for the store's sibling tables)."""
        with self._lock:
            try:
                return list(self._conn.execute(query, tuple(args)))
            except sqlite3.Error as error:
                raise translate(error, self.path) from error

    def remember_secrets(self, secrets: Iterable[str | None]) -> None:
        """Never write these (the API and gateway tokens) into a record, in any encoding.

        Records (request, usage, meta, timings, error, params) pass through
        ``flarechat.api.redact`` on every write; bearer- and Cloudflare-token-shaped text is
        removed even before this is called. Call it whenever the app learns a token.
        """
        with self._lock:
            self._secrets = tuple(sorted({*self._secrets, *(s for s in secrets if s)}))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ChatStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @_translated
    def check_integrity(self, *, quick: bool = False) -> list[str]:
        """``PRAGMA integrity_check`` plus the search indexes' checks; empty when all is well.

        Search index problems start with the index's name (see SEARCH_INDEXES) and can be
        repaired with rebuild_search_index(); any other problem means a damaged file.
        ``quick``: ``PRAGMA quick_check`` alone (pages, records, constraints; not whether
        indexes match their tables, nor the search indexes) in a fraction of the time.
        """
        pragma = "quick_check" if quick else "integrity_check"
        rows = [str(row[0]) for row in self._conn.execute(f"PRAGMA {pragma}")]
        problems = [] if rows == [_OK] else rows
        if quick:
            return problems
        if not self.read_only and user_version(self._conn) >= 1:
            for table in SEARCH_INDEXES:
                try:  # rank 1: also compare the index with the text it indexes
                    self._conn.execute(
                        f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)"
                    )
                except sqlite3.DatabaseError as error:
                    refused = translate(error, self.path)
                    if isinstance(refused, StoreReadOnly | StoreFull | StoreBusy):
                        raise refused from error  # the check could not run: not damage
                    problems.append(f"{table}: {error}")
        return problems

    @_translated
    def enter_read_only(self, refused: StoreReadOnly | StoreFull) -> None:
        """From now on refuse every write (``PRAGMA query_only``); ``refused`` says why.

        For a file that turned out not to be writable (permissions, a full disk): reading goes
        on, and each write raises ``refused``'s kind of error instead of half-trying.
        """
        self._conn.execute("PRAGMA query_only = ON")
        self.read_only = True
        self.was_refused(refused)

    def was_refused(self, refused: StoreReadOnly | StoreFull) -> None:
        """This store is read-only because writing was ``refused``: the report says why, and
        each write refused from now on raises the same kind of error (a full disk is not
        "read-only")."""
        self.report.read_only = True
        self.report.read_only_reason = str(refused)
        self.write_refusal = type(refused)

    @_translated
    def rebuild_search_index(self) -> None:
        """Rebuild the full-text indexes from the stored text (one transaction)."""
        with self._write() as conn:
            for table in SEARCH_INDEXES:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")

    def _rebuilt_damaged_index(self, damage: StoreCorrupt) -> bool:
        """After ``damage``: True when only the search index was damaged and it is rebuilt (run
        the call again); False when the damage is elsewhere (or this is the repair's own call).

        Raises StoreSearchIndexDamaged when the index is damaged but the store cannot write.
        """
        if self._repairing:
            return False
        self._repairing = True
        try:
            if self.read_only:
                if self.check_integrity(quick=True) or not _index_unreadable(self.path):
                    return False
                raise StoreSearchIndexDamaged(self.path) from damage
            problems = self.check_integrity()
            if not problems or not all(map(is_search_index_problem, problems)):
                return False
            log.warning("rebuilding the damaged search index of %s: %s", self.path, damage)
            self.rebuild_search_index()
        except StoreSearchIndexDamaged:
            raise
        except (StoreError, sqlite3.Error):
            return False  # the look or the rebuild failed too: the first failure stands
        finally:
            self._repairing = False
        if INDEX_REBUILT not in self.report.problems:
            self.report.problems.append(INDEX_REBUILT)
        return True

    # -- revisions --------------------------------------------------------------------------

    def _touch(self, conversation_id: str) -> None:
        """A write to this conversation is about to be made (counted even if it then fails:
        a revision that moved without a change only costs a reload)."""
        self._writes[conversation_id] = self._writes.get(conversation_id, 0) + 1

    def _touch_all(self) -> None:
        self._writes_to_all += 1

    @_translated
    def revision(self, conversation_id: str) -> Revision:
        """Where ``conversation_id``'s stored state stands, in one cheap read.

        Two equal revisions mean nothing that conversation is made of was written in between:
        not by this store (any of its writes), nor by any other connection (then every
        revision moves: SQLite only says that something changed). Never equal across stores.
        """
        outside = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        own = self._writes.get(conversation_id, 0)
        return Revision(self._number, outside, own, self._writes_to_all)

    # -- conversations --------------------------------------------------------------------

    @_translated
    def create_conversation(self, conversation: Conversation | None = None) -> Conversation:
        """Store a new conversation (a default one when none is given) and return it."""
        conv = conversation if conversation is not None else Conversation(id=new_id())
        self._touch(conv.id)
        with self._write() as conn:
            self._insert_conversation(conn, conv, selected="{}")
        return conv

    def _insert_conversation(
        self, conn: sqlite3.Connection, conv: Conversation, *, selected: str
    ) -> None:
        conn.execute(
            f"INSERT INTO conversations ({codec.CONVERSATION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*codec.conversation_values(conv, self._secrets), selected),
        )

    def _conversation_row(self, conversation_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = self._conn.execute(
            f"SELECT {codec.CONVERSATION_COLUMNS} FROM conversations WHERE id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            raise NotFound(f"There is no conversation {conversation_id}.")
        return row

    @_translated
    def get_conversation(self, conversation_id: str) -> Conversation:
        """The conversation (also when soft-deleted: then ``deleted_at`` is set)."""
        return codec.conversation_from_row(self._conversation_row(conversation_id))

    @_translated
    def update_conversation(
        self,
        conversation_id: str,
        *,
        title: str | Unset = UNSET,
        pinned: bool | Unset = UNSET,
        model: str | Unset | None = UNSET,
        system_prompt: str | Unset = UNSET,
        params: dict[str, Any] | Unset = UNSET,
        selected: dict[str | None, str] | Unset = UNSET,
    ) -> Conversation:
        """Change the given fields (others stay); ``updated_at`` is left alone (no reordering)."""
        changes: dict[str, Any] = {
            "title": title,
            "pinned": pinned if isinstance(pinned, Unset) else int(pinned),
            "model": model,
            "system_prompt": system_prompt,
            "params_json": params
            if isinstance(params, Unset)
            else codec.dump_json(params, self._secrets),
        }
        changes = {k: v for k, v in changes.items() if not isinstance(v, Unset)}
        self._touch(conversation_id)
        with self._write() as conn:
            self._conversation_row(conversation_id)
            if not isinstance(selected, Unset):
                explicit = explicit_selection(
                    conn, conversation_id=conversation_id, selected=selected
                )
                changes["selected_json"] = codec.encode_selected(explicit)
            if changes:
                assignments = ", ".join(f"{column} = :{column}" for column in changes)
                conn.execute(
                    f"UPDATE conversations SET {assignments} WHERE id = :id",
                    {**changes, "id": conversation_id},
                )
        return self.get_conversation(conversation_id)

    @_translated
    def list_conversations(self) -> list[ConversationSummary]:
        """Conversations not deleted: pinned first, then most recently updated first."""
        rows = self._conn.execute(
            "SELECT id, title, pinned, updated_at, created_at FROM conversations "
            "WHERE deleted_at IS NULL ORDER BY pinned DESC, updated_at DESC, seq DESC"
        )
        return [
            ConversationSummary(
                id=r[0], title=r[1], pinned=bool(r[2]), updated_at=r[3], created_at=r[4]
            )
            for r in rows
        ]

    def _set_deleted(self, conversation_id: str, deleted_at: float | None) -> None:
        self._touch(conversation_id)
        with self._write() as conn:
            self._conversation_row(conversation_id)
            conn.execute(
                "UPDATE conversations SET deleted_at = ? WHERE id = ?",
                (deleted_at, conversation_id),
            )

    @_translated
    def delete_conversation(self, conversation_id: str) -> None:
        """Soft delete: hidden from the list and search until restored or purged."""
        self._set_deleted(conversation_id, self._clock())

    @_translated
    def restore_conversation(self, conversation_id: str) -> None:
        """Undo a delete."""
        self._set_deleted(conversation_id, None)

    @_translated
    def purge_deleted(self, older_than: float) -> int:
        """Really delete conversations deleted more than ``older_than`` seconds ago; the count."""
        cutoff = self._clock() - older_than
        self._touch_all()
        with self._write() as conn:
            cursor = conn.execute(
                "DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at <= ?",
                (cutoff,),
            )
        return cursor.rowcount

    # -- messages -------------------------------------------------------------------------

    @_translated
    def load_tree(self, conversation_id: str) -> ConversationTree:
        """The conversation with all its messages (every branch) and its saved selection."""
        with _collections_paused():
            return self._load_tree(conversation_id)

    def _load_tree(self, conversation_id: str) -> ConversationTree:
        row = self._conversation_row(conversation_id)
        cursor = self._conn.cursor()
        cursor.row_factory = None  # plain tuples, read by position: see message_from_row
        cursor.execute(
            f"SELECT {codec.STORED_MESSAGE_COLUMNS} FROM messages "
            "WHERE conversation_id = ? ORDER BY seq",
            (conversation_id,),
        )
        from_row, conversation_id = codec.message_from_row, row["id"]  # one string, shared
        messages = [from_row(r, conversation_id) for r in cursor]
        self._attach_images(conversation_id, messages)
        conversation = codec.conversation_from_row(row)
        selected = codec.decode_selected(row["selected_json"])
        try:
            tree: ConversationTree | None = ConversationTree(conversation, messages, selected)
        except ValueError:  # a message whose parent is gone
            tree = None
        # Stored in order, each message comes after its parent (a parent is stored first):
        # then none can have lost it, and the tree that says so saw to it in passing.
        if tree is None or not tree.parents_first:
            repaired = self._reattach_orphans(conversation_id, messages)
            if tree is None or repaired is not messages:
                tree = ConversationTree(conversation, repaired, selected)
        # Walked here, on the store's thread, with its ids and their positions: the tree keeps
        # them for the opening (the transcript's index, a search hit's on_path).
        tree.path_ids()
        return tree

    def _reattach_orphans(self, conversation_id: str, messages: list[Message]) -> list[Message]:
        """Messages whose parent is gone (or that loop back on themselves) become roots.

        Only a file written without foreign keys (another tool, an old bug) has them; dropping
        them would hide text the user wrote, so they are shown as new branches and reported.
        """
        orphans = _orphan_ids(messages)
        if not orphans:
            return messages
        note = (
            f"{len(orphans)} message(s) in this conversation had lost the message they answered; "
            "they are shown as separate branches."
        )
        log.warning("conversation %s: %s", conversation_id, note)
        self.report.problems.append(note)
        return [dataclasses.replace(m, parent_id=None) if m.id in orphans else m for m in messages]

    def _attach_images(self, conversation_id: str, messages: list[Message]) -> None:
        """Give each message its stored images, in the order they were attached."""
        by_id = {m.id: m for m in messages}
        columns = ", ".join(f"a.{c}" for c in codec.ATTACHMENT_COLUMNS.split(", "))
        # Loop over the smaller side: each row of the outer table costs one index probe into
        # the other. The highest attachment seq bounds how many images the whole file holds
        # (one read of the table's last page); most files hold far fewer than a long chat's
        # messages, and walking 5,000 messages to find no image cost ~6 ms of the open.
        stored = self._conn.execute("SELECT max(seq) FROM attachments").fetchone()[0] or 0
        tables = (  # CROSS JOIN: SQLite keeps the left table as the outer loop
            "attachments a CROSS JOIN messages m"
            if stored < len(by_id)
            else "messages m JOIN attachments a"  # half the time of IN (subquery)
        )
        rows = self._conn.execute(
            f"SELECT {columns} FROM {tables} ON a.message_id = m.id "
            "WHERE m.conversation_id = ? ORDER BY a.message_id, a.position",
            (conversation_id,),
        )
        for row in rows:
            if (message := by_id.get(row["message_id"])) is not None:
                message.attachments.append(codec.attachment_from_row(row))

    def _insert_message(self, conn: sqlite3.Connection, message: Message) -> None:
        """The message's row and its images (which never change after: a message's images
        are written once, with it)."""
        conn.execute(
            f"INSERT INTO messages ({codec.MESSAGE_COLUMNS}) VALUES ({_MESSAGE_PLACEHOLDERS})",
            codec.message_values(message, self._secrets),
        )
        conn.executemany(
            f"INSERT INTO attachments ({codec.ATTACHMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                codec.attachment_values(message.id, position, attachment)
                for position, attachment in enumerate(message.attachments)
            ],
        )

    @_translated
    def add_message(self, message: Message) -> None:
        """Store a message, make it its parent's selected child, bump the conversation.

        NotFound if its conversation or its parent (in that conversation) is not stored.
        """
        self._touch(message.conversation_id)
        with self._write() as conn:
            self._conversation_row(message.conversation_id)
            self._check_parent(conn, message)
            self._insert_message(conn, message)
            self._select_added(conn, message)

    def _check_parent(self, conn: sqlite3.Connection, message: Message) -> None:
        if message.parent_id is None:
            return
        row = conn.execute(
            "SELECT conversation_id FROM messages WHERE id = ?", (message.parent_id,)
        ).fetchone()
        if row is None or row[0] != message.conversation_id:
            raise NotFound(
                f"Message {message.id} was not saved: the message it follows "
                f"({message.parent_id}) is not in conversation {message.conversation_id}."
            )

    def _select_added(self, conn: sqlite3.Connection, message: Message) -> None:
        """The just-inserted ``message`` becomes its parent's chosen child; bump the chat."""
        saved = self._conversation_row(message.conversation_id)["selected_json"]
        conn.execute(
            "UPDATE conversations SET selected_json = ?, updated_at = max(updated_at, ?) "
            "WHERE id = ?",
            (
                selection_after_add(conn, saved=saved, message=message),
                self._clock(),
                message.conversation_id,
            ),
        )

    @_translated
    def save_pending(self, conversation: Conversation, messages: Sequence[Message]) -> int:
        """Write what the caller kept in memory while the store failed; one transaction.

        Contract (for the session layer re-saving after StoreFull / StoreReadOnly / a timeout):

        - Idempotent: calling it again with the same (or a later) state changes nothing more;
          retrying after any error is always safe — on error nothing at all was written.
        - The conversation is inserted if missing; if stored, its title, pinned, model, system
          prompt and params are set from ``conversation`` (the caller's copy is the newest) and
          ``updated_at`` only moves forward. A deleted conversation stays deleted.
        - Each message is inserted if missing (and becomes its parent's chosen child, as with
          add_message); if stored, its content, reasoning, status, model, finish reason and
          records are replaced — its conversation, parent, role and created_at never change.
        - ``messages`` may come in any order; a parent must be stored or in ``messages``.
        - Raises NotFound (nothing written) if a message belongs to another conversation or
          its parent is nowhere, and the other StoreErrors as every write does.

        Returns how many messages were new.
        """
        ordered = _parents_first(messages)
        added = 0
        self._touch(conversation.id)
        with self._write() as conn:
            self._upsert_conversation(conn, conversation)
            for message in ordered:
                if message.conversation_id != conversation.id:
                    raise NotFound(
                        f"Message {message.id} belongs to another conversation than "
                        f"{conversation.id}; nothing was saved."
                    )
                if self._update_message(conn, message):
                    continue
                self._check_parent(conn, message)
                self._insert_message(conn, message)
                self._select_added(conn, message)
                added += 1
        return added

    def _upsert_conversation(self, conn: sqlite3.Connection, conv: Conversation) -> None:
        conn.execute(
            f"INSERT INTO conversations ({codec.CONVERSATION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{}') ON CONFLICT(id) DO UPDATE SET "
            "title = excluded.title, pinned = excluded.pinned, model = excluded.model, "
            "system_prompt = excluded.system_prompt, params_json = excluded.params_json, "
            "updated_at = max(updated_at, excluded.updated_at)",
            codec.conversation_values(conv, self._secrets),
        )

    def _update_message(self, conn: sqlite3.Connection, message: Message) -> bool:
        """Refresh a stored message's changing fields; False when it is not stored yet."""
        row = conn.execute(
            "SELECT conversation_id FROM messages WHERE id = ?", (message.id,)
        ).fetchone()
        if row is None:
            return False
        if row[0] != message.conversation_id:
            raise NotFound(
                f"Message {message.id} is stored in another conversation; nothing was saved."
            )
        conn.execute(
            f"UPDATE messages SET {_MUTABLE_ASSIGNMENTS} WHERE id = :id",
            _named(message, self._secrets),
        )
        return True

    @_translated
    def save_partial(self, message_id: str, content: str, reasoning: str) -> None:
        """A streaming batch: the reply so far.

        Revives a row that another instance, opening meanwhile, marked interrupted.
        """
        with self._write() as conn:
            row = conn.execute(
                "UPDATE messages SET content = ?, reasoning = ?, status = CASE status "
                "WHEN ? THEN ? ELSE status END WHERE id = ? RETURNING conversation_id",
                (
                    codec.storable(content),
                    codec.storable(reasoning),
                    STATUS_INTERRUPTED,
                    STATUS_STREAMING,
                    message_id,
                ),
            ).fetchone()
            if row is None:
                raise NotFound(f"There is no message {message_id}.")
            self._touch(row[0])

    @_translated
    def finalise_message(self, message: Message) -> None:
        """The finished (or stopped / failed) message: text, status and every record."""
        values = _named(message, self._secrets)
        self._touch(message.conversation_id)
        with self._write() as conn:
            cursor = conn.execute(
                f"UPDATE messages SET {_MUTABLE_ASSIGNMENTS} WHERE id = :id", values
            )
            if cursor.rowcount == 0:
                raise NotFound(f"There is no message {message.id}.")
            conn.execute(
                "UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?",
                (self._clock(), message.conversation_id),
            )

    @_translated
    def mark_unfinished_as_interrupted(self) -> int:
        """After a crash: "streaming" rows become "interrupted" (text kept); the count."""
        self._touch_all()
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE messages SET status = ? WHERE status = ?",
                (STATUS_INTERRUPTED, STATUS_STREAMING),
            )
        return cursor.rowcount

    @_translated
    def search(
        self, query: str, limit: int | None = 50, *, conversation_id: str | None = None
    ) -> list[SearchHit]:
        """Full-text search (any user text is safe); one conversation's, in order, if given."""
        return search(self._conn, query, limit=limit, conversation_id=conversation_id)

    @_translated
    def neurons_today(self, *, now: float | None = None, demo: bool = False) -> float:
        """Neurons billed since 00:00 UTC on ``now``'s day (default: the store's clock), in
        every conversation, to the real account (or to demo mode): the ledger's day total."""
        rows = self.replies_today(now=now)
        return ledger.day_usage(rows, {}, demo=demo).neurons

    @_translated
    def replies_today(self, *, now: float | None = None) -> list[LedgerRow]:
        """(model, usage, meta, error) of today's replies (UTC day), for the usage ledger."""
        start = utc_day_start(self._clock() if now is None else now)
        return replies_since(self._conn, since=start, until=start + _SECONDS_PER_DAY)

    @_translated
    def insert_trees(self, trees: Sequence[ConversationTree]) -> None:
        """Store whole conversations (e.g. an import) in one transaction; ids must be new."""
        with self._write() as conn:
            for tree in trees:
                self._touch(tree.conversation.id)
                selected = codec.encode_selected(tree.explicit_selection())
                self._insert_conversation(conn, tree.conversation, selected=selected)
                for message in tree:  # parents before children (foreign key)
                    self._insert_message(conn, message)

    # -- model licences ---------------------------------------------------------------------

    @_translated
    def record_agreement(self, account_id: str, model: str) -> None:
        """The user agreed to ``model``'s licence for this account (kept; never asked again)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO terms_agreements (account_id, model, agreed_at) VALUES (?, ?, ?) "
                "ON CONFLICT(account_id, model) DO NOTHING",
                (account_id, model, self._clock()),
            )

    @_translated
    def has_agreed(self, account_id: str, model: str) -> bool:
        """Whether the user agreed to ``model``'s licence for this account before."""
        row = self._conn.execute(
            "SELECT 1 FROM terms_agreements WHERE account_id = ? AND model = ?",
            (account_id, model),
        ).fetchone()
        return row is not None

    @_translated
    def existing_message_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these message ids are already stored (in any conversation)."""
        found: set[str] = set()
        for message_id in ids:
            if self._conn.execute("SELECT 1 FROM messages WHERE id = ?", (message_id,)).fetchone():
                found.add(message_id)
        return found


@contextmanager
def _collections_paused() -> Iterator[None]:
    """No garbage collection while a conversation's objects are made (issue #12, switching).

    A 5,000-message chat is thousands of new objects and no garbage: read with the collector
    on, ~30 young collections walked them as they were made, two or three middle ones 2-38 ms
    each, and now and then a full pass (45-160 ms) landed in the open. Turned back on after,
    one young collection walks them. (Freezing them instead walked none, but froze whatever
    garbage cycles the process held at that moment, a dropped chat's widgets and data among
    them: the switching bench's RSS growth went from ~6 to ~15 MiB.) A collector someone
    else turned off (start-up's hold) is left to them.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: Message columns a later write may change; the others are fixed when it is first stored.
_FIXED_COLUMNS = ("id", "conversation_id", "parent_id", "role", "created_at")
_MESSAGE_PLACEHOLDERS = ", ".join("?" * len(codec.MESSAGE_COLUMNS.split(", ")))
_MUTABLE_ASSIGNMENTS = ", ".join(
    f"{c} = :{c}" for c in codec.MESSAGE_COLUMNS.split(", ") if c not in _FIXED_COLUMNS
)


def _named(message: Message, secrets: Sequence[str]) -> dict[str, Any]:
    """The message's column values by name (records scrubbed), for named parameters."""
    return dict(
        zip(codec.MESSAGE_COLUMNS.split(", "), codec.message_values(message, secrets), strict=True)
    )


def _parents_first(messages: Sequence[Message]) -> list[Message]:
    """``messages`` reordered so each comes after its parent when both are in the batch."""
    by_id = {m.id: m for m in messages}
    done: set[str] = set()
    ordered: list[Message] = []
    for message in messages:
        chain: list[Message] = []
        seen: set[str] = set()
        node: Message | None = message
        while node is not None and node.id not in done and node.id not in seen:
            chain.append(node)
            seen.add(node.id)
            node = by_id.get(node.parent_id) if node.parent_id is not None else None
        for item in reversed(chain):
            done.add(item.id)
            ordered.append(item)
    return ordered


def _orphan_ids(messages: Sequence[Message]) -> set[str]:
    """Ids of the messages whose chain of parents never reaches a root (a gone parent, a loop);
    the first broken link of each chain, so re-rooting it reconnects everything below."""
    if _parents_come_first(messages):
        return set()
    parents = {m.id: m.parent_id for m in messages}
    rooted: set[str] = set()
    broken: set[str] = set()
    for start in parents:
        chain: list[str] = []
        node: str | None = start
        while node is not None and node not in rooted and node not in chain:
            chain.append(node)
            if node not in parents:  # the parent of chain[-2] is gone
                chain.pop()
                broken.add(chain[-1])
                break
            node = parents[node]
        else:
            if node is not None and node in chain:  # a loop: cut it where it closes
                broken.add(chain[-1])
        rooted.update(chain)
    return broken


def _parents_come_first(messages: Sequence[Message]) -> bool:
    """Whether each message's parent comes before it (in storage order it always does: a
    parent must be stored first): then no chain can be broken or loop, in one cheap pass."""
    seen: set[str | None] = {None}
    for message in messages:
        if message.parent_id not in seen:
            return False
        seen.add(message.id)
    return True

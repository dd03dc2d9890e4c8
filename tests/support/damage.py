"""Damage a chat database's search index honestly: garbage in an FTS5 table's shadow table, in
the real SQLite file, confirmed by FTS5's own integrity check (the messages stay intact)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

__all__ = ["damage_search_index"]

#: FTS5 keeps its structure record at id 1 and its averages at id 10; the leaves come after.
_FIRST_LEAF_ID = 10


def damage_search_index(path: Path, table: str = "messages_fts", *, seed: int = 25) -> None:
    """Overwrite every leaf of ``table``'s inverted index with random bytes of the same length.

    Raises AssertionError unless FTS5 then calls the index corrupt while ``PRAGMA quick_check``
    still finds the file itself sound (what a stray write into the index's pages leaves).
    """
    rng = random.Random(seed)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        leaves = conn.execute(
            f"SELECT id, length(block) FROM {table}_data WHERE id > ?", (_FIRST_LEAF_ID,)
        ).fetchall()
        if not leaves:
            raise AssertionError(f"{table} has no index leaves to damage: store some text first")
        conn.execute("BEGIN")
        for leaf_id, size in leaves:
            garbage = bytes(rng.randrange(256) for _ in range(size))
            conn.execute(f"UPDATE {table}_data SET block = ? WHERE id = ?", (garbage, leaf_id))
        conn.execute("COMMIT")
        try:
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
        except sqlite3.DatabaseError:
            pass  # corrupt, as intended
        else:
            raise AssertionError(f"{table} still passes its integrity check")
        if conn.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
            raise AssertionError("the file itself was damaged, not only the search index")
    finally:
        conn.close()

"""The stored replies of a UTC day, as the usage ledger (``core.ledger``) reads them."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from flarechat import safejson
from flarechat.core.ledger import LedgerRow

__all__ = ["replies_since", "utc_day_start"]

_REPLIES_SINCE = """
    SELECT model, usage_json, meta_json, error_json
    FROM messages
    WHERE role = 'assistant' AND created_at >= :since AND created_at < :until
      AND (usage_json IS NOT NULL OR meta_json IS NOT NULL OR error_json IS NOT NULL)
"""


def _record(text: str | None) -> dict[str, Any] | None:
    try:
        value = safejson.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def replies_since(conn: sqlite3.Connection, *, since: float, until: float) -> list[LedgerRow]:
    """(model, usage, meta, error) of the assistant replies created in [since, until) that
    reported or failed with anything (deleted chats' included: their neurons were spent all
    the same) — what the usage ledger (``core.ledger``) reads."""
    rows = conn.execute(_REPLIES_SINCE, {"since": since, "until": until}).fetchall()
    return [(row[0], _record(row[1]), _record(row[2]), _record(row[3])) for row in rows]


def utc_day_start(now: float) -> float:
    """The unix time of 00:00 UTC on ``now``'s UTC day (Workers AI's allocation resets then)."""
    day = datetime.fromtimestamp(now, UTC).date()
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()

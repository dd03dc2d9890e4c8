"""Usage accounting over stored replies: neurons billed per UTC day (SQLite json_extract)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from flarechat import safejson

__all__ = ["neurons_since", "replies_since", "utc_day_start"]

#: Neurons of one reply: the ``cf-ai-neurons`` header (meta) when the response had it, else
#: the usage report's figure — the same precedence as TurnState.neurons and the metadata
#: line, so a reply billed through both is counted once. Malformed JSON or a non-number
#: counts as nothing rather than failing the whole sum.
_NEURONS_OF_ROW = """
    COALESCE(
        CASE WHEN json_valid(meta_json)
             AND json_type(meta_json, '$.neurons') IN ('integer', 'real')
             THEN json_extract(meta_json, '$.neurons') END,
        CASE WHEN json_valid(usage_json)
             AND json_type(usage_json, '$.neurons') IN ('integer', 'real')
             THEN json_extract(usage_json, '$.neurons') END,
        0.0)
"""
_NEURONS_SINCE = f"""
    SELECT TOTAL({_NEURONS_OF_ROW})
    FROM messages
    WHERE role = 'assistant' AND created_at >= :since AND created_at < :until
"""


_REPLIES_SINCE = """
    SELECT model, usage_json, meta_json
    FROM messages
    WHERE role = 'assistant' AND created_at >= :since AND created_at < :until
      AND (usage_json IS NOT NULL OR meta_json IS NOT NULL)
"""


def _record(text: str | None) -> dict[str, Any] | None:
    try:
        value = safejson.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def replies_since(
    conn: sqlite3.Connection, *, since: float, until: float
) -> list[tuple[str | None, dict[str, Any] | None, dict[str, Any] | None]]:
    """(model, usage, meta) of the assistant replies created in [since, until) that reported
    anything, for cost estimates (``core.meters.total_usage``)."""
    rows = conn.execute(_REPLIES_SINCE, {"since": since, "until": until}).fetchall()
    return [(row[0], _record(row[1]), _record(row[2])) for row in rows]


def utc_day_start(now: float) -> float:
    """The unix time of 00:00 UTC on ``now``'s UTC day (Workers AI's allocation resets then)."""
    day = datetime.fromtimestamp(now, UTC).date()
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def neurons_since(conn: sqlite3.Connection, *, since: float, until: float) -> float:
    """Neurons of the assistant replies created in [since, until) — deleted chats included:
    their neurons were spent all the same."""
    row = conn.execute(_NEURONS_SINCE, {"since": since, "until": until}).fetchone()
    return float(row[0]) if row is not None and row[0] is not None else 0.0

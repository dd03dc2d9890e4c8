"""Full-text search over message text and conversation titles (SQLite FTS5)."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

__all__ = ["HIGHLIGHT_END", "HIGHLIGHT_START", "SearchHit", "fts_query", "search"]

HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
_SNIPPET_ELLIPSIS = "…"
_SNIPPET_TOKENS = 16
#: A term the tokenizer would reduce to nothing (only punctuation) is dropped, not searched.
_WORDLIKE = re.compile(r"\w")
_NO_LIMIT = -1

#: Across all conversations: the newest matches first (seq grows as messages are saved). FTS5
#: walks its doclist in rowid order and the CROSS JOINs keep it the outer loop, so SQLite stops
#: after ``limit`` rows and makes snippets only for those: ranking by relevance (bm25) would
#: score and sort every match, hundreds of milliseconds for a common word in a long history.
_MESSAGE_HITS = """
    SELECT m.conversation_id, c.title, m.id, m.role,
           snippet(messages_fts, 0, :start, :end, :ellipsis, :tokens)
    FROM messages_fts
    CROSS JOIN messages AS m ON m.seq = messages_fts.rowid
    CROSS JOIN conversations AS c ON c.id = m.conversation_id
    WHERE messages_fts MATCH :query AND c.deleted_at IS NULL
    ORDER BY messages_fts.rowid DESC
    LIMIT :limit
"""
#: Find in one conversation: every match, in the order they were written.
_CONVERSATION_HITS = """
    SELECT m.conversation_id, c.title, m.id, m.role,
           snippet(messages_fts, 0, :start, :end, :ellipsis, :tokens)
    FROM messages_fts
    JOIN messages AS m ON m.seq = messages_fts.rowid
    JOIN conversations AS c ON c.id = m.conversation_id
    WHERE messages_fts MATCH :query AND m.conversation_id = :conversation_id
          AND c.deleted_at IS NULL
    ORDER BY m.created_at, m.seq
    LIMIT :limit
"""
_TITLE_HITS = """
    SELECT c.id, c.title, highlight(titles_fts, 0, :start, :end)
    FROM titles_fts
    JOIN conversations AS c ON c.seq = titles_fts.rowid
    WHERE titles_fts MATCH :query AND c.deleted_at IS NULL
    ORDER BY titles_fts.rank, c.updated_at DESC
    LIMIT :limit
"""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One match. ``snippet`` marks matched words with HIGHLIGHT_START … HIGHLIGHT_END.

    A match in a conversation's title has ``message_id`` and ``role`` None (open it at the top).
    """

    conversation_id: str
    conversation_title: str
    message_id: str | None
    role: str | None
    snippet: str


def fts_query(text: str) -> str | None:
    """User text as a safe FTS5 query: every term quoted (so no operators), the last a prefix.

    Returns None when nothing searchable is left (empty text, or only punctuation).
    """
    terms = [term for term in text.split() if _WORDLIKE.search(term)]
    if not terms:
        return None
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    quoted[-1] += "*"
    return " ".join(quoted)


def search(
    conn: sqlite3.Connection,
    text: str,
    *,
    limit: int | None,
    conversation_id: str | None = None,
) -> list[SearchHit]:
    """Title matches first (by relevance), then message matches, newest first; at most
    ``limit`` in all (None: no limit).

    With ``conversation_id``: only that conversation's messages (no title match), every branch,
    in the order they were written (``created_at``) — find in a conversation.
    """
    query = fts_query(text)
    if query is None or (limit is not None and limit <= 0):
        return []
    marks = {"start": HIGHLIGHT_START, "end": HIGHLIGHT_END, "query": query}
    message_params = {**marks, "ellipsis": _SNIPPET_ELLIPSIS, "tokens": _SNIPPET_TOKENS}
    if conversation_id is not None:
        rows = conn.execute(
            _CONVERSATION_HITS,
            {**message_params, "conversation_id": conversation_id, "limit": _sql_limit(limit)},
        )
        return [_message_hit(row) for row in rows]
    hits = [
        SearchHit(
            conversation_id=row[0],
            conversation_title=row[1],
            message_id=None,
            role=None,
            snippet=row[2],
        )
        for row in conn.execute(_TITLE_HITS, {**marks, "limit": _sql_limit(limit)})
    ]
    left = None if limit is None else limit - len(hits)
    rows = conn.execute(_MESSAGE_HITS, {**message_params, "limit": _sql_limit(left)})
    hits.extend(_message_hit(row) for row in rows)
    return hits


def _sql_limit(limit: int | None) -> int:
    """SQLite's LIMIT: a negative number means none."""
    return _NO_LIMIT if limit is None else limit


def _message_hit(row: sqlite3.Row | tuple[object, ...]) -> SearchHit:
    conversation_id, title, message_id, role, snippet = tuple(row)
    return SearchHit(
        conversation_id=str(conversation_id),
        conversation_title=str(title),
        message_id=str(message_id),
        role=str(role),
        snippet=str(snippet),
    )

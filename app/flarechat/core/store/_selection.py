"""Keeping a conversation's saved branch choices small: only those that differ from the default.

A parent with no saved choice shows its newest child (ConversationTree's rule), so only choices
of an older child need saving. A 5,000-message conversation then saves "{}" rather than a map
with an entry per message, rewritten on every add.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from flarechat.core.conversation import Message
from flarechat.core.store import _codec as codec

__all__ = ["explicit_selection", "selection_after_add"]


def explicit_selection(
    conn: sqlite3.Connection, *, conversation_id: str, selected: Mapping[str | None, str]
) -> dict[str | None, str]:
    """The choices in ``selected`` that name a real, non-newest child of their parent."""
    newest: dict[str | None, str] = {}
    parent_of: dict[str, str | None] = {}
    rows = conn.execute(
        "SELECT parent_id, id FROM messages WHERE conversation_id = ? ORDER BY created_at, seq",
        (conversation_id,),
    )
    for parent_id, message_id in rows:
        newest[parent_id] = message_id
        parent_of[message_id] = parent_id
    return {
        parent: child
        for parent, child in selected.items()
        if child in parent_of and parent_of[child] == parent and newest.get(parent) != child
    }


def selection_after_add(conn: sqlite3.Connection, *, saved: str | None, message: Message) -> str:
    """The saved choices once ``message`` (just inserted) is its parent's chosen child."""
    selected = codec.decode_selected(saved)
    newer_sibling = conn.execute(
        "SELECT 1 FROM messages WHERE conversation_id = ? AND parent_id IS ? AND id != ? "
        "AND created_at > ? LIMIT 1",
        (message.conversation_id, message.parent_id, message.id, message.created_at),
    ).fetchone()
    if newer_sibling is None:
        selected.pop(message.parent_id, None)  # the newest child is shown by default
    else:
        selected[message.parent_id] = message.id
    return codec.encode_selected(selected)

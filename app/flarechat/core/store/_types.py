"""Small value types of the chat store: summaries, the open report, the "leave as is" marker."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from flarechat.core.store._schema import MigrationResult

__all__ = ["UNSET", "ConversationSummary", "OpenReport", "Revision", "Unset"]


class Unset(enum.Enum):
    """Marks an ``update_conversation`` field that is left as it is."""

    UNSET = enum.auto()


UNSET = Unset.UNSET


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """What the sidebar needs of a conversation."""

    id: str
    title: str
    pinned: bool
    updated_at: float
    created_at: float


@dataclass(slots=True)
class OpenReport:
    """What happened while opening the database (shown to the user when not uneventful)."""

    path: Path
    migration: MigrationResult | None = None
    moved_aside: Path | None = None  # a corrupt file moved here; a fresh database replaced it
    corrupt_detail: str | None = None
    interrupted: int = 0  # replies a crash left "streaming", now marked interrupted
    read_only: bool = False  # changes won't be saved (asked for, or the file/disk refused)
    read_only_reason: str | None = None  # why, in a sentence for the UI; None when asked for
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Revision:
    """Where a conversation's stored state stands: equal revisions, same rows.

    ``store`` names the ChatStore object (a reopened store starts over); ``outside`` is SQLite's
    ``data_version``, which moves when another connection (another window or process, a tool)
    commits anything; ``own`` counts this store's writes to the conversation, and ``everything``
    its writes to every conversation at once (purge, crash recovery).
    """

    store: int
    outside: int
    own: int
    everything: int

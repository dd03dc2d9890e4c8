"""Conversation sessions, free of Qt: a ChatSession per conversation owns every turn
operation and reports what happens as events; the SessionBook holds the open ones.

Layout: ``session`` (the operations), ``reply`` (one running reply), ``events`` (what is
reported), ``records`` (what a turn leaves behind, and its figures line), ``saving`` (writes
that survive a failing database), ``gate`` (the per-model concurrency limit), ``book``.
"""

from __future__ import annotations

from flarechat.core.session.book import SessionBook
from flarechat.core.session.events import (
    BusyChanged,
    ConversationStored,
    EditingChanged,
    MessageAdded,
    MessageChanged,
    PathChanged,
    Phase,
    PhaseChanged,
    ReasoningAppended,
    RetryOver,
    RetryPlanned,
    SessionEvent,
    SessionListener,
    SiblingsChanged,
    StoreTrouble,
    TextAppended,
    TurnFailed,
    TurnFinished,
    TurnProgress,
    TurnStarted,
)
from flarechat.core.session.gate import ModelGate
from flarechat.core.session.session import (
    CONTINUE_PROMPT,
    SWITCHABLE_FAILURES,
    ChatSession,
    ColumnSpec,
    TurnSettings,
    can_continue,
)

__all__ = [
    "CONTINUE_PROMPT",
    "SWITCHABLE_FAILURES",
    "BusyChanged",
    "ChatSession",
    "ColumnSpec",
    "ConversationStored",
    "EditingChanged",
    "MessageAdded",
    "MessageChanged",
    "ModelGate",
    "PathChanged",
    "Phase",
    "PhaseChanged",
    "ReasoningAppended",
    "RetryOver",
    "RetryPlanned",
    "SessionBook",
    "SessionEvent",
    "SessionListener",
    "SiblingsChanged",
    "StoreTrouble",
    "TextAppended",
    "TurnFailed",
    "TurnFinished",
    "TurnProgress",
    "TurnSettings",
    "TurnStarted",
    "can_continue",
]

"""Conversation sessions, free of Qt: a ChatSession per conversation owns every turn
operation and reports what happens as events; the SessionBook holds the open ones.

Layout: ``session`` (the operations), ``reply`` (one running reply), ``events`` (what is
reported), ``records`` (what a turn leaves behind, and its figures line), ``saving`` (writes
that survive a failing database), ``gate`` (the per-model concurrency limit), ``capabilities``
(what a model takes: vision refusals, schemas), ``structured`` (JSON reply verdicts), ``book``.
"""

from __future__ import annotations

from flarechat.core.session.book import SessionBook
from flarechat.core.session.capabilities import (
    Catalogue,
    Refusal,
    RefusalKind,
    SchemaBook,
    SendRefused,
)
from flarechat.core.session.events import (
    BusyChanged,
    ConversationStored,
    EditingChanged,
    MessageAdded,
    MessageChanged,
    Notice,
    NoticeKind,
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
    ToolCallAppended,
    ToolCallsReceived,
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
from flarechat.core.session.structured import JsonVerdict, json_check

__all__ = [
    "CONTINUE_PROMPT",
    "SWITCHABLE_FAILURES",
    "BusyChanged",
    "Catalogue",
    "ChatSession",
    "ColumnSpec",
    "ConversationStored",
    "EditingChanged",
    "JsonVerdict",
    "MessageAdded",
    "MessageChanged",
    "ModelGate",
    "Notice",
    "NoticeKind",
    "PathChanged",
    "Phase",
    "PhaseChanged",
    "ReasoningAppended",
    "Refusal",
    "RefusalKind",
    "RetryOver",
    "RetryPlanned",
    "SchemaBook",
    "SendRefused",
    "SessionBook",
    "SessionEvent",
    "SessionListener",
    "SiblingsChanged",
    "StoreTrouble",
    "TextAppended",
    "ToolCallAppended",
    "ToolCallsReceived",
    "TurnFailed",
    "TurnFinished",
    "TurnProgress",
    "TurnSettings",
    "TurnStarted",
    "can_continue",
    "json_check",
]

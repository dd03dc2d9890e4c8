"""Conversation sessions, free of Qt: a ChatSession per conversation owns every turn
operation and reports what happens as events; the SessionBook holds the open ones.

Layout: ``session`` (ChatSession, the coordinator of the operations), ``turns`` (messages
added, replies begun, compare rounds), ``launching`` (one task per reply: start, re-run,
stop), ``running`` (one reply streamed, saved and finalised), ``retrying`` (the retry
banner's actions), ``requests`` (what a reply sends), ``branches`` (the path shown, edits),
``reply`` (one running reply's state), ``events`` (what is reported), ``records`` (what a turn
leaves behind, and its figures line), ``saving`` (writes that survive a failing database),
``gate`` (the per-model concurrency limit), ``capabilities`` (vision refusals, schemas, tool
results, JSON verdicts, licences), ``structured`` (JSON checks), ``book`` (the open sessions).
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
from flarechat.core.session.continuing import CONTINUE_PROMPT
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
from flarechat.core.session.requests import ColumnSpec, TurnSettings
from flarechat.core.session.retrying import SWITCHABLE_FAILURES
from flarechat.core.session.session import ChatSession
from flarechat.core.session.structured import JsonVerdict, json_check
from flarechat.core.session.turns import can_continue, continue_hint

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
    "continue_hint",
    "json_check",
]

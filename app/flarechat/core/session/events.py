"""What a ChatSession reports: one frozen dataclass per fact, plain values and core data only.

The window's controller turns each into a Qt signal; tests collect them in a list. Every event
names its conversation, so one listener can serve many sessions (compare columns, tabs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from flarechat.api.errors import ErrorKind
from flarechat.core.conversation import Message
from flarechat.core.turn import TurnState

__all__ = [
    "BusyChanged",
    "ConversationStored",
    "EditingChanged",
    "MessageAdded",
    "MessageChanged",
    "Notice",
    "NoticeKind",
    "PathChanged",
    "Phase",
    "PhaseChanged",
    "ReasoningAppended",
    "RetryOver",
    "RetryPlanned",
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
    "TurnStarted",
]


class Phase(StrEnum):
    """Where a running reply is, before and while it streams."""

    #: waiting for a free slot of Flarechat's own per-model limit (nothing sent yet)
    HELD = "held"
    #: the request is out; no answer yet (Cloudflare's queue, a slow first byte)
    SENT = "sent"
    #: sent with Reject if busy off: waiting in the model's queue on purpose
    QUEUED = "queued"
    #: waiting to retry after a failure (a RetryPlanned says why and for how long)
    RETRY_WAIT = "retry_wait"
    STREAMING = "streaming"


class NoticeKind(StrEnum):
    """What a Notice is about."""

    #: the request asked to stream, but went without (native JSON mode does not stream)
    STREAMING_DISABLED = "streaming_disabled"
    #: the model's licence was accepted (by the user, or again because they had before)
    TERMS_AGREED = "terms_agreed"


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A user message joined the visible path (its reply follows as TurnStarted)."""

    conversation_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class MessageChanged:
    """A message on the path looks different (e.g. its Continue offer went)."""

    conversation_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class PathChanged:
    """The path from ``first_gone`` on is replaced by ``shown`` (a branch switch or edit)."""

    conversation_id: str
    first_gone: str
    shown: tuple[Message, ...] = ()


@dataclass(frozen=True, slots=True)
class TurnStarted:
    conversation_id: str
    message_id: str
    #: a Continue: the reply already shown grows from its text (it is not shown anew)
    continued: bool = False


@dataclass(frozen=True, slots=True)
class SiblingsChanged:
    """A message's position among its siblings: 0-based ``index`` of ``count`` ("< 1/2 >")."""

    conversation_id: str
    message_id: str
    index: int
    count: int


@dataclass(frozen=True, slots=True)
class TextAppended:
    conversation_id: str
    message_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningAppended:
    conversation_id: str
    message_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallAppended:
    """A streamed piece of tool call ``index``: ``id`` and ``name`` come once (usually first),
    ``arguments`` is the next piece of its JSON text (append, never replace)."""

    conversation_id: str
    message_id: str
    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallsReceived:
    """The reply asked for tools: ``calls`` are ``{"id", "name", "arguments"}`` (JSON text),
    as in its message's ``tool_calls``. Answer with ``ChatSession.send_tool_results``."""

    conversation_id: str
    message_id: str
    calls: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know about a reply that is not a failure (``text`` says it)."""

    conversation_id: str
    message_id: str
    kind: NoticeKind
    text: str


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    """A running reply moved to ``phase``; ``since`` is the session clock's reading then."""

    conversation_id: str
    message_id: str
    phase: Phase
    since: float


@dataclass(frozen=True, slots=True)
class RetryPlanned:
    """Attempt ``attempt`` of ``max_attempts`` failed with ``kind``; the next starts in
    ``delay`` seconds unless Retry now, Wait in queue, Switch model or Cancel comes first."""

    conversation_id: str
    message_id: str
    attempt: int
    max_attempts: int
    delay: float
    model: str
    kind: ErrorKind
    reason: str


@dataclass(frozen=True, slots=True)
class RetryOver:
    """The retry wait ended (the next attempt answered, or it was stopped or cancelled)."""

    conversation_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class TurnProgress:
    """A batch of the reply was saved; ``state`` holds its figures so far."""

    conversation_id: str
    message_id: str
    model: str
    state: TurnState


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """The reply ended (done, stopped, failed or interrupted) and ``message`` is its record.

    ``state`` is None for a reply that never ran (stopped before sending, no account).
    """

    conversation_id: str
    message: Message
    model: str
    state: TurnState | None = None


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """Why a reply failed, for its banner: a state, never words in the model's voice.

    ``extra`` holds plain values: model, attempts, partial, status, code, retry_after,
    resets_at, request_id, and for licence terms (kind ``terms``) terms_url (never the token).
    """

    conversation_id: str
    message_id: str
    kind: ErrorKind
    message: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BusyChanged:
    conversation_id: str
    busy: bool


@dataclass(frozen=True, slots=True)
class ConversationStored:
    """A draft conversation got its row (the conversation list changed)."""

    conversation_id: str


@dataclass(frozen=True, slots=True)
class EditingChanged:
    """An edit began (``text`` is the message to put in the composer) or ended (None)."""

    conversation_id: str
    editing: bool
    text: str | None = None


@dataclass(frozen=True, slots=True)
class StoreTrouble:
    """The database failed (``problem`` in plain words; ``unsaved`` messages are kept in
    memory and written when it works again), or recovered (``problem`` None)."""

    conversation_id: str
    problem: str | None
    unsaved: int = 0


SessionEvent = (
    MessageAdded
    | MessageChanged
    | PathChanged
    | TurnStarted
    | SiblingsChanged
    | TextAppended
    | ReasoningAppended
    | ToolCallAppended
    | ToolCallsReceived
    | Notice
    | PhaseChanged
    | RetryPlanned
    | RetryOver
    | TurnProgress
    | TurnFinished
    | TurnFailed
    | BusyChanged
    | ConversationStored
    | EditingChanged
    | StoreTrouble
)

#: What a session reports to: one callable for every event.
SessionListener = Callable[[SessionEvent], None]

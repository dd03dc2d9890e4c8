"""Plain words and view data for the window: messages as MessageData, metadata lines, banners.

Pure functions (no widgets, no I/O) so the controller and the window stay small and the wording
is tested in one place. Errors become *states* here, never text in the model's voice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from flarechat.api.errors import ErrorKind
from flarechat.api.models import ModelInfo
from flarechat.core import figures, ledger, meters
from flarechat.core.connect import PARAM_RESPONSE_FORMAT, PARAM_TOOLS
from flarechat.core.conversation import ROLE_ASSISTANT, STATUS_DONE, ConversationTree, Message
from flarechat.ui.control.view_data import MessageData, ToolCallData

if TYPE_CHECKING:
    from flarechat.core.turn import TurnState

# ``core.session`` is imported where used: the window's first paint imports this module, and
# the chat engine (core.session's ~90 dataclasses) is built after that paint (issue #12).

__all__ = [
    "NoticeSpec",
    "message_data",
    "meta_line",
    "metrics_line",
    "notice_for_failure",
    "reset_time_text",
    "retry_notice",
]

#: Workers AI's free allocation resets at midnight UTC.
RESET_HOUR_FORMAT = "%H:%M"
#: Notice kinds (icon and colour of a NoticeBanner).
WARNING, ERROR, INFO = "warning", "error", "info"
ACTION_RETRY = ("retry", "Retry")
ACTION_SETTINGS = ("open_settings", "Open settings")
ACTION_SWITCH_MODEL = ("switch_model", "Switch model\N{HORIZONTAL ELLIPSIS}")
ACTION_DEMO = ("demo", "Try demo mode")
ACTION_AGREE = ("agree_terms", "Agree and continue")


# -- messages ----------------------------------------------------------------------------


def meta_line(message: Message, *, info: ModelInfo | None = None) -> str:
    """The metadata line: TTFT 420 ms · 38 tok/s · 152→418 tokens · 1.98 neurons · cache HIT,
    then the estimated cost (≈ $0.00042) when the catalogue has the model's prices.

    The figures come from the CLI's builder too (``core.session.records.figures_text``).
    """
    from flarechat.core.session import records

    line = records.figures_text(message.timings, message.usage, message.meta)
    spent = ledger.charge(message.usage, message.meta, info)  # what the meters count
    cost = spent.cost if spent is not None else None
    if cost is None:
        return line
    return figures.SEPARATOR.join(filter(None, [line, meters.cost_text(cost)]))


def _error_text(message: Message) -> str | None:
    error = message.error or {}
    text = error.get("message")
    return text if isinstance(text, str) and text else None


def _tool_calls(tree: ConversationTree, message: Message) -> tuple[ToolCallData, ...]:
    """The reply's calls, each with the canned result its tool was defined with."""
    tools = tree.conversation.params.get(PARAM_TOOLS)
    canned = {
        t.get("name"): t.get("canned_result")
        for t in (tools if isinstance(tools, list) else [])
        if isinstance(t, dict) and isinstance(t.get("canned_result"), str)
    }
    return tuple(
        ToolCallData(
            id=str(call.get("id", "")),
            name=str(call.get("name", "")),
            arguments=str(call.get("arguments") or ""),
            canned=canned.get(call.get("name")),
        )
        for call in message.tool_calls
    )


def _json_fields(message: Message) -> dict[str, Any]:
    """A finished reply asked for as JSON: its verdict and which JSON was asked for."""
    asked = (message.request or {}).get(PARAM_RESPONSE_FORMAT)
    if message.role != ROLE_ASSISTANT or not isinstance(asked, dict) or message.tool_calls:
        return {}
    if message.status != STATUS_DONE or not message.content:
        return {}
    schema = asked.get("schema")
    from flarechat.core.session import json_check

    verdict = json_check(message.content, schema if isinstance(schema, dict) else None)
    return {"json_verdict": verdict, "json_kind": str(asked.get("type", ""))}


def _capability_fields(
    tree: ConversationTree, message: Message, *, is_last: bool | None
) -> dict[str, Any]:
    """Images, tool calls, a JSON verdict and the reply's note, only where a message has them."""
    fields: dict[str, Any] = {}
    if message.attachments:
        fields["attachments"] = tuple(message.attachments)
    if message.tool_calls:
        last = is_last if is_last is not None else tree.last() is message
        fields["tool_calls"] = _tool_calls(tree, message)
        fields["awaiting_tool_results"] = bool(last) and message.status == STATUS_DONE
    note = (message.meta or {}).get("note")
    if isinstance(note, str) and note:
        fields["note"] = note
    return fields | _json_fields(message)


def message_data(
    tree: ConversationTree,
    message: Message,
    *,
    is_last: bool | None = None,
    info: ModelInfo | None = None,
) -> MessageData:
    """The view's picture of one message on the visible path (with its < n/m > position).

    ``is_last`` (is it the path's last message?) may be passed by callers showing a whole
    path, so a long conversation is not walked once per message.
    """
    from flarechat.core.session import can_continue, continue_hint

    index, count = tree.sibling_position(message.id)
    log_id = (message.meta or {}).get("log_id")
    return MessageData(
        id=message.id,
        role=message.role,
        content=message.content,
        reasoning=message.reasoning,
        status=message.status,
        model=message.model or "",
        finish_reason=message.finish_reason,
        meta_line=meta_line(message, info=info),
        log_id=log_id if isinstance(log_id, str) else None,
        error_text=_error_text(message),
        can_continue=can_continue(tree, message, is_last=is_last),
        continue_hint=continue_hint(tree, message, info),
        sibling_index=index - 1,
        sibling_count=count,
        **_capability_fields(tree, message, is_last=is_last),
    )


# -- failures -----------------------------------------------------------------------------


def reset_time_text(resets_at: datetime) -> str:
    """The reset in the user's local time and in UTC: 01:00 (00:00 UTC)."""
    local = resets_at.astimezone().strftime(RESET_HOUR_FORMAT)
    utc = resets_at.astimezone(UTC).strftime(RESET_HOUR_FORMAT)
    return f"{local} ({utc} UTC)"


@dataclass(frozen=True, slots=True)
class NoticeSpec:
    """What a NoticeBanner shows; ``countdown`` seconds are counted down live when set."""

    kind: str
    title: str
    text: str
    actions: list[tuple[str, str]] = field(default_factory=list)
    countdown: float | None = None


def _daily_notice(message: str, extra: dict[str, Any]) -> NoticeSpec:
    raw = extra.get("resets_at")
    when = reset_time_text(datetime.fromisoformat(raw)) if isinstance(raw, str) else "00:00 UTC"
    title = f"Daily free allocation used up \N{EM DASH} resets at {when}"
    return NoticeSpec(WARNING, title, message)


def _kind(kind: str) -> ErrorKind:
    try:
        return ErrorKind(kind)
    except ValueError:
        return ErrorKind.ERROR


_CANT_REACH = "Can't reach Workers AI"
#: The banner of each failure kind: (style, title, actions). Daily limit, rate limit and an
#: interrupted reply add figures to theirs (see notice_for_failure).
_NOTICES: dict[ErrorKind, tuple[str, str, list[tuple[str, str]]]] = {
    ErrorKind.CAPACITY: (WARNING, "Workers AI is at capacity", [ACTION_RETRY, ACTION_SWITCH_MODEL]),
    ErrorKind.DAILY_LIMIT: (WARNING, "Daily free allocation used up", []),
    ErrorKind.RATE_LIMIT: (WARNING, "Rate limited", [ACTION_RETRY]),
    ErrorKind.AUTH: (ERROR, "Authentication failed", [ACTION_SETTINGS]),
    ErrorKind.GATEWAY_AUTH: (ERROR, "Authentication failed", [ACTION_SETTINGS]),
    ErrorKind.CONFIG: (INFO, "Set up your account", [ACTION_SETTINGS, ACTION_DEMO]),
    ErrorKind.INTERRUPTED: (WARNING, "The reply was interrupted", [ACTION_RETRY]),
    ErrorKind.MODEL: (ERROR, "Model unavailable", [ACTION_SWITCH_MODEL]),
    ErrorKind.TERMS: (
        INFO,
        "This model's licence must be accepted",
        [ACTION_AGREE, ACTION_SWITCH_MODEL],
    ),
    ErrorKind.LORA: (ERROR, "LoRA adapter problem", [ACTION_SETTINGS]),
    ErrorKind.GATEWAY: (ERROR, "AI Gateway error", [ACTION_SETTINGS, ACTION_RETRY]),
    ErrorKind.NETWORK: (ERROR, _CANT_REACH, [ACTION_RETRY]),
    ErrorKind.TLS: (ERROR, "Secure connection failed", [ACTION_SETTINGS, ACTION_RETRY]),
    ErrorKind.TIMEOUT: (ERROR, "Workers AI took too long", [ACTION_RETRY]),
    ErrorKind.SERVER: (ERROR, "Workers AI had a server error", [ACTION_RETRY]),
    ErrorKind.TOO_LARGE: (ERROR, "The conversation is too long for this model", []),
    ErrorKind.BAD_REQUEST: (ERROR, "Workers AI refused the request", [ACTION_SETTINGS]),
    ErrorKind.WRONG_SERVER: (ERROR, "Something else answered, not Workers AI", [ACTION_SETTINGS]),
    ErrorKind.API: (ERROR, "The request failed", [ACTION_RETRY]),
    ErrorKind.ERROR: (ERROR, "The request failed", [ACTION_RETRY]),
}


def notice_for_failure(kind: str, message: str, *, extra: dict[str, Any]) -> NoticeSpec:
    """The banner for a failed reply: what happened in plain words and what the user can do.

    Nothing here promises a retry: the reply has failed, and any retry is the user's click.
    (While a capacity failure still waits to retry, the RetryBanner shows instead.)
    """
    error_kind = _kind(kind)
    if error_kind is ErrorKind.DAILY_LIMIT:
        return _daily_notice(message, extra)
    style, title, actions = _NOTICES[error_kind]
    if error_kind is ErrorKind.RATE_LIMIT:
        wait = figures.stored_number(extra.get("retry_after"))
        return NoticeSpec(style, title, message, list(actions), countdown=wait)
    if error_kind is ErrorKind.INTERRUPTED:
        message = f"{message} The partial reply is kept."
    return NoticeSpec(style, title, message, list(actions))


ACTION_RETRY_NOW = ("retry_now", "Retry now")
ACTION_CANCEL_RETRY = ("cancel_retry", "Cancel")
_RETRY_TITLES = {
    ErrorKind.RATE_LIMIT: "Rate limited by Workers AI",
    ErrorKind.TIMEOUT: "Workers AI is slow to answer",
    ErrorKind.SERVER: "Workers AI had a server error",
    ErrorKind.INTERRUPTED: "The reply was cut off before it started",
}


def retry_notice(kind: str) -> NoticeSpec:
    """The banner while a non-capacity failure waits for its automatic retry (with countdown)."""
    title = _RETRY_TITLES.get(_kind(kind), _CANT_REACH)
    text = "Flarechat will try again automatically."
    return NoticeSpec(WARNING, title, text, [ACTION_RETRY_NOW, ACTION_CANCEL_RETRY])


# -- status bar ---------------------------------------------------------------------------


def metrics_line(*, model: str, state: TurnState | None, neurons_today: float | None = None) -> str:
    """The status line: llama-3.3-70b · TTFT 420 ms · 38 tok/s · 12.40 neurons today.

    Figures are worded exactly as in the reply's metadata line (meta_line).
    """
    from flarechat.core.session import records

    parts = [model.rsplit("/", 1)[-1]]
    if state is not None and (
        timing := records.figures_text(records.timings_record(state), {}, {})
    ):
        parts.append(timing)
    if neurons_today:
        parts.append(figures.neurons_text(neurons_today, suffix=" today"))
    return figures.SEPARATOR.join(parts)

"""Plain words and view data for the window: messages as MessageData, metadata lines, banners.

Pure functions (no widgets, no I/O) so the controller and the window stay small and the wording
is tested in one place. Errors become *states* here, never text in the model's voice.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from flarechat.api.config import ChatRequest, Connection, GatewayOptions, Route
from flarechat.api.errors import DailyAllocationExhausted, WorkersAIError
from flarechat.core import figures
from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_SYSTEM, ConversationTree, Message
from flarechat.core.turn import TurnState
from flarechat.ui.transcript.message_view import MessageData

__all__ = [
    "NoticeSpec",
    "failure_extra",
    "message_data",
    "meta_line",
    "metrics_line",
    "notice_for_failure",
    "request_record",
    "reset_time_text",
    "retry_notice",
    "timings_record",
    "usage_record",
]

FINISH_LENGTH = "length"
#: Workers AI's free allocation resets at midnight UTC.
RESET_HOUR_FORMAT = "%H:%M"
#: Notice kinds (icon and colour of a NoticeBanner).
WARNING, ERROR, INFO = "warning", "error", "info"
ACTION_RETRY = ("retry", "Retry")
ACTION_SETTINGS = ("open_settings", "Open settings")
ACTION_SWITCH_MODEL = ("switch_model", "Switch model\N{HORIZONTAL ELLIPSIS}")
ACTION_DEMO = ("demo", "Try demo mode")


# -- messages ----------------------------------------------------------------------------


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tokens_part(usage: dict[str, Any]) -> str | None:
    return figures.tokens_text(
        prompt=_count(usage.get("prompt_tokens")),
        completion=_count(usage.get("completion_tokens")),
        cached=_count(usage.get("cached_tokens")),
    )


def meta_line(message: Message) -> str:
    """The metadata line: TTFT 420 ms · 38 tok/s · 152→418 tokens · 1.98 neurons · cache HIT."""
    timings, usage, meta = message.timings or {}, message.usage or {}, message.meta or {}
    parts: list[str] = []
    if (ttft := _number(timings.get("ttft"))) is not None:
        parts.append(figures.ttft_text(ttft))
    if (speed := _number(timings.get("tokens_per_second"))) is not None:
        parts.append(figures.speed_text(speed, estimated=bool(timings.get("tokens_estimated"))))
    if (tokens := _tokens_part(usage)) is not None:
        parts.append(tokens)
    neurons = _number(meta.get("neurons"))
    neurons = neurons if neurons is not None else _number(usage.get("neurons"))
    if neurons is not None:
        parts.append(figures.neurons_text(neurons))
    if isinstance(cache := meta.get("cache_status"), str) and cache:
        parts.append(f"cache {cache}")
    return figures.SEPARATOR.join(parts)


def _error_text(message: Message) -> str | None:
    error = message.error or {}
    text = error.get("message")
    return text if isinstance(text, str) and text else None


def message_data(
    tree: ConversationTree, message: Message, *, is_last: bool | None = None
) -> MessageData:
    """The view's picture of one message on the visible path (with its < n/m > position).

    ``is_last`` (is it the path's last message?) may be passed by callers showing a whole
    path, so a long conversation is not walked once per message.
    """
    index, count = tree.sibling_position(message.id)
    if is_last is None:
        last = tree.last()
        is_last = last is not None and last.id == message.id
    can_continue = (
        message.role == ROLE_ASSISTANT and message.finish_reason == FINISH_LENGTH and is_last
    )
    log_id = (message.meta or {}).get("log_id")
    return MessageData(
        id=message.id,
        role=message.role,
        content=message.content,
        reasoning=message.reasoning,
        status=message.status,
        model=message.model or "",
        finish_reason=message.finish_reason,
        meta_line=meta_line(message),
        log_id=log_id if isinstance(log_id, str) else None,
        error_text=_error_text(message),
        can_continue=can_continue,
        sibling_index=index - 1,
        sibling_count=count,
    )


# -- records kept with each assistant message ---------------------------------------------


def _gateway_record(options: GatewayOptions) -> dict[str, Any]:
    default = GatewayOptions()
    record = {k: v for k, v in asdict(options).items() if v != getattr(default, k)}
    if "metadata" in record:
        record["metadata"] = dict(options.metadata)
    return record


def request_record(conn: Connection, request: ChatRequest) -> dict[str, Any]:
    """The exact request (model, route, endpoint, params, system prompt, gateway options).

    Never a token: only names and values that are safe to export and to show as code.
    """
    system = [m.content for m in request.messages if m.role == ROLE_SYSTEM]
    uses_gateway = conn.route is not Route.DIRECT
    return {
        "model": request.model,
        "route": conn.route.value,
        "endpoint": conn.endpoint.value,
        "api_base": conn.api_base,
        "gateway_base": conn.gateway_base if conn.route is Route.GATEWAY_URL else None,
        "gateway_id": conn.gateway_id if uses_gateway else None,
        "params": {k: v for k, v in asdict(request.params).items() if v is not None},
        "system_prompt": system[0] if system else "",
        "message_count": len(request.messages),
        "reject_if_busy": request.reject_if_busy,
        "gateway": _gateway_record(request.gateway) if uses_gateway else {},
        "session_id": request.session_id,
        "stream": request.stream,
    }


def usage_record(state: TurnState) -> dict[str, Any] | None:
    if state.usage is None:
        return None
    return {k: v for k, v in asdict(state.usage).items() if v is not None}


def meta_record(state: TurnState) -> dict[str, Any] | None:
    if state.meta is None:
        return None
    return {k: v for k, v in asdict(state.meta).items() if v is not None}


def timings_record(state: TurnState) -> dict[str, Any]:
    record: dict[str, Any] = {"attempts": state.attempt}
    if state.ttft is not None:
        record["ttft"] = round(state.ttft, figures.TTFT_DECIMALS)
    if state.duration is not None:
        record["duration"] = round(state.duration, figures.DURATION_DECIMALS)
    if state.tokens_per_second is not None:
        record["tokens_per_second"] = round(state.tokens_per_second, figures.RATE_DECIMALS)
        record["tokens_estimated"] = state.tokens_are_estimated
    return record


# -- failures -----------------------------------------------------------------------------


def failure_extra(error: WorkersAIError, *, model: str, attempts: int) -> dict[str, Any]:
    """Plain values about a failure for the ``turn_failed`` signal (never the token)."""
    extra: dict[str, Any] = {"model": model, "attempts": attempts}
    for name in ("status", "code", "retry_after", "request_id"):
        if (value := getattr(error, name)) is not None:
            extra[name] = value
    if isinstance(error, DailyAllocationExhausted):
        extra["resets_at"] = error.resets_at.isoformat()
    return extra


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


def notice_for_failure(kind: str, message: str, *, extra: dict[str, Any]) -> NoticeSpec:
    """The banner for a failed reply (capacity has its own RetryBanner and is not handled here)."""
    if kind == "daily_limit":
        return _daily_notice(message, extra)
    if kind == "rate_limit":
        wait = _number(extra.get("retry_after"))
        return NoticeSpec(WARNING, "Rate limited", message, [ACTION_RETRY], countdown=wait)
    if kind in ("auth", "gateway_auth"):
        return NoticeSpec(ERROR, "Authentication failed", message, [ACTION_SETTINGS])
    if kind == "config":
        return NoticeSpec(INFO, "Set up your account", message, [ACTION_SETTINGS, ACTION_DEMO])
    if kind == "interrupted":
        text = f"{message} The partial reply is kept."
        return NoticeSpec(WARNING, "The reply was interrupted", text, [ACTION_RETRY])
    if kind == "model":
        return NoticeSpec(ERROR, "Model unavailable", message, [ACTION_SWITCH_MODEL])
    if kind == "gateway":
        return NoticeSpec(ERROR, "AI Gateway error", message, [ACTION_SETTINGS, ACTION_RETRY])
    if kind in ("network", "tls", "timeout", "server"):
        return NoticeSpec(ERROR, "Can't reach Workers AI", message, [ACTION_RETRY])
    if kind == "too_large":
        return NoticeSpec(ERROR, "The conversation is too long for this model", message)
    return NoticeSpec(ERROR, "The request failed", message, [ACTION_RETRY])


ACTION_RETRY_NOW = ("retry_now", "Retry now")
ACTION_CANCEL_RETRY = ("cancel_retry", "Cancel")
_RETRY_TITLES = {
    "rate_limit": "Rate limited by Workers AI",
    "timeout": "Workers AI is slow to answer",
    "server": "Workers AI had a server error",
    "interrupted": "The reply was cut off before it started",
}


def retry_notice(kind: str) -> NoticeSpec:
    """The banner while a non-capacity failure waits for its automatic retry (with countdown)."""
    title = _RETRY_TITLES.get(kind, "Can't reach Workers AI")
    text = "Flarechat will try again automatically."
    return NoticeSpec(WARNING, title, text, [ACTION_RETRY_NOW, ACTION_CANCEL_RETRY])


# -- status bar ---------------------------------------------------------------------------


def metrics_line(*, model: str, state: TurnState | None, neurons_today: float | None = None) -> str:
    """The status line: llama-3.3-70b · TTFT 420 ms · 38 tok/s · 12.40 neurons today.

    Figures are worded exactly as in the reply's metadata line (meta_line).
    """
    parts = [model.rsplit("/", 1)[-1]]
    if state is not None and state.ttft is not None:
        parts.append(figures.ttft_text(state.ttft))
    if state is not None and (speed := state.tokens_per_second) is not None:
        parts.append(figures.speed_text(speed, estimated=state.tokens_are_estimated))
    if neurons_today:
        parts.append(figures.neurons_text(neurons_today, suffix=" today"))
    return figures.SEPARATOR.join(parts)

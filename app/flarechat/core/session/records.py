"""The one record builder: what a turn leaves behind (request, usage, metadata, timings) and
the line of figures the window and the CLI both print from it.

A request's record holds every input ``build_request`` made it from but the history (the path
to the reply, kept in the tree) and the model's catalogue entry (it only checks values):
``request_from_record`` gives back the very request that was sent, so View as code never
rebuilds a request of its own (issue 23).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any

from flarechat.api.config import (
    ChatMessage,
    ChatRequest,
    Connection,
    GatewayOptions,
    Route,
    SamplingParams,
)
from flarechat.api.errors import ErrorKind, WorkersAIError
from flarechat.api.schema import ModelSchema
from flarechat.core import figures, ledger
from flarechat.core.connect import HistoryMessage, build_request, capabilities_from
from flarechat.core.turn import TurnState

__all__ = [
    "QUEUE_SHOWN_FROM",
    "error_record",
    "figures_text",
    "meta_record",
    "reply_record",
    "request_from_record",
    "request_record",
    "summary_line",
    "timings_record",
    "tool_calls_record",
    "usage_record",
    "waited_out_capacity",
]

#: A wait before the server answered is shown from this many seconds on (shorter is latency).
QUEUE_SHOWN_FROM = 1.0
_ROLE_SYSTEM = "system"
_SAMPLING = frozenset(f.name for f in dataclasses.fields(SamplingParams))
_GATEWAY = frozenset(f.name for f in dataclasses.fields(GatewayOptions))
_SCHEMA = frozenset(f.name for f in dataclasses.fields(ModelSchema))


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
    system = [m.content for m in request.messages if m.role == _ROLE_SYSTEM]
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
        **_capabilities_record(request),
        **_schema_record(request.model_schema),
    }


def _schema_record(schema: ModelSchema | None) -> dict[str, Any]:
    """The model's schema summary, which picked the wire forms (a dozen flags)."""
    if schema is None:
        return {}
    record = asdict(schema)
    record["reasoning_efforts"] = list(schema.reasoning_efforts)
    return {"schema": record}


def request_from_record(
    record: Mapping[str, Any], history: Iterable[HistoryMessage | ChatMessage]
) -> ChatRequest:
    """The request ``record`` was made from, over ``history``: the inverse of
    ``request_record``, built by the same ``build_request`` from the same inputs.

    Raises ValueError (``ConfigurationError``) when a stored option is unreadable.
    """
    session_id = record.get("session_id")
    request = build_request(
        model=str(record.get("model") or ""),
        history=history,
        system_prompt=str(record.get("system_prompt") or ""),
        params=_params(record),
        reject_if_busy=bool(record.get("reject_if_busy")),
        gateway=_gateway(record),
        session_id=session_id if isinstance(session_id, str) else None,
        capabilities=capabilities_from(record),  # the same keys as a conversation's options
        model_schema=_schema(record),
    )
    return dataclasses.replace(request, stream=record.get("stream") is not False)


def _fields(record: Mapping[str, Any], key: str, names: frozenset[str]) -> dict[str, Any]:
    raw = record.get(key)
    return {k: v for k, v in raw.items() if k in names} if isinstance(raw, Mapping) else {}


def _params(record: Mapping[str, Any]) -> SamplingParams:
    try:
        return SamplingParams(**_fields(record, "params", _SAMPLING))
    except TypeError:
        return SamplingParams()


def _gateway(record: Mapping[str, Any]) -> GatewayOptions:
    try:
        return GatewayOptions(**_fields(record, "gateway", _GATEWAY))
    except TypeError:
        return GatewayOptions()


def _schema(record: Mapping[str, Any]) -> ModelSchema | None:
    values = _fields(record, "schema", _SCHEMA)
    if not isinstance(values.get("model"), str):
        return None
    efforts = values.get("reasoning_efforts")
    values["reasoning_efforts"] = tuple(efforts) if isinstance(efforts, list) else ()
    try:
        return ModelSchema(**values)
    except TypeError:
        return None


def _capabilities_record(request: ChatRequest) -> dict[str, Any]:
    """The capability options the request used (only those set), and how many images."""
    record: dict[str, Any] = {}
    fmt = request.response_format
    if fmt is not None:
        record["response_format"] = (
            {"type": "json_schema", "schema": dict(fmt.schema), "name": fmt.name}
            if fmt.kind == "json_schema" and fmt.schema is not None
            else {"type": "json_object"}
        )
    if request.tools:
        record["tools"] = [tool.flat() for tool in request.tools]
    if request.tools and request.tool_choice is not None:
        choice = request.tool_choice
        record["tool_choice"] = {"name": choice.name} if choice.mode == "function" else choice.mode
    optional = {
        "reasoning_effort": request.reasoning_effort,
        "enable_thinking": request.enable_thinking,
        "lora": request.lora,
    }
    record.update({k: v for k, v in optional.items() if v is not None})
    images = sum(len(m.images) for m in request.messages)
    if images:
        record["images"] = images
    return record


def usage_record(state: TurnState) -> dict[str, Any] | None:
    if state.usage is None:
        return None
    return {k: v for k, v in asdict(state.usage).items() if v is not None}


def meta_record(state: TurnState) -> dict[str, Any] | None:
    """The response's metadata, and the note on how it came (streaming turned off)."""
    if state.meta is None:
        return None
    record = {k: v for k, v in asdict(state.meta).items() if v is not None}
    if state.note:
        record["note"] = state.note
    return record


def tool_calls_record(state: TurnState) -> list[dict[str, Any]]:
    """The reply's tool calls as stored on its message: ``{"id", "name", "arguments"}``."""
    return [{"id": c.id, "name": c.name, "arguments": c.arguments_json} for c in state.calls]


def waited_out_capacity(state: TurnState) -> bool:
    """Whether a capacity refusal (3040) was waited out before this attempt."""
    retry = state.last_retry
    return retry is not None and retry.error.kind == ErrorKind.CAPACITY


def timings_record(state: TurnState, *, queued: bool = False) -> dict[str, Any]:
    """The turn's timings, rounded as they are shown, all measured from the user's send.

    ``queued``: the reply waited in Workers AI's queue on purpose (Wait in queue); a 3040
    waited out says so too. Only then is the wait before the answer called a queue.
    """
    record: dict[str, Any] = {"attempts": state.attempt, "streamed": state.streamed}
    if queued or waited_out_capacity(state):
        record["queued"] = True
    measures = {
        "queue_wait": (state.queue_wait, figures.DURATION_DECIMALS),
        "ttft": (state.ttft, figures.TTFT_DECIMALS),
        "generation": (state.generation, figures.DURATION_DECIMALS),
        "duration": (state.duration, figures.DURATION_DECIMALS),
        "tokens_per_second": (state.tokens_per_second, figures.RATE_DECIMALS),
    }
    for name, (value, decimals) in measures.items():
        if value is not None:
            record[name] = round(value, decimals)
    if state.tokens_per_second is not None:
        record["tokens_estimated"] = state.tokens_are_estimated
    return record


def error_record(error: WorkersAIError) -> dict[str, Any]:
    """A failure as plain values (for JSON output and the store); never contains a token."""
    resets_at = getattr(error, "resets_at", None)
    return {
        "kind": str(error.kind),
        "message": error.message,
        "status": error.status,
        "code": error.code,
        "request_id": error.request_id,
        "resets_at": resets_at.isoformat() if isinstance(resets_at, datetime) else None,
    }


def reply_record(state: TurnState) -> dict[str, Any]:
    """The whole turn as JSON-ready plain values: text, usage, metadata, timings, error."""
    return {
        "status": state.status,
        "text": state.text,
        "reasoning": state.reasoning,
        "finish_reason": state.finish_reason,
        "usage": usage_record(state),
        "meta": meta_record(state),
        "timings": timings_record(state),
        "attempts": state.attempt,
        "error": error_record(state.error) if state.error is not None else None,
    }


def _timing_parts(timings: Mapping[str, Any]) -> list[str]:
    parts: list[str] = []
    queue = figures.stored_number(timings.get("queue_wait"))
    streamed = timings.get("streamed") is not False
    # Called a queue only when the protocol said so (Wait in queue, a 3040 waited out): a
    # slow first byte is in the TTFT; a reply that came as one body spent all its time
    # "before the headers" generating.
    queued = timings.get("queued") is True
    if queued and streamed and queue is not None and queue >= QUEUE_SHOWN_FROM:
        parts.append(figures.queue_text(queue))
    if (ttft := figures.stored_number(timings.get("ttft"))) is not None:
        parts.append(figures.ttft_text(ttft))
    elif not streamed and (total := figures.stored_number(timings.get("duration"))):
        parts.append(figures.total_text(total))
    if (speed := figures.stored_number(timings.get("tokens_per_second"))) is not None:
        parts.append(figures.speed_text(speed, estimated=bool(timings.get("tokens_estimated"))))
    return parts


def figures_text(
    timings: Mapping[str, Any] | None,
    usage: Mapping[str, Any] | None,
    meta: Mapping[str, Any] | None,
) -> str:
    """queued 4.20 s · TTFT 420 ms · 38 tok/s · 152→418 tokens · 1.98 neurons · cache HIT.

    The same words for the same records wherever they are printed: the window's metadata
    line reads them from the stored message, the CLI from the records of the turn it ran.
    """
    usage, meta = usage or {}, meta or {}
    parts = _timing_parts(timings or {})
    tokens = figures.tokens_text(
        prompt=figures.stored_count(usage.get("prompt_tokens")),
        completion=figures.stored_count(usage.get("completion_tokens")),
        cached=figures.stored_count(usage.get("cached_tokens")),
    )
    parts += [tokens] if tokens else []
    # Neurons as the ledger charges them: a cache HIT's replayed figure was not billed.
    neurons = figures.stored_number(meta.get("neurons"))
    neurons = neurons if neurons is not None else figures.stored_number(usage.get("neurons"))
    spent = ledger.charge(usage, meta, None)
    if neurons is not None and spent is not None:
        parts.append(figures.neurons_text(spent.neurons))
    if isinstance(cache := meta.get("cache_status"), str) and cache:
        parts.append(f"cache {cache}")
    return figures.SEPARATOR.join(parts)


def summary_line(state: TurnState, *, model: str) -> str:
    """The CLI's closing line: the model, the figures line, then the ids support asks for."""
    line = figures_text(timings_record(state), usage_record(state), meta_record(state))
    parts = [model, *([line] if line else [])]
    if (meta := state.meta) is not None:
        parts += [f"log {meta.log_id}"] if meta.log_id else []
        parts += [f"request {meta.request_id}"] if meta.request_id else []
    return figures.SEPARATOR.join(parts)

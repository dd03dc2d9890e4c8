"""Request building: URL per Route x Endpoint, headers (auth, gateway options) and the JSON body."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from flarechat.api.config import (
    ChatMessage,
    ChatRequest,
    Connection,
    Endpoint,
    GatewayOptions,
    Route,
    SamplingParams,
)
from flarechat.gateway_limits import (
    BACKOFF_KINDS,
    CACHE_TTL_MAX,
    CACHE_TTL_MIN,
    MAX_ATTEMPTS_MAX,
    MAX_ATTEMPTS_MIN,
    METADATA_MAX_ENTRIES,
    REQUEST_TIMEOUT_MAX_MS,
    REQUEST_TIMEOUT_MIN_MS,
    RETRY_DELAY_MAX_MS,
    RETRY_DELAY_MIN_MS,
)

__all__ = [
    "BACKOFF_KINDS",
    "CACHE_TTL_MAX",
    "CACHE_TTL_MIN",
    "MAX_ATTEMPTS_MAX",
    "METADATA_MAX_ENTRIES",
    "RETRY_DELAY_MAX_MS",
    "PreparedRequest",
    "api_headers",
    "build_chat_request",
    "gateway_headers",
    "validate_gateway_options",
]

#: Characters a Workers AI model id may hold. '@' and '/' stay raw in the path: Cloudflare
#: answers a percent-encoded '%2F' with 7000 "No route for that URI".
_MODEL_ID = re.compile(r"^[A-Za-z0-9@._:+~\-]+(/[A-Za-z0-9@._:+~\-]+)*$")
_SAMPLING_FIELDS = (
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
)


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """Everything needed to send one chat request (never logged whole: headers hold the token)."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


def build_chat_request(
    conn: Connection, request: ChatRequest, *, user_agent: str
) -> PreparedRequest:
    """Validate and assemble a chat request; raises ValueError before anything is sent."""
    if not request.messages:
        raise ValueError("A chat request needs at least one message.")
    if conn.route is not Route.DIRECT and not conn.gateway_id.strip():
        raise ValueError("A gateway route needs a gateway ID; set one in Settings.")
    headers = api_headers(conn, user_agent=user_agent)
    headers["Accept"] = "text/event-stream" if request.stream else "application/json"
    if request.session_id:
        headers["x-session-affinity"] = _header_value("session id", request.session_id)
    if conn.route is not Route.DIRECT:
        headers.update(gateway_headers(conn, request.gateway))
    return PreparedRequest(
        url=chat_url(conn, request.model), headers=headers, body=chat_body(conn, request)
    )


def api_headers(conn: Connection, *, user_agent: str) -> dict[str, str]:
    """Authorization and User-Agent, shared by every call to api.cloudflare.com or the gateway."""
    if not conn.token:
        raise ValueError("No Cloudflare API token is set.")
    token = _header_value("API token", conn.token.reveal())
    return {"Authorization": f"Bearer {token}", "User-Agent": user_agent}


def chat_url(conn: Connection, model: str) -> str:
    """The URL for this connection's route and endpoint (model id raw in native paths)."""
    _check_model(model)
    account = _segment("account ID", conn.account_id)
    if conn.route is Route.GATEWAY_URL:
        gateway = _segment("gateway ID", conn.gateway_id)
        base = f"{conn.gateway_base.rstrip('/')}/{account}/{gateway}/workers-ai"
        tail = "v1/chat/completions" if conn.endpoint is Endpoint.OPENAI else model
        return f"{base}/{tail}"
    base = f"{conn.api_base.rstrip('/')}/accounts/{account}/ai"
    if conn.endpoint is Endpoint.OPENAI:
        return f"{base}/v1/chat/completions"
    return f"{base}/run/{model}"


def chat_body(conn: Connection, request: ChatRequest) -> dict[str, Any]:
    """The JSON body: messages, stream, max_tokens always, sampling only when set, options."""
    body: dict[str, Any] = {}
    if conn.endpoint is Endpoint.OPENAI:
        body["model"] = request.model
    body["messages"] = [_message(m) for m in request.messages]
    body["stream"] = request.stream
    if request.stream and conn.endpoint is Endpoint.OPENAI:
        # OpenAI-compatible servers report usage on a stream only when asked to.
        body["stream_options"] = {"include_usage": True}
    body.update(_sampling(request.params))
    if request.reject_if_busy:
        # Top level of the body, never inside model inputs (cloudflare-api.md §2).
        body["options"] = {"rejectIfBusy": True}
    return body


def gateway_headers(conn: Connection, options: GatewayOptions) -> dict[str, str]:
    """cf-aig-* headers for a gateway route (validated first)."""
    validate_gateway_options(options)
    headers: dict[str, str] = {}
    if conn.route is Route.GATEWAY_REST:
        headers["cf-aig-gateway-id"] = _header_value("gateway ID", conn.gateway_id.strip())
    elif conn.gateway_token:
        token = _header_value("gateway token", conn.gateway_token.reveal())
        headers["cf-aig-authorization"] = f"Bearer {token}"
    if options.skip_cache:
        headers["cf-aig-skip-cache"] = "true"
    optional: dict[str, object | None] = {
        "cf-aig-cache-ttl": options.cache_ttl,
        "cf-aig-cache-key": options.cache_key,
        "cf-aig-request-timeout": options.request_timeout_ms,
        "cf-aig-max-attempts": options.max_attempts,
        "cf-aig-retry-delay": options.retry_delay_ms,
        "cf-aig-backoff": options.backoff,
    }
    headers.update({k: _header_value(k, str(v)) for k, v in optional.items() if v is not None})
    if options.collect_log is not None:
        headers["cf-aig-collect-log"] = "true" if options.collect_log else "false"
    if options.metadata:
        headers["cf-aig-metadata"] = json.dumps(dict(options.metadata), separators=(",", ":"))
    return headers


def validate_gateway_options(options: GatewayOptions) -> None:
    """Raise ValueError, with a message a person can act on, for any out-of-range option."""
    _check_int_range(
        "Cache TTL", options.cache_ttl, low=CACHE_TTL_MIN, high=CACHE_TTL_MAX, unit=" s"
    )
    _check_int_range(
        "Gateway max attempts", options.max_attempts, low=MAX_ATTEMPTS_MIN, high=MAX_ATTEMPTS_MAX
    )
    _check_int_range(
        "Gateway retry delay",
        options.retry_delay_ms,
        low=RETRY_DELAY_MIN_MS,
        high=RETRY_DELAY_MAX_MS,
        unit=" ms",
    )
    _check_int_range(
        "Gateway request timeout",
        options.request_timeout_ms,
        low=REQUEST_TIMEOUT_MIN_MS,
        high=REQUEST_TIMEOUT_MAX_MS,
        unit=" ms",
    )
    if options.backoff is not None and options.backoff not in BACKOFF_KINDS:
        kinds = ", ".join(sorted(BACKOFF_KINDS))
        raise ValueError(f"Gateway backoff must be one of {kinds}, not {options.backoff!r}.")
    if options.cache_key is not None and not options.cache_key.strip():
        raise ValueError("The gateway cache key must not be blank.")
    _check_metadata(options)


def _check_metadata(options: GatewayOptions) -> None:
    if len(options.metadata) > METADATA_MAX_ENTRIES:
        raise ValueError(
            f"AI Gateway accepts at most {METADATA_MAX_ENTRIES} metadata entries, "
            f"not {len(options.metadata)}."
        )
    for key, value in options.metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError("Gateway metadata keys must be non-empty strings.")
        if not isinstance(value, str | int | float | bool):
            raise ValueError(
                f"Gateway metadata {key!r} must be a string, number or boolean, "
                f"not {type(value).__name__}."
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"Gateway metadata {key!r} must be a finite number.")


def _check_int_range(
    label: str, value: int | None, *, low: int, high: int | None = None, unit: str = ""
) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{label} must be a whole number, not {value!r}.")
    if value < low or (high is not None and value > high):
        allowed = f"at least {low:,}{unit}"
        if high is not None:
            allowed = f"between {low:,}{unit} and {high:,}{unit}"
        raise ValueError(f"{label} must be {allowed}, not {value:,}{unit}.")


def _message(message: ChatMessage) -> dict[str, str]:
    # Workers AI rejects null content in its schema check; send "" instead.
    out = {"role": message.role, "content": message.content or ""}
    if message.role == "assistant" and message.reasoning:
        out["reasoning"] = message.reasoning
    return out


def _sampling(params: SamplingParams) -> dict[str, int | float]:
    if isinstance(params.max_tokens, bool) or params.max_tokens < 1:
        raise ValueError(f"Max tokens must be at least 1, not {params.max_tokens!r}.")
    values: dict[str, int | float] = {"max_tokens": params.max_tokens}
    for name in _SAMPLING_FIELDS:
        value = getattr(params, name)
        if value is not None:
            values[name] = value
    return values


def _check_model(model: str) -> None:
    if not _MODEL_ID.fullmatch(model) or any(part in {".", ".."} for part in model.split("/")):
        raise ValueError(f"{model!r} is not a valid Workers AI model id.")


def _segment(label: str, value: str) -> str:
    if not value.strip():
        raise ValueError(f"The {label} is not set.")
    return quote(value.strip(), safe="")


def _header_value(label: str, value: str) -> str:
    if not value.isascii() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError(f"The {label} contains characters that cannot be sent in a header.")
    return value

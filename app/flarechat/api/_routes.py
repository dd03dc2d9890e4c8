"""Request building: URL per Route x Endpoint, headers (auth, gateway options) and the JSON body."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from flarechat.api._body import chat_body, effective_endpoint, sends_stream
from flarechat.api.config import ChatRequest, Connection, Endpoint, GatewayOptions, Route
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
    "AGREE_PROMPT",
    "BACKOFF_KINDS",
    "CACHE_TTL_MAX",
    "CACHE_TTL_MIN",
    "MAX_ATTEMPTS_MAX",
    "METADATA_MAX_ENTRIES",
    "RETRY_DELAY_MAX_MS",
    "PreparedRequest",
    "api_headers",
    "build_agree_request",
    "build_chat_request",
    "chat_url",
    "effective_stream",
    "gateway_headers",
    "validate_gateway_options",
]

#: Characters a Workers AI model id may hold. '@' and '/' stay raw in the path: Cloudflare
#: answers a percent-encoded '%2F' with 7000 "No route for that URI".
_MODEL_ID = re.compile(r"^[A-Za-z0-9@._:+~\-]+(/[A-Za-z0-9@._:+~\-]+)*$")
#: The documented body that accepts a model's licence terms (5016).
AGREE_PROMPT = "agree"


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """Everything needed to send one chat request (never logged whole: headers hold the token)."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    #: whether the body asks for a stream (JSON mode on the native route turns it off)
    stream: bool = True
    #: the request asked to stream but this endpoint cannot with these options
    stream_disabled: bool = False


def build_chat_request(
    conn: Connection, request: ChatRequest, *, user_agent: str
) -> PreparedRequest:
    """Validate and assemble a chat request; raises ValueError before anything is sent."""
    if not request.messages:
        raise ValueError("A chat request needs at least one message.")
    if conn.route is not Route.DIRECT and not conn.gateway_id.strip():
        raise ValueError("A gateway route needs a gateway ID; set one in Settings.")
    endpoint = effective_endpoint(conn.endpoint, request)
    stream = sends_stream(conn.endpoint, request)
    body = chat_body(request, endpoint=conn.endpoint)
    headers = api_headers(conn, user_agent=user_agent)
    headers["Accept"] = "text/event-stream" if stream else "application/json"
    if request.session_id:
        headers["x-session-affinity"] = _header_value("session id", request.session_id)
    if conn.route is not Route.DIRECT:
        headers.update(gateway_headers(conn, request.gateway))
    return PreparedRequest(
        url=chat_url(conn, request.model, endpoint=endpoint),
        headers=headers,
        body=body,
        stream=stream,
        stream_disabled=request.stream and not stream,
    )


def build_agree_request(conn: Connection, model: str, *, user_agent: str) -> PreparedRequest:
    """The licence agreement for ``model`` (5016): ``{"prompt": "agree"}`` on the native route
    of this connection (cloudflare-api.md §7.1)."""
    if conn.route is not Route.DIRECT and not conn.gateway_id.strip():
        raise ValueError("A gateway route needs a gateway ID; set one in Settings.")
    headers = api_headers(conn, user_agent=user_agent)
    headers["Accept"] = "application/json"
    if conn.route is not Route.DIRECT:
        headers.update(gateway_headers(conn, GatewayOptions()))
    url = chat_url(conn, model, endpoint=Endpoint.NATIVE)
    return PreparedRequest(url=url, headers=headers, body={"prompt": AGREE_PROMPT}, stream=False)


def effective_stream(conn: Connection, request: ChatRequest) -> bool:
    """Whether ``request`` is sent streaming on ``conn``: native JSON mode does not stream."""
    return sends_stream(conn.endpoint, request)


def api_headers(conn: Connection, *, user_agent: str) -> dict[str, str]:
    """Authorization and User-Agent, shared by every call to api.cloudflare.com or the gateway."""
    if not conn.token:
        raise ValueError("No Cloudflare API token is set.")
    token = _header_value("API token", conn.token.reveal())
    return {"Authorization": f"Bearer {token}", "User-Agent": user_agent}


def chat_url(conn: Connection, model: str, *, endpoint: Endpoint | None = None) -> str:
    """The URL for this connection's route and ``endpoint`` (default: the connection's);
    the model id stays raw in native paths."""
    _check_model(model)
    endpoint = endpoint or conn.endpoint
    account = _segment("account ID", conn.account_id)
    if conn.route is Route.GATEWAY_URL:
        gateway = _segment("gateway ID", conn.gateway_id)
        base = f"{conn.gateway_base.rstrip('/')}/{account}/{gateway}/workers-ai"
        tail = "v1/chat/completions" if endpoint is Endpoint.OPENAI else model
        return f"{base}/{tail}"
    base = f"{conn.api_base.rstrip('/')}/accounts/{account}/ai"
    if endpoint is Endpoint.OPENAI:
        return f"{base}/v1/chat/completions"
    return f"{base}/run/{model}"


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

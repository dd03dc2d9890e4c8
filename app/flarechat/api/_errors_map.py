"""Error classification: any error body shape to the exception tree, code first, then status."""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from flarechat import safejson
from flarechat.api import _messages as msg
from flarechat.api._redact import redact
from flarechat.api.errors import (
    APIStatusError,
    AuthenticationFailed,
    BadRequest,
    CapacityExceeded,
    DailyAllocationExhausted,
    FineTuneIncomplete,
    GatewayAuthenticationFailed,
    GatewayError,
    LoraUnsupported,
    ModelUnavailable,
    RateLimited,
    Redirected,
    RequestTooLarge,
    ServerError,
    TermsNotAccepted,
    UpstreamTimeout,
    WebPage,
    WorkersAIError,
)

__all__ = [
    "DETAIL_LIMIT",
    "ServerProblem",
    "classify",
    "classify_payload",
    "clean_server_message",
    "parse_error_body",
    "parse_retry_after",
    "web_page",
]

#: Longest server text kept in ``.detail`` (a proxy's HTML page can be huge).
DETAIL_LIMIT = 2000
_TITLE_LIMIT = 120
_GATEWAY_CODES = range(2000, 2100)
HTTP_REDIRECT = range(300, 400)
HTTP_CLIENT_ERROR = 400
HTTP_SERVER_ERROR = 500
#: "Network Authentication Required": what a well-behaved captive portal answers.
HTTP_NETWORK_AUTH = 511

_CODE_CLASS: dict[int, type[APIStatusError]] = {
    3040: CapacityExceeded,
    3036: DailyAllocationExhausted,
    4006: DailyAllocationExhausted,
    3021: RateLimited,
    2003: RateLimited,
    10000: AuthenticationFailed,
    1000: AuthenticationFailed,
    9109: AuthenticationFailed,
    2009: GatewayAuthenticationFailed,
    5007: ModelUnavailable,
    3042: ModelUnavailable,
    5028: ModelUnavailable,
    5035: ModelUnavailable,
    5016: TermsNotAccepted,
    5005: LoraUnsupported,
    3039: FineTuneIncomplete,
    5018: ModelUnavailable,
    3041: ModelUnavailable,
    3006: RequestTooLarge,
    5021: RequestTooLarge,
    3007: UpstreamTimeout,
    3008: UpstreamTimeout,
    3046: UpstreamTimeout,
}
_STATUS_CLASS: dict[int, type[APIStatusError]] = {
    401: AuthenticationFailed,
    403: AuthenticationFailed,
    402: GatewayError,
    408: UpstreamTimeout,
    413: RequestTooLarge,
    429: RateLimited,
    504: UpstreamTimeout,
}

#: Statuses whose usual meaning (token, billing) can't be trusted from a non-JSON page.
_NOT_API_STATUSES = frozenset({401, 402, 403})

_PREFIX = re.compile(r"^\s*(?:(?:AiError|InferenceUpstreamError|Ai|Error)\s*:\s*|\d{4,5}\s*:\s*)+")
_TRAILING_ID = re.compile(r"\s*\(([0-9a-fA-F][0-9a-fA-F\-]{6,})\)\s*\.?\s*$")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class ServerProblem:
    """What an error body says, whatever its shape."""

    code: int | None = None
    message: str | None = None
    name: str | None = None
    is_json: bool = True


def classify(
    *,
    status: int,
    body: str,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
    model: str | None = None,
    url: str | None = None,
) -> WorkersAIError:
    """Map an HTTP error response to the exception tree (code first, then status).

    A 3xx (``url`` is the request's, to resolve a relative Location) is :class:`Redirected`
    and a 511 a captive portal's :class:`WebPage`: neither is the API answering.
    """
    known = tuple(secrets)
    if status in HTTP_REDIRECT:
        return _redirected(status, _header(headers or {}, "location"), url=url, secrets=known)
    if status == HTTP_NETWORK_AUTH:
        return web_page(body, status=status, secrets=known)
    problem = parse_error_body(body)
    return _build(
        problem, status=status, raw=body, headers=headers or {}, secrets=known, model=model
    )


def classify_payload(
    payload: Mapping[str, Any],
    *,
    status: int,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str] = (),
    model: str | None = None,
) -> WorkersAIError:
    """Map an already-parsed error object (an ``errors`` event mid-stream, or a 200 failure)."""
    problem = _from_json(payload)
    raw = json.dumps(payload, ensure_ascii=False, default=str)
    return _build(
        problem, status=status, raw=raw, headers=headers or {}, secrets=tuple(secrets), model=model
    )


def web_page(body: str, *, status: int, secrets: Iterable[str] = ()) -> WebPage:
    """A web page (HTML) where the API's JSON or event stream should have been."""
    known = tuple(secrets)
    title = _page_title(body)
    message = msg.web_page(title=redact(title, known) if title else None)
    return WebPage(message, detail=redact(body, known)[:DETAIL_LIMIT] or None, status=status)


def _redirected(
    status: int, location: str | None, *, url: str | None, secrets: tuple[str, ...]
) -> Redirected:
    target = _bare_url(urljoin(url or "", location)) if location else None
    shown = redact(target, secrets) if target else "another address"
    return Redirected(
        msg.redirected(status=status, target=shown),
        location=redact(target, secrets) if target else None,
        status=status,
        detail=f"Location: {shown}",
    )


def _bare_url(url: str) -> str:
    """scheme://host[:port]/path: no credentials, query or fragment (they may hold secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: show the host alone
        port = None
    netloc = f"[{host}]" if ":" in host else host
    netloc = f"{netloc}:{port}" if port else netloc
    return urlunsplit((parts.scheme, netloc, parts.path or "/", "", ""))


def parse_error_body(body: str) -> ServerProblem:
    """Read any known error shape; a non-JSON body (a proxy's HTML page) gives its title."""
    if not body.strip():
        return ServerProblem()  # nothing said: the status alone decides
    try:
        payload = safejson.loads(body)
    except ValueError:
        return ServerProblem(message=_page_title(body), is_json=False)
    if not isinstance(payload, Mapping):
        return ServerProblem(message=None)
    return _from_json(payload)


def clean_server_message(text: str) -> tuple[str, str | None]:
    """Strip "AiError: " style prefixes and a trailing "(request id)"; return (text, id)."""
    text = _PREFIX.sub("", text.strip())
    match = _TRAILING_ID.search(text)
    request_id = None
    if match:
        request_id = match.group(1)
        text = text[: match.start()].rstrip()
    return text.strip(), request_id


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Retry-After as seconds from now: delta-seconds or an HTTP-date; ``None`` if absent/bad."""
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):  # NaN, or "1e309": no time anyone could wait
        return None
    return max(seconds, 0.0)


def _from_json(payload: Mapping[str, Any]) -> ServerProblem:
    name = payload.get("name") if isinstance(payload.get("name"), str) else None
    for key in ("errors", "error"):
        entry = _first_entry(payload.get(key))
        if entry is not None:
            code = _int(entry.get("code")) or _int(payload.get("internalCode"))
            return ServerProblem(code=code, message=_text(entry.get("message")), name=name)
    code = _int(payload.get("internalCode"))
    message = _text(payload.get("message")) or _text(payload.get("description"))
    return ServerProblem(code=code, message=message, name=name)


def _first_entry(value: object) -> Mapping[str, Any] | None:
    if isinstance(value, list) and value and isinstance(value[0], Mapping):
        return value[0]
    if isinstance(value, Mapping):  # OpenAI-ish {"error": {"code": "...", "message": ...}}
        return value
    return None


def _build(
    problem: ServerProblem,
    *,
    status: int,
    raw: str,
    headers: Mapping[str, str],
    secrets: tuple[str, ...],
    model: str | None,
) -> WorkersAIError:
    cls = _choose_class(problem, status)
    server_text, trailing_id = clean_server_message(problem.message or "")
    server_text = redact(server_text, secrets)
    if problem.is_json:
        message = msg.for_error(cls, code=problem.code, server_text=server_text, model=model)
    elif cls is BadRequest:
        message = msg.not_the_api(status=status, title=server_text or None)
    else:
        message = msg.for_error(cls, code=None, server_text="", model=model)
        message = msg.with_page_note(message, status=status, title=server_text or None)
    fields: dict[str, Any] = {
        "detail": redact(raw, secrets)[:DETAIL_LIMIT] or None,
        "status": status,
        "code": problem.code,
        "request_id": _header(headers, "cf-ai-req-id") or trailing_id,
        "retry_after": parse_retry_after(_header(headers, "retry-after")),
    }
    if cls is TermsNotAccepted:
        fields["model"] = model
    return cls(redact(message, secrets), **fields)


def _choose_class(problem: ServerProblem, status: int) -> type[APIStatusError]:
    code = problem.code
    if code is not None and code in _CODE_CLASS:
        return _CODE_CLASS[code]
    if code is not None and code in _GATEWAY_CODES:
        return GatewayError
    if problem.name == "AiGatewayError" and status not in _STATUS_CLASS:
        return GatewayError
    if not problem.is_json and status in _NOT_API_STATUSES:
        return BadRequest  # a proxy's or firewall's page, not Cloudflare's verdict on the token
    if status in _STATUS_CLASS:
        return _STATUS_CLASS[status]
    if status >= HTTP_SERVER_ERROR or status < HTTP_CLIENT_ERROR:
        return ServerError
    return BadRequest


def _page_title(body: str) -> str | None:
    match = _TITLE.search(body)
    text = match.group(1) if match else _TAGS.sub(" ", body)
    text = _SPACES.sub(" ", html.unescape(text)).strip()
    if not text:
        return None
    return text if len(text) <= _TITLE_LIMIT else text[: _TITLE_LIMIT - 1].rstrip() + "…"


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None

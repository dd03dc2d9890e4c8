"""Bytes on the wire: v4 envelopes and their error variants, SSE framing, padding and ids."""

from __future__ import annotations

import json
import os
import random
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from starlette.responses import Response

__all__ = [
    "BODY_STYLES",
    "DONE",
    "JSON_TYPE",
    "SSE_TYPE",
    "BodyStyle",
    "ErrorSpec",
    "cf_ray",
    "completion_id",
    "dumps",
    "error_response",
    "json_response",
    "legacy_padding",
    "openai_padding",
    "request_uuid",
    "sse",
    "success",
    "ulid",
]

JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"
DONE = b"data: [DONE]\n\n"

BodyStyle = Literal["v4", "v4-inference", "v4-bare", "gateway", "aierror", "html"]
BODY_STYLES: frozenset[str] = frozenset(
    {"v4", "v4-inference", "v4-bare", "gateway", "aierror", "html"}
)

#: Legacy-stream padding is a prefix of this, repeated (note: no c, q or w) — §4a.
_LEGACY_PAD = "abdefghijklmnoprstuvxyz1234567890"
_LEGACY_PAD_MAX = 64
#: OpenAI-shaped chunks carry random lowercase/digit padding instead (gemma capture, §4b).
_OPENAI_PAD_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
_OPENAI_PAD_MIN, _OPENAI_PAD_MAX = 6, 34
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ULID_TIME_CHARS, _ULID_RANDOM_CHARS = 10, 16
_BITS_PER_CHAR = 5
_RAY_BYTES = 8
_COLO = "LHR"
#: Workers AI's own inference errors read "AiError: AiError: <text> (<request uuid>)" (§0.6).
INFERENCE_PREFIX = "AiError: AiError: "

_HTML_TEMPLATE = (
    "<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
    "<center><h1>{status} {reason}</h1></center>\r\n<hr><center>cloudflare</center>\r\n"
    "</body>\r\n</html>\r\n"
)
_REASONS = {
    400: "Bad Request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Temporarily Unavailable",
    504: "Gateway Time-out",
}


def dumps(obj: object) -> bytes:
    """Compact UTF-8 JSON, the way Cloudflare writes it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def sse(obj: object) -> bytes:
    """One ``data:`` event; only data lines are used on this wire (§4)."""
    return b"data: " + dumps(obj) + b"\n\n"


def legacy_padding(rng: random.Random) -> str:
    size = rng.randint(1, _LEGACY_PAD_MAX)
    return (_LEGACY_PAD * (size // len(_LEGACY_PAD) + 1))[:size]


def openai_padding(rng: random.Random) -> str:
    size = rng.randint(_OPENAI_PAD_MIN, _OPENAI_PAD_MAX)
    return "".join(rng.choice(_OPENAI_PAD_ALPHABET) for _ in range(size))


def request_uuid() -> str:
    return str(uuid.uuid4())


def completion_id() -> str:
    """32 hex characters, no ``chatcmpl-`` prefix (as gemma-4 answers, §3b)."""
    return uuid.uuid4().hex


def cf_ray() -> str:
    return f"{secrets.token_hex(_RAY_BYTES)}-{_COLO}"


def ulid() -> str:
    """A ULID-like id (48-bit ms time + 80 random bits, Crockford base32), like cf-aig-log-id."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(_ULID_TIME_CHARS + _ULID_RANDOM_CHARS):
        chars.append(_CROCKFORD[value & 0x1F])
        value >>= _BITS_PER_CHAR
    return "".join(reversed(chars))


def success(result: object, *, result_info: dict[str, int] | None = None) -> dict[str, Any]:
    """The v4 success envelope, keys in the order the docs show (§0.5)."""
    body: dict[str, Any] = {"result": result, "success": True, "errors": [], "messages": []}
    if result_info is not None:
        body["result_info"] = result_info
    return body


def json_response(
    body: object, *, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(dumps(body), status_code=status, headers=headers, media_type=JSON_TYPE)


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """An error as the server would send it: status, code, plain message and body style."""

    status: int
    code: int
    message: str
    style: BodyStyle = "v4"
    retry_after: float | None = None
    #: prefix of inference messages; "AiError: Ai: " for 5021, "" for edge errors
    prefix: str = INFERENCE_PREFIX

    def with_style(self, style: BodyStyle) -> ErrorSpec:
        return ErrorSpec(self.status, self.code, self.message, style, self.retry_after, self.prefix)


def _error_body(spec: ErrorSpec, req_id: str) -> dict[str, Any]:
    entry = {"code": spec.code, "message": spec.message}
    if spec.style == "v4":
        return {"result": None, "success": False, "errors": [entry], "messages": []}
    inference = f"{spec.prefix}{spec.message} ({req_id})"
    if spec.style == "v4-inference":
        errors = [{"message": inference, "code": spec.code}]
        return {"errors": errors, "success": False, "result": {}, "messages": []}
    if spec.style == "v4-bare":
        return {"errors": [{"message": spec.message, "code": spec.code}]}
    if spec.style == "gateway":
        return {
            "success": False,
            "result": [],
            "messages": [],
            "error": [entry],
            "name": "AiGatewayError",
            "httpCode": spec.status,
            "internalCode": spec.code,
        }
    return {
        "name": "AiError",
        "internalCode": spec.code,
        "httpCode": spec.status,
        "message": f"AiError: {spec.message} ({req_id[:8]})",
        "description": spec.message,
    }


def error_response(spec: ErrorSpec, *, req_id: str, headers: dict[str, str]) -> Response:
    """Render ``spec`` in its body style, with Retry-After when it has one."""
    headers = dict(headers)
    if spec.retry_after is not None:
        headers["retry-after"] = f"{spec.retry_after:g}"
    if spec.style == "html":
        reason = _REASONS.get(spec.status, "Error")
        page = _HTML_TEMPLATE.format(status=spec.status, reason=reason)
        return Response(page, status_code=spec.status, headers=headers, media_type="text/html")
    return json_response(_error_body(spec, req_id), status=spec.status, headers=headers)

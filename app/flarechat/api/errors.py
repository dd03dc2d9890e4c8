"""The one exception tree for everything that can go wrong talking to Workers AI or AI Gateway.

Classification is by Workers AI / gateway *code* first and HTTP status second
(cloudflare-api.md §7), so two 429s that need opposite handling never look alike::

    WorkersAIError                      base; .message is plain English that names the fix
    ├── APIStatusError                  the server answered with an error (status, code)
    │   ├── CapacityExceeded            3040 / 429 "Capacity temporarily exceeded"   retryable
    │   ├── DailyAllocationExhausted    3036, 4006: free neurons used up; .resets_at (00:00 UTC)
    │   ├── RateLimited                 3021, 2003, bare 429: honours Retry-After     retryable
    │   ├── AuthenticationFailed        10000, 1000, 9109, JSON 401/403 without a better code
    │   │   └── GatewayAuthenticationFailed   2009: the gateway token, not the API token
    │   ├── ModelUnavailable            5007, 3042, 5028, 5035, 5018, 3041
    │   │   └── TermsNotAccepted        5016: accept the model's licence (.model, .terms_url)
    │   ├── RequestTooLarge             3006, 5021, 413
    │   ├── UpstreamTimeout             3007, 3008, 3046, 408, 504                   retryable
    │   ├── GatewayError                2001, 2021, 2041 and other 20xx gateway codes
    │   ├── ServerError                 5xx without a better code                    retryable
    │   └── BadRequest                  any other 4xx (5006 schema, 7000/7003 routes, a proxy's
    │       │                           non-JSON 401/403 page…)
    │       ├── LoraUnsupported         5005: this model takes no LoRA adapter
    │       └── FineTuneIncomplete      3039: the fine-tune lacks its files
    ├── ConnectionFailed                DNS, refused, reset, proxy                    retryable
    │   └── TLSFailed                   certificate or handshake failures (not retryable)
    │       └── NotTLS                  an https:// address at a port that speaks plain HTTP
    ├── RequestTimedOut                 our own connect/read timeout fired            retryable
    ├── StreamInterrupted               the stream ended without [DONE] or a finish reason
    │   └── DeadlinePassed              the overall deadline passed (never retried)
    └── NotTheAPI                       something else answered (not retried; base URL, portal)
        ├── Redirected                  a 3xx: redirects are never followed; .location
        ├── WebPage                     a 200 (or 511) web page: a captive portal or proxy
        └── NotHTTP                     the bytes that came back were not HTTP at all

``flarechat.api.classify`` (in ``_errors_map``) turns any error body into this tree, with the
plain-English messages of ``_messages``; network failures are mapped in ``_transport``.
Each class's ``kind`` is an :class:`ErrorKind` member (a ``StrEnum``). ``retryable`` is a class
attribute and the retry policy's only table of what waiting can fix; the policy alone decides
whether and when (and only before the first token). No message here ever contains the API token.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import ClassVar

__all__ = [
    "APIStatusError",
    "AuthenticationFailed",
    "BadRequest",
    "BodyCutOff",
    "CapacityExceeded",
    "ConnectionFailed",
    "DailyAllocationExhausted",
    "DeadlinePassed",
    "ErrorKind",
    "FineTuneIncomplete",
    "GatewayAuthenticationFailed",
    "GatewayError",
    "LoraUnsupported",
    "ModelUnavailable",
    "NotHTTP",
    "NotTLS",
    "NotTheAPI",
    "RateLimited",
    "Redirected",
    "RequestTimedOut",
    "RequestTooLarge",
    "ServerError",
    "StreamInterrupted",
    "TLSFailed",
    "TermsNotAccepted",
    "UpstreamTimeout",
    "WebPage",
    "WorkersAIError",
    "next_utc_midnight",
]


class ErrorKind(StrEnum):
    """The short label of each failure, read by the UI banners, the CLI and saved turns.

    A ``StrEnum``, so ``error.kind == "capacity"`` and JSON round trips keep working.
    """

    ERROR = "error"
    API = "api"
    CAPACITY = "capacity"
    DAILY_LIMIT = "daily_limit"
    RATE_LIMIT = "rate_limit"
    AUTH = "auth"
    GATEWAY_AUTH = "gateway_auth"
    MODEL = "model"
    TOO_LARGE = "too_large"
    TIMEOUT = "timeout"
    GATEWAY = "gateway"
    SERVER = "server"
    BAD_REQUEST = "bad_request"
    NETWORK = "network"
    TLS = "tls"
    INTERRUPTED = "interrupted"
    TERMS = "terms"
    LORA = "lora"
    #: something other than the API answered: a redirect, a web page, not HTTP at all
    WRONG_SERVER = "wrong_server"
    #: not raised by the api: the settings cannot make a request (no account, no token)
    CONFIG = "config"


class WorkersAIError(Exception):
    """Base of every failure the api layer raises.

    ``message`` is for people: what happened and what to do. ``detail`` is the server's own
    text (redacted), for the log and the "details" disclosure, never for the transcript.
    """

    #: whether waiting can fix it; the retry policy reads this (and only before the first token)
    retryable: ClassVar[bool] = False
    #: short label used by the UI banners and the CLI summary
    kind: ClassVar[ErrorKind] = ErrorKind.ERROR

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        status: int | None = None,
        code: int | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        max_retries: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.status = status
        self.code = code
        self.request_id = request_id
        self.retry_after = retry_after
        #: at most this many retries for this failure (None: the policy's own limit)
        self.max_retries = max_retries

    def __str__(self) -> str:
        parts = [self.message]
        tags = []
        if self.status is not None:
            tags.append(f"HTTP {self.status}")
        if self.code is not None:
            tags.append(f"code {self.code}")
        if tags:
            parts.append(f"({', '.join(tags)})")
        return " ".join(parts)


class APIStatusError(WorkersAIError):
    """The server answered, with an error status or an error event."""

    kind = ErrorKind.API


class CapacityExceeded(APIStatusError):
    retryable = True
    kind = ErrorKind.CAPACITY


class DailyAllocationExhausted(APIStatusError):
    # Resets at 00:00 UTC: hours away, never worth an automatic retry.
    retryable = False
    kind = ErrorKind.DAILY_LIMIT

    def __init__(self, message: str, *, resets_at: datetime | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.resets_at = resets_at or next_utc_midnight()


class RateLimited(APIStatusError):
    retryable = True
    kind = ErrorKind.RATE_LIMIT


class AuthenticationFailed(APIStatusError):
    # A wrong token stays wrong.
    retryable = False
    kind = ErrorKind.AUTH


class GatewayAuthenticationFailed(AuthenticationFailed):
    kind = ErrorKind.GATEWAY_AUTH


class ModelUnavailable(APIStatusError):
    # The account or the model id has to change first.
    retryable = False
    kind = ErrorKind.MODEL


class RequestTooLarge(APIStatusError):
    # The same request is exactly as large the next time.
    retryable = False
    kind = ErrorKind.TOO_LARGE


class UpstreamTimeout(APIStatusError):
    retryable = True
    kind = ErrorKind.TIMEOUT


class GatewayError(APIStatusError):
    # Gateway configuration (missing gateway, no credit, spend limit) needs a person.
    retryable = False
    kind = ErrorKind.GATEWAY


class ServerError(APIStatusError):
    retryable = True
    kind = ErrorKind.SERVER


class BadRequest(APIStatusError):
    # The request (or the URL it went to) is wrong; sending it again changes nothing.
    retryable = False
    kind = ErrorKind.BAD_REQUEST


class TermsNotAccepted(ModelUnavailable):
    """5016: the account has not agreed to this model's licence (``agree_to_terms`` fixes it)."""

    kind = ErrorKind.TERMS

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        terms_url: str | None = None,
        **kw: object,
    ) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.model = model
        self.terms_url = terms_url


class LoraUnsupported(BadRequest):
    """5005: the model does not take a LoRA adapter; drop it or choose a ``-lora`` model."""

    kind = ErrorKind.LORA


class FineTuneIncomplete(BadRequest):
    """3039: the fine-tune is missing files (model.safetensors and config.json)."""

    kind = ErrorKind.LORA


class ConnectionFailed(WorkersAIError):
    retryable = True
    kind = ErrorKind.NETWORK


class BodyCutOff(ConnectionFailed):
    """The answer's headers came but its body ended early: the connection closed before the
    Content-Length (or the last chunk) arrived, or the JSON stops mid-way. Not "not HTTP"."""


class TLSFailed(ConnectionFailed):
    # A certificate problem does not heal by waiting: never retried.
    retryable = False
    kind = ErrorKind.TLS


class NotTLS(TLSFailed):
    """An https:// address whose server answered in plain HTTP (wrong scheme or port)."""


class RequestTimedOut(WorkersAIError):
    retryable = True
    kind = ErrorKind.TIMEOUT


class StreamInterrupted(WorkersAIError):
    # Retryable before the first token (nothing was shown); after it the policy never retries.
    retryable = True
    kind = ErrorKind.INTERRUPTED


class DeadlinePassed(StreamInterrupted):
    """The overall deadline for the whole request passed: the turn ends, interrupted, whether
    or not text had come; retrying would only overrun the deadline the user set."""

    retryable = False


class NotTheAPI(WorkersAIError):
    """Something other than the Workers AI API answered; the same request gets the same answer."""

    retryable = False
    kind = ErrorKind.WRONG_SERVER


class Redirected(NotTheAPI):
    """A 3xx: never followed (the token must not travel to another host). ``location`` is the
    target without its query, redacted."""

    def __init__(self, message: str, *, location: str | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.location = location


class WebPage(NotTheAPI):
    """A web page where the API's JSON or event stream should be: a captive portal or proxy."""


class NotHTTP(NotTheAPI):
    """The server's reply was not HTTP (another protocol on that port, or garbage)."""


def next_utc_midnight(now: datetime | None = None) -> datetime:
    """When the Workers AI free daily allocation resets: the next 00:00 UTC."""
    now = now or datetime.now(UTC)
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today + timedelta(days=1)

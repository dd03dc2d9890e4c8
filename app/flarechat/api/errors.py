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
    │   ├── ModelUnavailable            5007, 3042, 5028, 5035, 5016, 5018, 3041
    │   ├── RequestTooLarge             3006, 5021, 413
    │   ├── UpstreamTimeout             3007, 3008, 3046, 408, 504                   retryable
    │   ├── GatewayError                2001, 2021, 2041 and other 20xx gateway codes
    │   ├── ServerError                 5xx without a better code                    retryable
    │   └── BadRequest                  any other 4xx (5006 schema, 7000/7003 routes, a proxy's
    │                                   non-JSON 401/403 page…)
    ├── ConnectionFailed                DNS, refused, reset, proxy                    retryable
    │   └── TLSFailed                   certificate or handshake failures (not retryable)
    ├── RequestTimedOut                 our own connect/read timeout fired            retryable
    └── StreamInterrupted               the stream ended without [DONE] or a finish reason

``flarechat.api.classify`` (in ``_errors_map``) turns any error body into this tree, with the
plain-English messages of ``_messages``; network failures are mapped in ``_transport``.
``retryable`` is a class attribute read by the retry policy; the policy alone decides whether
and when (and only before the first token). No message here ever contains the API token.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import ClassVar

__all__ = [
    "APIStatusError",
    "AuthenticationFailed",
    "BadRequest",
    "CapacityExceeded",
    "ConnectionFailed",
    "DailyAllocationExhausted",
    "GatewayAuthenticationFailed",
    "GatewayError",
    "ModelUnavailable",
    "RateLimited",
    "RequestTimedOut",
    "RequestTooLarge",
    "ServerError",
    "StreamInterrupted",
    "TLSFailed",
    "UpstreamTimeout",
    "WorkersAIError",
    "next_utc_midnight",
]


class WorkersAIError(Exception):
    """Base of every failure the api layer raises.

    ``message`` is for people: what happened and what to do. ``detail`` is the server's own
    text (redacted), for the log and the "details" disclosure, never for the transcript.
    """

    retryable: ClassVar[bool] = False
    #: short label used by the UI banners and the CLI summary
    kind: ClassVar[str] = "error"

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        status: int | None = None,
        code: int | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.status = status
        self.code = code
        self.request_id = request_id
        self.retry_after = retry_after

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

    kind = "api"


class CapacityExceeded(APIStatusError):
    retryable = True
    kind = "capacity"


class DailyAllocationExhausted(APIStatusError):
    kind = "daily_limit"

    def __init__(self, message: str, *, resets_at: datetime | None = None, **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.resets_at = resets_at or next_utc_midnight()


class RateLimited(APIStatusError):
    retryable = True
    kind = "rate_limit"


class AuthenticationFailed(APIStatusError):
    kind = "auth"


class GatewayAuthenticationFailed(AuthenticationFailed):
    kind = "gateway_auth"


class ModelUnavailable(APIStatusError):
    kind = "model"


class RequestTooLarge(APIStatusError):
    kind = "too_large"


class UpstreamTimeout(APIStatusError):
    retryable = True
    kind = "timeout"


class GatewayError(APIStatusError):
    kind = "gateway"


class ServerError(APIStatusError):
    retryable = True
    kind = "server"


class BadRequest(APIStatusError):
    kind = "bad_request"


class ConnectionFailed(WorkersAIError):
    retryable = True
    kind = "network"


class TLSFailed(ConnectionFailed):
    # A certificate problem does not heal by waiting: never retried.
    retryable = False
    kind = "tls"


class RequestTimedOut(WorkersAIError):
    retryable = True
    kind = "timeout"


class StreamInterrupted(WorkersAIError):
    # Retryable before the first token (nothing was shown); after it the policy never retries.
    retryable = True
    kind = "interrupted"


def next_utc_midnight(now: datetime | None = None) -> datetime:
    """When the Workers AI free daily allocation resets: the next 00:00 UTC."""
    now = now or datetime.now(UTC)
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today + timedelta(days=1)

"""Workers AI + AI Gateway client: request building, stream decoding, errors, retries.

Imports httpx; never Qt, never keyring, never the settings package.
"""

from flarechat.api._errors_map import classify, parse_retry_after
from flarechat.api._redact import redact
from flarechat.api.client import DEFAULT_USER_AGENT, WorkersAIClient
from flarechat.api.config import (
    DEFAULT_API_BASE,
    DEFAULT_GATEWAY_BASE,
    DEFAULT_MAX_TOKENS,
    ChatMessage,
    ChatRequest,
    Connection,
    Endpoint,
    GatewayOptions,
    Route,
    SamplingParams,
    Secret,
)
from flarechat.api.errors import (
    APIStatusError,
    AuthenticationFailed,
    BadRequest,
    CapacityExceeded,
    ConnectionFailed,
    DailyAllocationExhausted,
    ErrorKind,
    GatewayAuthenticationFailed,
    GatewayError,
    ModelUnavailable,
    RateLimited,
    RequestTimedOut,
    RequestTooLarge,
    ServerError,
    StreamInterrupted,
    TLSFailed,
    UpstreamTimeout,
    WorkersAIError,
    next_utc_midnight,
)
from flarechat.api.events import (
    Finished,
    ReasoningDelta,
    ResponseMeta,
    StreamEvent,
    TextDelta,
    UsageReport,
)
from flarechat.api.models import ModelInfo
from flarechat.api.retry import RetryPolicy
from flarechat.api.tokens import TokenCheck

__all__ = [
    "DEFAULT_API_BASE",
    "DEFAULT_GATEWAY_BASE",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_USER_AGENT",
    "APIStatusError",
    "AuthenticationFailed",
    "BadRequest",
    "CapacityExceeded",
    "ChatMessage",
    "ChatRequest",
    "Connection",
    "ConnectionFailed",
    "DailyAllocationExhausted",
    "Endpoint",
    "ErrorKind",
    "Finished",
    "GatewayAuthenticationFailed",
    "GatewayError",
    "GatewayOptions",
    "ModelInfo",
    "ModelUnavailable",
    "RateLimited",
    "ReasoningDelta",
    "RequestTimedOut",
    "RequestTooLarge",
    "ResponseMeta",
    "RetryPolicy",
    "Route",
    "SamplingParams",
    "Secret",
    "ServerError",
    "StreamEvent",
    "StreamInterrupted",
    "TLSFailed",
    "TextDelta",
    "TokenCheck",
    "UpstreamTimeout",
    "UsageReport",
    "WorkersAIClient",
    "WorkersAIError",
    "classify",
    "next_utc_midnight",
    "parse_retry_after",
    "redact",
]

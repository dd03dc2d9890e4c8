"""Workers AI + AI Gateway client: request building, stream decoding, errors, retries.

Imports httpx (in ``client`` and ``_transport`` only); never Qt, never keyring, never the
settings package. The public names below load on first use (PEP 562), so importing
``flarechat.api.errors`` or ``flarechat.api.models`` does not pull in httpx: the window's first
paint needs neither the network stack nor its ~300 ms of imports.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from flarechat.api._errors_map import classify, parse_retry_after
    from flarechat.api._redact import redact
    from flarechat.api._routes import effective_stream
    from flarechat.api.client import DEFAULT_USER_AGENT, WorkersAIClient
    from flarechat.api.config import (
        DEFAULT_API_BASE,
        DEFAULT_GATEWAY_BASE,
        DEFAULT_MAX_TOKENS,
        EFFORT_OFF,
        REASONING_EFFORTS,
        ChatMessage,
        ChatRequest,
        Connection,
        Endpoint,
        GatewayOptions,
        ImagePart,
        ResponseFormat,
        Route,
        SamplingParams,
        Secret,
    )
    from flarechat.api.errors import (
        APIStatusError,
        AuthenticationFailed,
        BadRequest,
        BodyCutOff,
        CapacityExceeded,
        ConnectionFailed,
        DailyAllocationExhausted,
        DeadlinePassed,
        ErrorKind,
        FineTuneIncomplete,
        GatewayAuthenticationFailed,
        GatewayError,
        LoraUnsupported,
        ModelUnavailable,
        RateLimited,
        RequestTimedOut,
        RequestTooLarge,
        ServerError,
        StreamInterrupted,
        TermsNotAccepted,
        TLSFailed,
        UpstreamTimeout,
        WorkersAIError,
        next_utc_midnight,
    )
    from flarechat.api.events import (
        ChatEvent,
        Finished,
        ReasoningDelta,
        ResponseMeta,
        StreamEvent,
        StreamingDisabled,
        TextDelta,
        ToolCallDelta,
        UsageReport,
    )
    from flarechat.api.models import FineTune, ModelInfo, ReasoningEffortInfo
    from flarechat.api.retry import RetryPolicy
    from flarechat.api.schema import ModelSchema, parse_model_schema
    from flarechat.api.tokens import TokenCheck
    from flarechat.api.tools import ToolCall, ToolChoice, ToolSpec

#: Each public name and the module that defines it (imported when the name is first used).
_HOMES: dict[str, str] = {
    "classify": "flarechat.api._errors_map",
    "parse_retry_after": "flarechat.api._errors_map",
    "redact": "flarechat.api._redact",
    "effective_stream": "flarechat.api._routes",
    "DEFAULT_USER_AGENT": "flarechat.api.client",
    "WorkersAIClient": "flarechat.api.client",
    "DEFAULT_API_BASE": "flarechat.api.config",
    "DEFAULT_GATEWAY_BASE": "flarechat.api.config",
    "DEFAULT_MAX_TOKENS": "flarechat.api.config",
    "EFFORT_OFF": "flarechat.api.config",
    "REASONING_EFFORTS": "flarechat.api.config",
    "ChatMessage": "flarechat.api.config",
    "ChatRequest": "flarechat.api.config",
    "Connection": "flarechat.api.config",
    "Endpoint": "flarechat.api.config",
    "GatewayOptions": "flarechat.api.config",
    "ImagePart": "flarechat.api.config",
    "ResponseFormat": "flarechat.api.config",
    "Route": "flarechat.api.config",
    "SamplingParams": "flarechat.api.config",
    "Secret": "flarechat.api.config",
    "APIStatusError": "flarechat.api.errors",
    "AuthenticationFailed": "flarechat.api.errors",
    "BadRequest": "flarechat.api.errors",
    "CapacityExceeded": "flarechat.api.errors",
    "BodyCutOff": "flarechat.api.errors",
    "ConnectionFailed": "flarechat.api.errors",
    "DailyAllocationExhausted": "flarechat.api.errors",
    "DeadlinePassed": "flarechat.api.errors",
    "ErrorKind": "flarechat.api.errors",
    "FineTuneIncomplete": "flarechat.api.errors",
    "GatewayAuthenticationFailed": "flarechat.api.errors",
    "GatewayError": "flarechat.api.errors",
    "LoraUnsupported": "flarechat.api.errors",
    "ModelUnavailable": "flarechat.api.errors",
    "RateLimited": "flarechat.api.errors",
    "RequestTimedOut": "flarechat.api.errors",
    "RequestTooLarge": "flarechat.api.errors",
    "ServerError": "flarechat.api.errors",
    "StreamInterrupted": "flarechat.api.errors",
    "TermsNotAccepted": "flarechat.api.errors",
    "TLSFailed": "flarechat.api.errors",
    "UpstreamTimeout": "flarechat.api.errors",
    "WorkersAIError": "flarechat.api.errors",
    "next_utc_midnight": "flarechat.api.errors",
    "ChatEvent": "flarechat.api.events",
    "Finished": "flarechat.api.events",
    "ReasoningDelta": "flarechat.api.events",
    "ResponseMeta": "flarechat.api.events",
    "StreamEvent": "flarechat.api.events",
    "StreamingDisabled": "flarechat.api.events",
    "TextDelta": "flarechat.api.events",
    "ToolCallDelta": "flarechat.api.events",
    "UsageReport": "flarechat.api.events",
    "FineTune": "flarechat.api.models",
    "ModelInfo": "flarechat.api.models",
    "ReasoningEffortInfo": "flarechat.api.models",
    "RetryPolicy": "flarechat.api.retry",
    "ModelSchema": "flarechat.api.schema",
    "parse_model_schema": "flarechat.api.schema",
    "TokenCheck": "flarechat.api.tokens",
    "ToolCall": "flarechat.api.tools",
    "ToolChoice": "flarechat.api.tools",
    "ToolSpec": "flarechat.api.tools",
}

__all__ = [
    "DEFAULT_API_BASE",
    "DEFAULT_GATEWAY_BASE",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_USER_AGENT",
    "EFFORT_OFF",
    "REASONING_EFFORTS",
    "APIStatusError",
    "AuthenticationFailed",
    "BadRequest",
    "BodyCutOff",
    "CapacityExceeded",
    "ChatEvent",
    "ChatMessage",
    "ChatRequest",
    "Connection",
    "ConnectionFailed",
    "DailyAllocationExhausted",
    "DeadlinePassed",
    "Endpoint",
    "ErrorKind",
    "FineTune",
    "FineTuneIncomplete",
    "Finished",
    "GatewayAuthenticationFailed",
    "GatewayError",
    "GatewayOptions",
    "ImagePart",
    "LoraUnsupported",
    "ModelInfo",
    "ModelSchema",
    "ModelUnavailable",
    "RateLimited",
    "ReasoningDelta",
    "ReasoningEffortInfo",
    "RequestTimedOut",
    "RequestTooLarge",
    "ResponseFormat",
    "ResponseMeta",
    "RetryPolicy",
    "Route",
    "SamplingParams",
    "Secret",
    "ServerError",
    "StreamEvent",
    "StreamInterrupted",
    "StreamingDisabled",
    "TLSFailed",
    "TermsNotAccepted",
    "TextDelta",
    "TokenCheck",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolSpec",
    "UpstreamTimeout",
    "UsageReport",
    "WorkersAIClient",
    "WorkersAIError",
    "classify",
    "effective_stream",
    "next_utc_midnight",
    "parse_model_schema",
    "parse_retry_after",
    "redact",
]


def __getattr__(name: str) -> object:
    """Import the module defining ``name`` on first use and keep the value (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""What a request needs: where to send it (Connection) and what to ask (ChatRequest)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "DEFAULT_API_BASE",
    "DEFAULT_GATEWAY_BASE",
    "DEFAULT_MAX_TOKENS",
    "ChatMessage",
    "ChatRequest",
    "Connection",
    "Endpoint",
    "GatewayOptions",
    "Route",
    "SamplingParams",
    "Secret",
]

DEFAULT_API_BASE = "https://api.cloudflare.com/client/v4"
DEFAULT_GATEWAY_BASE = "https://gateway.ai.cloudflare.com/v1"
#: Always sent: the server default of 256 silently truncates most replies.
DEFAULT_MAX_TOKENS = 2048


class Secret:
    """A credential that never shows itself in repr, str, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return "Secret('********')" if self._value else "Secret('')"

    __str__ = __repr__


class Route(StrEnum):
    """How a request reaches Workers AI."""

    DIRECT = "direct"  # api.cloudflare.com
    GATEWAY_REST = "gateway-rest"  # api.cloudflare.com + cf-aig-gateway-id header
    GATEWAY_URL = "gateway-url"  # gateway.ai.cloudflare.com/v1/{acct}/{gw}/workers-ai/...


class Endpoint(StrEnum):
    """Which request/response family."""

    NATIVE = "native"  # /ai/run/{model}
    OPENAI = "openai"  # /ai/v1/chat/completions


@dataclass(frozen=True, slots=True)
class Connection:
    """Where and as whom. Built by the settings layer; the api layer never reads settings."""

    account_id: str
    token: Secret
    api_base: str = DEFAULT_API_BASE
    gateway_base: str = DEFAULT_GATEWAY_BASE
    route: Route = Route.DIRECT
    endpoint: Endpoint = Endpoint.NATIVE
    gateway_id: str = ""
    gateway_token: Secret = field(default_factory=lambda: Secret(""))
    #: seconds to wait for the first byte of a reply (slow models queue before answering)
    read_timeout: float = 120.0
    connect_timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class GatewayOptions:
    """AI Gateway per-request options, sent as cf-aig-* headers (only on gateway routes)."""

    skip_cache: bool = False
    cache_ttl: int | None = None  # seconds, 60 .. 2,592,000
    cache_key: str | None = None
    metadata: Mapping[str, str | int | float | bool] = field(default_factory=dict)  # <= 5
    collect_log: bool | None = None
    request_timeout_ms: int | None = None
    max_attempts: int | None = None  # 1..5
    retry_delay_ms: int | None = None  # <= 5000
    backoff: str | None = None  # constant | linear | exponential


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """Model parameters; ``None`` means "not sent" (except max_tokens, which is always sent)."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    repetition_penalty: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # system | user | assistant
    content: str
    #: prior reasoning of an assistant turn, sent back as ``reasoning`` (never inside content)
    reasoning: str | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    messages: tuple[ChatMessage, ...]
    params: SamplingParams = field(default_factory=SamplingParams)
    reject_if_busy: bool = False
    gateway: GatewayOptions = field(default_factory=GatewayOptions)
    #: sent as x-session-affinity so one conversation stays on a warm prefix cache
    session_id: str | None = None
    stream: bool = True

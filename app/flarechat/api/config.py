"""What a request needs: where to send it (Connection) and what to ask (ChatRequest)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

# Named in field annotations only: a request's tools and schema are not what the window's first
# paint needs (their four value classes cost start-up, issue #12); whoever builds them imports them.
if TYPE_CHECKING:
    from flarechat.api.models import ModelInfo
    from flarechat.api.schema import ModelSchema
    from flarechat.api.tools import ToolCall, ToolChoice, ToolSpec

__all__ = [
    "DEFAULT_API_BASE",
    "DEFAULT_GATEWAY_BASE",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_OVERALL_TIMEOUT",
    "EFFORT_OFF",
    "REASONING_EFFORTS",
    "ChatMessage",
    "ChatRequest",
    "Connection",
    "Endpoint",
    "GatewayOptions",
    "ImagePart",
    "ResponseFormat",
    "Route",
    "SamplingParams",
    "Secret",
]

DEFAULT_API_BASE = "https://api.cloudflare.com/client/v4"
DEFAULT_GATEWAY_BASE = "https://gateway.ai.cloudflare.com/v1"
#: Always sent: the server default of 256 silently truncates most replies.
DEFAULT_MAX_TOKENS = 2048
#: Seconds a streamed reply may go without one complete SSE data event (``: ping`` comments and
#: blank keep-alives don't count) before it is called stalled. Models emit tokens many times a
#: second once they start; a minute of nothing is a stuck upstream, not a slow model.
DEFAULT_IDLE_TIMEOUT = 60.0
#: Seconds for a whole request, connecting to the last byte. Ten minutes is well past the
#: longest reply at max_tokens on a slow model, and stops a server that drips bytes forever.
DEFAULT_OVERALL_TIMEOUT = 600.0
REASONING_EFFORTS = ("low", "medium", "high")
#: The explicit "no reasoning" effort, sent as ``reasoning_effort: null`` (cloudflare-api.md §2).
EFFORT_OFF = "off"


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
    #: seconds without a complete SSE data event once the reply has started
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    #: seconds for the whole request, however steadily bytes arrive
    overall_timeout: float = DEFAULT_OVERALL_TIMEOUT
    #: the server is Flarechat's built-in emulator (demo mode): nothing is billed to a real
    #: account, and the usage ledger keeps its replies apart
    simulated: bool = False


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
class ImagePart:
    """An image attached to a user message: raw bytes and their MIME type."""

    data: bytes = field(repr=False)
    mime_type: str = "image/png"

    def __post_init__(self) -> None:
        if not self.mime_type.startswith("image/") or any(c in self.mime_type for c in ";, "):
            raise ValueError(f"{self.mime_type!r} is not an image MIME type.")

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """``data:<mime>;base64,…`` for an OpenAI ``image_url`` content part."""
        return f"data:{self.mime_type};base64,{self.base64}"


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """Structured output: JSON mode (``schema`` None) or JSON that follows ``schema``.

    Emitted per endpoint: the native bare ``json_schema: <schema>`` or the OpenAI wrapper
    ``{name, schema, strict}``. Native JSON mode does not stream; the request builder turns
    streaming off there (see ``flarechat.api.effective_stream``).
    """

    kind: Literal["json_object", "json_schema"] = "json_object"
    schema: Mapping[str, Any] | None = None
    name: str = "response"
    strict: bool = True

    @classmethod
    def json_object(cls) -> ResponseFormat:
        return cls()

    @classmethod
    def json_schema(
        cls, schema: Mapping[str, Any], *, name: str = "response", strict: bool = True
    ) -> ResponseFormat:
        return cls(kind="json_schema", schema=schema, name=name, strict=strict)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # system | user | assistant | tool
    content: str
    #: prior reasoning of an assistant turn, sent back as ``reasoning`` (never inside content)
    reasoning: str | None = None
    #: images on a user message (sent as content parts, or the legacy ``image`` field)
    images: tuple[ImagePart, ...] = ()
    #: the calls an assistant turn made, sent back so the tool results can refer to them
    tool_calls: tuple[ToolCall, ...] = ()
    #: on a ``tool`` message: which call this is the result of, and that function's name
    tool_call_id: str | None = None
    name: str | None = None


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
    response_format: ResponseFormat | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    #: "low" | "medium" | "high" | "off" (sent as null); None = not sent (the model's default)
    reasoning_effort: str | None = None
    #: sent as ``chat_template_kwargs: {enable_thinking}``; None = not sent
    enable_thinking: bool | None = None
    #: a fine-tune (LoRA adapter) name or id; LoRA requests always use the native endpoint
    lora: str | None = None
    #: what the catalogue and the schema endpoint say about the model: they pick the wire
    #: forms (content parts or ``image``, flat or wrapped tools…) and fill error details
    model_info: ModelInfo | None = None
    model_schema: ModelSchema | None = None

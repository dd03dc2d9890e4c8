"""Turning the profile into api requests: settings + keychain + env -> Connection, ChatRequest.

The settings layer may not import the api layer, so ``flarechat.settings.resolve.Resolved``
holds plain values; this module (core, which may import both) builds the api objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from flarechat.api.config import (
    DEFAULT_API_BASE,
    DEFAULT_GATEWAY_BASE,
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
from flarechat.core.conversation import Attachment, Message
from flarechat.settings import secrets
from flarechat.settings.gateway_options import GatewayPrefs
from flarechat.settings.resolve import ENV_API_TOKEN, resolve
from flarechat.settings.schema import Settings
from flarechat.settings.store import SettingsStore

# A request's tools and schema are built when a request is, not for the window's first paint
# (their four value classes cost start-up, issue #12).
if TYPE_CHECKING:
    from flarechat.api.models import ModelInfo
    from flarechat.api.schema import ModelSchema
    from flarechat.api.tools import ToolCall, ToolChoice, ToolSpec

__all__ = [
    "CAPABILITY_KEYS",
    "KEYCHAIN_TIMEOUT",
    "KEYCHAIN_UNREAD",
    "PARAM_ENABLE_THINKING",
    "PARAM_LORA",
    "PARAM_REASONING_EFFORT",
    "PARAM_RESPONSE_FORMAT",
    "PARAM_TOOLS",
    "PARAM_TOOL_CHOICE",
    "Capabilities",
    "ConfigurationError",
    "HistoryMessage",
    "Profile",
    "ResolvedConfig",
    "build_request",
    "capabilities_from",
    "connection_from",
    "gateway_options_from",
    "load_profile",
    "read_tokens",
]

#: How long a keychain read may take before going on without it (seconds).
KEYCHAIN_TIMEOUT = 5.0

_E = TypeVar("_E", Route, Endpoint)

_ROLE_SYSTEM = "system"
_ROLE_ASSISTANT = "assistant"
_ROLE_TOOL = "tool"

#: The conversation's ``params`` keys for what a model can do (next to the sampling ones):
#: ``{"type": "json_object"}`` or ``{"type": "json_schema", "schema": {…}, "name": …}``
PARAM_RESPONSE_FORMAT = "response_format"
#: ``[{"name", "description", "parameters", "canned_result"?}]`` (canned_result is the app's)
PARAM_TOOLS = "tools"
#: ``"auto" | "none" | "required" | {"name": …}``
PARAM_TOOL_CHOICE = "tool_choice"
#: ``"low" | "medium" | "high" | "off"`` or None (the model's default)
PARAM_REASONING_EFFORT = "reasoning_effort"
#: bool or None: sent as ``chat_template_kwargs.enable_thinking``
PARAM_ENABLE_THINKING = "enable_thinking"
#: a LoRA adapter's name or id, or None
PARAM_LORA = "lora"
CAPABILITY_KEYS = (
    PARAM_RESPONSE_FORMAT,
    PARAM_TOOLS,
    PARAM_TOOL_CHOICE,
    PARAM_REASONING_EFFORT,
    PARAM_ENABLE_THINKING,
    PARAM_LORA,
)
_TOOL_CHOICE_MODES = ("auto", "none", "required")
_DEFAULT_SCHEMA_NAME = "response"
_NO_GATEWAY_ID = (
    "The route goes through AI Gateway but no gateway id is set: enter one in Settings "
    "or set CLOUDFLARE_AI_GATEWAY_ID."
)


#: How the problem "the keychain could not be read" begins (the CLI words around it).
KEYCHAIN_UNREAD = "The system keychain could not be read"


class ConfigurationError(ValueError):
    """The settings cannot make a working connection; ``problems`` says what to fix."""

    def __init__(
        self, problems: Sequence[str], *, incomplete: bool = False, unset: bool = False
    ) -> None:
        self.problems = list(problems) or ["The connection settings are incomplete."]
        #: True when no usable account or token is configured at all (offer setup or demo)
        self.incomplete = incomplete or unset
        #: True when neither an account ID nor an API token is set anywhere: ``problems``
        #: then hold only what else is wrong (a caller says "no credentials" once)
        self.unset = unset
        super().__init__(" ".join(self.problems))


class ResolvedConfig(Protocol):
    """What ``flarechat.settings.resolve.Resolved`` provides (settings + keychain + env)."""

    @property
    def account_id(self) -> str: ...
    @property
    def api_token(self) -> str | None: ...
    @property
    def gateway_token(self) -> str | None: ...
    @property
    def api_base(self) -> str: ...
    @property
    def gateway_base(self) -> str: ...
    @property
    def route(self) -> str: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def gateway_id(self) -> str: ...
    @property
    def reject_if_busy(self) -> bool: ...
    @property
    def skip_cache(self) -> bool: ...
    @property
    def cache_ttl(self) -> int | None: ...
    @property
    def request_timeout(self) -> float: ...
    @property
    def gateway_options(self) -> GatewayPrefs: ...
    @property
    def problems(self) -> Sequence[str]: ...
    @property
    def is_complete(self) -> bool: ...


class HistoryMessage(Protocol):
    """A prior message: ``ChatMessage`` or the store's ``core.conversation.Message``."""

    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def reasoning(self) -> str | None: ...


def _enum_value(kind: type[_E], value: str, label: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise ConfigurationError([f"Unknown {label} {value!r}; choose one of {choices}."]) from None


def connection_from(resolved: ResolvedConfig) -> Connection:
    """The api Connection for ``resolved``; ConfigurationError when it is incomplete."""
    if not resolved.is_complete or not resolved.api_token:
        raise ConfigurationError(resolved.problems, incomplete=True)
    route = _enum_value(Route, resolved.route, "route")
    if route is not Route.DIRECT and not resolved.gateway_id:
        raise ConfigurationError([_NO_GATEWAY_ID])
    return Connection(
        account_id=resolved.account_id,
        token=Secret(resolved.api_token),
        api_base=(resolved.api_base or DEFAULT_API_BASE).rstrip("/"),
        gateway_base=(resolved.gateway_base or DEFAULT_GATEWAY_BASE).rstrip("/"),
        route=route,
        endpoint=_enum_value(Endpoint, resolved.endpoint, "endpoint"),
        gateway_id=resolved.gateway_id,
        gateway_token=Secret(resolved.gateway_token or ""),
        read_timeout=resolved.request_timeout,
    )


def gateway_options_from(resolved: ResolvedConfig) -> GatewayOptions:
    """The per-request AI Gateway options the settings choose (sent only on gateway routes)."""
    chosen = resolved.gateway_options
    return GatewayOptions(
        skip_cache=resolved.skip_cache,
        cache_ttl=resolved.cache_ttl,
        cache_key=chosen.cache_key or None,
        metadata=dict(chosen.metadata),
        collect_log=chosen.collect_log,
        request_timeout_ms=chosen.request_timeout_ms,
        max_attempts=chosen.max_attempts,
        retry_delay_ms=chosen.retry_delay_ms,
        backoff=chosen.backoff or None,
    )


@dataclass(frozen=True, slots=True)
class Capabilities:
    """The ChatRequest fields a conversation's capability options choose (all "not sent")."""

    response_format: ResponseFormat | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    reasoning_effort: str | None = None
    enable_thinking: bool | None = None
    lora: str | None = None

    @property
    def used(self) -> bool:
        """Whether any is set: the model's schema may then decide the wire forms."""
        return self != Capabilities()


def _response_format(value: object) -> ResponseFormat | None:
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "json_object":
        return ResponseFormat.json_object()
    if kind == "json_schema" and isinstance(value, Mapping):
        schema, name = value.get("schema"), value.get("name")
        if not isinstance(schema, Mapping):
            raise ConfigurationError(["The JSON reply format has no schema object."])
        name = name if isinstance(name, str) and name.strip() else _DEFAULT_SCHEMA_NAME
        return ResponseFormat.json_schema(schema, name=name.strip())
    raise ConfigurationError(['The reply format must be "json_object" or "json_schema".'])


def _tool(value: object) -> ToolSpec:
    from flarechat.api.tools import ToolSpec

    name = value.get("name") if isinstance(value, Mapping) else None
    if not isinstance(value, Mapping) or not isinstance(name, str) or not name.strip():
        raise ConfigurationError(["Every tool needs a name."])
    description = value.get("description")
    parameters = value.get("parameters")
    if parameters is not None and not isinstance(parameters, Mapping):
        raise ConfigurationError([f"The parameters of tool {name!r} must be a JSON object."])
    return ToolSpec(
        name=name.strip(),
        description=description if isinstance(description, str) else "",
        parameters=parameters if parameters is not None else {"type": "object"},
    )


def _tool_choice(value: object) -> ToolChoice | None:
    from flarechat.api.tools import ToolChoice

    if value is None:
        return None
    if isinstance(value, str) and value in _TOOL_CHOICE_MODES:
        return ToolChoice(mode=value)  # type: ignore[arg-type]  # checked just above
    name = value.get("name") if isinstance(value, Mapping) else None
    if isinstance(name, str) and name.strip():
        return ToolChoice.named(name.strip())
    raise ConfigurationError(['The tool choice must be auto, none, required or {"name": …}.'])


def _effort(value: object) -> str | None:
    if value is None or (isinstance(value, str) and value in (*REASONING_EFFORTS, EFFORT_OFF)):
        return value
    allowed = ", ".join((*REASONING_EFFORTS, EFFORT_OFF))
    raise ConfigurationError([f"Reasoning effort must be one of {allowed}."])


def capabilities_from(params: Mapping[str, Any]) -> Capabilities:
    """The capability options in a conversation's ``params`` (see ``CAPABILITY_KEYS``) as
    request fields; ConfigurationError (a ValueError) says what is wrong with a bad one."""
    tools = params.get(PARAM_TOOLS) or []
    if not isinstance(tools, list | tuple):
        raise ConfigurationError(["The tools must be a list."])
    thinking = params.get(PARAM_ENABLE_THINKING)
    lora = params.get(PARAM_LORA)
    if lora is not None and not isinstance(lora, str):
        raise ConfigurationError(["The LoRA adapter must be a name."])
    specs = tuple(_tool(t) for t in tools)
    return Capabilities(
        response_format=_response_format(params.get(PARAM_RESPONSE_FORMAT)),
        tools=specs,
        tool_choice=_tool_choice(params.get(PARAM_TOOL_CHOICE)) if specs else None,
        reasoning_effort=_effort(params.get(PARAM_REASONING_EFFORT)),
        enable_thinking=thinking if isinstance(thinking, bool) else None,
        lora=(lora.strip() or None) if lora is not None else None,
    )


def _image(attachment: Attachment) -> ImagePart:
    try:
        return ImagePart(data=attachment.data, mime_type=attachment.mime_type)
    except ValueError:
        raise ConfigurationError([f"{attachment.mime_type!r} is not an image type."]) from None


def _calls(message: Message) -> tuple[ToolCall, ...]:
    from flarechat.api.tools import ToolCall

    calls = []
    for call in message.tool_calls:
        call_id, name = call.get("id"), call.get("name")
        if isinstance(call_id, str) and isinstance(name, str):
            calls.append(ToolCall.of(id=call_id, name=name, arguments=call.get("arguments")))
    return tuple(calls)


def _to_chat(message: HistoryMessage | ChatMessage, names: Mapping[str, str]) -> ChatMessage:
    """A history message as the api sends it; a stored Message brings its images, its tool
    calls and (on a tool result) the call id and the function's name."""
    if isinstance(message, ChatMessage):
        return message
    reasoning = message.reasoning if message.role == _ROLE_ASSISTANT else None
    if not isinstance(message, Message):
        return ChatMessage(role=message.role, content=message.content, reasoning=reasoning or None)
    call_id = message.tool_call_id if message.role == _ROLE_TOOL else None
    return ChatMessage(
        role=message.role,
        content=message.content,
        reasoning=reasoning or None,
        images=tuple(_image(a) for a in message.attachments),
        tool_calls=_calls(message),
        tool_call_id=call_id,
        name=names.get(call_id) if call_id else None,
    )


def _kept(message: HistoryMessage | ChatMessage) -> bool:
    """Assistant turns without text or calls (failed, stopped early) carry nothing to send."""
    if message.role != _ROLE_ASSISTANT or message.content:
        return True
    return bool(message.tool_calls) if isinstance(message, Message | ChatMessage) else False


def build_request(
    *,
    model: str,
    history: Iterable[HistoryMessage | ChatMessage],
    system_prompt: str = "",
    params: SamplingParams | None = None,
    reject_if_busy: bool = False,
    gateway: GatewayOptions | None = None,
    session_id: str | None = None,
    capabilities: Capabilities | None = None,
    model_info: ModelInfo | None = None,
    model_schema: ModelSchema | None = None,
) -> ChatRequest:
    """A ChatRequest: the system prompt (when not blank) first, then ``history`` in order.

    Assistant messages with no content and no tool calls (a failed or stopped-before-any-text
    turn) are left out: they carry nothing the model said. Prior reasoning rides along as
    ``reasoning``; images, tool calls and tool results ride along too. ``capabilities`` (from
    :func:`capabilities_from`) and what is known of the model pick the rest of the request.
    """
    history = [m for m in history if _kept(m)]
    names = {
        str(call.get("id")): str(call.get("name"))
        for m in history
        if isinstance(m, Message)
        for call in m.tool_calls
    }
    messages = (
        [ChatMessage(role=_ROLE_SYSTEM, content=system_prompt)] if system_prompt.strip() else []
    )
    messages += [_to_chat(message, names) for message in history]
    chosen = capabilities or Capabilities()
    return ChatRequest(
        model=model,
        messages=tuple(messages),
        params=params or SamplingParams(),
        reject_if_busy=reject_if_busy,
        gateway=gateway or GatewayOptions(),
        session_id=session_id,
        response_format=chosen.response_format,
        tools=chosen.tools,
        tool_choice=chosen.tool_choice,
        reasoning_effort=chosen.reasoning_effort,
        enable_thinking=chosen.enable_thinking,
        lora=chosen.lora,
        model_info=model_info,
        model_schema=model_schema,
    )


@dataclass(frozen=True, slots=True)
class Profile:
    """The saved settings and the connection they make with the keychain and the environment.

    ``warnings`` are repairs that did not block (a bad saved value replaced by its default).
    """

    settings: Settings
    conn: Connection
    gateway: GatewayOptions
    reject_if_busy: bool
    warnings: tuple[str, ...] = ()


async def read_tokens(
    store: secrets.SecretStore, *, env: Mapping[str, str], keychain_timeout: float
) -> tuple[str | None, str | None, str | None]:
    """(API token, gateway token, why the keychain failed or None), read off the event loop.

    A token in the environment wins, so the keychain is not asked for it at all: an
    unavailable keychain is fine then.
    """
    api_token = env.get(ENV_API_TOKEN, "").strip() or None
    try:
        if api_token is None:
            api_token = await secrets.aget(store, secrets.API_TOKEN, timeout=keychain_timeout)
        gateway = await secrets.aget(store, secrets.GATEWAY_TOKEN, timeout=keychain_timeout)
    except secrets.SecretStoreUnavailable as unavailable:
        why = f" ({unavailable.reason})" if unavailable.reason else ""
        return api_token, None, f"{KEYCHAIN_UNREAD}{why}."
    return api_token, gateway, None


async def load_profile(
    *,
    settings_store: SettingsStore,
    secret_store: secrets.SecretStore,
    env: Mapping[str, str],
    keychain_timeout: float = KEYCHAIN_TIMEOUT,
) -> Profile:
    """Load settings, read the tokens, apply env overrides; ConfigurationError if unusable."""
    settings = await asyncio.to_thread(settings_store.load)
    api_token, gateway_token, keychain = await read_tokens(
        secret_store, env=env, keychain_timeout=keychain_timeout
    )
    resolved = resolve(settings, api_token=api_token, gateway_token=gateway_token, env=env)
    warnings = (*settings_store.problems, *resolved.warnings)
    if not resolved.is_complete:
        unread = [keychain] if keychain and not api_token else []
        if not resolved.account_id and not resolved.api_token:
            # Nothing set up: one "no credentials" from the caller, not a line per field.
            raise ConfigurationError([*unread, *warnings], unset=True)
        # An account or token missing is "incomplete"; a bad value beside them (a too-short
        # gateway token, a bad gateway id) is only that value's problem.
        missing = not resolved.account_id or not resolved.api_token
        raise ConfigurationError([*resolved.problems, *unread, *warnings], incomplete=missing)
    return Profile(
        settings=settings,
        conn=connection_from(resolved),
        gateway=gateway_options_from(resolved),
        reject_if_busy=resolved.reject_if_busy,
        warnings=warnings,
    )

"""Turning the profile into api requests: settings + keychain + env -> Connection, ChatRequest.

The settings layer may not import the api layer, so ``flarechat.settings.resolve.Resolved``
holds plain values; this module (core, which may import both) builds the api objects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from flarechat.api.config import (
    DEFAULT_API_BASE,
    DEFAULT_GATEWAY_BASE,
    ChatMessage,
    ChatRequest,
    Connection,
    Endpoint,
    GatewayOptions,
    Route,
    SamplingParams,
    Secret,
)
from flarechat.settings import secrets
from flarechat.settings.gateway_options import GatewayPrefs
from flarechat.settings.resolve import ENV_API_TOKEN, resolve
from flarechat.settings.schema import Settings
from flarechat.settings.store import SettingsStore

__all__ = [
    "KEYCHAIN_TIMEOUT",
    "ConfigurationError",
    "HistoryMessage",
    "Profile",
    "ResolvedConfig",
    "build_request",
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
_NO_GATEWAY_ID = (
    "The route goes through AI Gateway but no gateway id is set: enter one in Settings "
    "or set CLOUDFLARE_AI_GATEWAY_ID."
)


class ConfigurationError(ValueError):
    """The settings cannot make a working connection; ``problems`` says what to fix."""

    def __init__(self, problems: Sequence[str], *, incomplete: bool = False) -> None:
        self.problems = list(problems) or ["The connection settings are incomplete."]
        #: True when no usable account or token is configured at all (offer setup or demo)
        self.incomplete = incomplete
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


def _to_chat(message: HistoryMessage) -> ChatMessage:
    reasoning = message.reasoning if message.role == _ROLE_ASSISTANT else None
    return ChatMessage(role=message.role, content=message.content, reasoning=reasoning or None)


def build_request(
    *,
    model: str,
    history: Iterable[HistoryMessage],
    system_prompt: str = "",
    params: SamplingParams | None = None,
    reject_if_busy: bool = False,
    gateway: GatewayOptions | None = None,
    session_id: str | None = None,
) -> ChatRequest:
    """A ChatRequest: the system prompt (when not blank) first, then ``history`` in order.

    Assistant messages with no content (a failed or stopped-before-any-text turn) are left
    out: they carry nothing the model said. Prior reasoning rides along as ``reasoning``.
    """
    messages = (
        [ChatMessage(role=_ROLE_SYSTEM, content=system_prompt)] if system_prompt.strip() else []
    )
    messages += [
        _to_chat(message)
        for message in history
        if message.content or message.role != _ROLE_ASSISTANT
    ]
    return ChatRequest(
        model=model,
        messages=tuple(messages),
        params=params or SamplingParams(),
        reject_if_busy=reject_if_busy,
        gateway=gateway or GatewayOptions(),
        session_id=session_id,
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
        return api_token, None, f"The system keychain could not be read{why}."
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
        raise ConfigurationError([*resolved.problems, *unread, *warnings], incomplete=True)
    return Profile(
        settings=settings,
        conn=connection_from(resolved),
        gateway=gateway_options_from(resolved),
        reject_if_busy=resolved.reject_if_busy,
        warnings=warnings,
    )

"""Effective connection settings: saved settings + keychain tokens, overridden by the environment.

``resolve()`` is pure (the environment is a parameter) and returns plain values in ``Resolved``;
the core layer turns them into ``flarechat.api.config.Connection`` (settings may not import api).

Environment overrides win over saved settings and the keychain, and are listed in
``Resolved.overridden`` so the settings dialog can show those fields read-only:

    CLOUDFLARE_ACCOUNT_ID      -> account_id
    CLOUDFLARE_API_TOKEN       -> api_token
    CLOUDFLARE_AI_GATEWAY_ID   -> gateway_id; if the saved route is "direct", the route becomes
                                  "gateway-rest" (and "route" is listed as overridden): setting a
                                  gateway in the environment means "go through it". A saved
                                  gateway route (rest or url) is kept as chosen.
    FLARECHAT_API_BASE         -> api_base
    FLARECHAT_GATEWAY_BASE     -> gateway_base

A variable that is unset, empty or only whitespace does not override anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace

from flarechat.settings import validate
from flarechat.settings.gateway_options import GatewayPrefs, gateway_prefs
from flarechat.settings.schema import ENDPOINTS, ROUTES, Settings

__all__ = [
    "API_TOKEN_FIELD",
    "DEFAULT_API_BASE",
    "DEFAULT_GATEWAY_BASE",
    "ENV_ACCOUNT_ID",
    "ENV_API_BASE",
    "ENV_API_TOKEN",
    "ENV_GATEWAY_BASE",
    "ENV_GATEWAY_ID",
    "OVERRIDE_ENV",
    "Resolved",
    "resolve",
]

#: Same values as flarechat.api.config.DEFAULT_* (a test keeps them in step).
DEFAULT_API_BASE = "https://api.cloudflare.com/client/v4"
DEFAULT_GATEWAY_BASE = "https://gateway.ai.cloudflare.com/v1"
DEFAULT_REQUEST_TIMEOUT = Settings().request_timeout

ENV_ACCOUNT_ID = "CLOUDFLARE_ACCOUNT_ID"
ENV_API_TOKEN = "CLOUDFLARE_API_TOKEN"
ENV_GATEWAY_ID = "CLOUDFLARE_AI_GATEWAY_ID"
ENV_API_BASE = "FLARECHAT_API_BASE"
ENV_GATEWAY_BASE = "FLARECHAT_GATEWAY_BASE"
#: The name ``overridden`` uses for the API token (it is not a Settings field).
API_TOKEN_FIELD = "api_token"
#: Field -> the environment variable that overrides it (for "set by …" labels).
OVERRIDE_ENV: Mapping[str, str] = {
    "account_id": ENV_ACCOUNT_ID,
    API_TOKEN_FIELD: ENV_API_TOKEN,
    "gateway_id": ENV_GATEWAY_ID,
    "api_base": ENV_API_BASE,
    "gateway_base": ENV_GATEWAY_BASE,
}
_DIRECT = "direct"
_GATEWAY_REST = "gateway-rest"
_GATEWAY_URL = "gateway-url"
_MASK = "'********'"
_SECRET_FIELDS = frozenset({"api_token", "gateway_token"})


@dataclass(frozen=True, slots=True, repr=False)
class Resolved:
    """What a request needs, as plain values; tokens are plain ``str`` but masked in repr.

    ``problems`` block sending (``is_complete`` is False); ``warnings`` say that a saved value was
    ignored in favour of its default but do not block.
    """

    account_id: str
    api_token: str
    gateway_token: str
    api_base: str
    gateway_base: str
    route: str
    endpoint: str
    gateway_id: str
    reject_if_busy: bool
    skip_cache: bool
    cache_ttl: int | None
    request_timeout: float
    #: the other AI Gateway request options (cache key, metadata, log, retries)
    gateway_options: GatewayPrefs = field(default_factory=GatewayPrefs)
    overridden: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def is_complete(self) -> bool:
        """True when a request can be sent: account, token and route are all usable."""
        return not self.problems

    @property
    def uses_gateway(self) -> bool:
        return self.route != _DIRECT

    def __repr__(self) -> str:
        parts = []
        for item in fields(self):
            value = getattr(self, item.name)
            shown = (_MASK if value else "''") if item.name in _SECRET_FIELDS else repr(value)
            parts.append(f"{item.name}={shown}")
        return f"Resolved({', '.join(parts)})"

    __str__ = __repr__


def resolve(
    settings: Settings,
    *,
    api_token: str | None,
    gateway_token: str | None,
    env: Mapping[str, str] = os.environ,
) -> Resolved:
    """Combine saved settings, keychain tokens and environment overrides (see module doc)."""
    overridden: set[str] = set()

    def pick(saved: str, name: str) -> str:
        from_env = _env_value(env, OVERRIDE_ENV[name])
        if from_env is None:
            return saved.strip()
        overridden.add(name)
        return from_env

    gateway_id = pick(settings.gateway_id, "gateway_id")
    options, option_warnings = gateway_prefs(settings)
    route = settings.route
    if "gateway_id" in overridden and route == _DIRECT:
        route = _GATEWAY_REST
        overridden.add("route")
    resolved = Resolved(
        account_id=pick(settings.account_id, "account_id"),
        api_token=pick(api_token or "", API_TOKEN_FIELD),
        gateway_token=(gateway_token or "").strip(),
        api_base=pick(settings.api_base, "api_base"),
        gateway_base=pick(settings.gateway_base, "gateway_base"),
        route=route,
        endpoint=settings.endpoint,
        gateway_id=gateway_id,
        reject_if_busy=settings.reject_if_busy,
        skip_cache=settings.skip_cache,
        cache_ttl=settings.cache_ttl,
        request_timeout=settings.request_timeout,
        gateway_options=options,
        overridden=frozenset(overridden),
    )
    checked = _checked(resolved)
    checked.warnings.extend(option_warnings)
    return checked


def _env_value(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _checked(raw: Resolved) -> Resolved:
    """Validate every value, fill defaults, and collect problems and warnings."""
    problems: list[str] = []
    problems += _credential_problems(raw)
    problems += _route_problems(raw)
    api_base, error = _base(raw.api_base, DEFAULT_API_BASE, raw, "api_base")
    if error:
        problems.append(error)
    warnings: list[str] = []
    gateway_base, error = _base(raw.gateway_base, DEFAULT_GATEWAY_BASE, raw, "gateway_base")
    if error and raw.route == _GATEWAY_URL:
        problems.append(error)
    elif error:
        warnings.append(f"{error} (Unused on this route; the default gateway URL is kept.)")
    cache_ttl = raw.cache_ttl
    if (error := validate.validate_cache_ttl(cache_ttl)) is not None:
        warnings.append(f"{error} The gateway's default cache TTL is used instead.")
        cache_ttl = None
    timeout = raw.request_timeout
    if (error := validate.validate_request_timeout(timeout)) is not None:
        warnings.append(f"{error} {DEFAULT_REQUEST_TIMEOUT:g} seconds is used instead.")
        timeout = DEFAULT_REQUEST_TIMEOUT
    return replace(
        raw,
        api_base=api_base,
        gateway_base=gateway_base,
        cache_ttl=cache_ttl,
        request_timeout=timeout,
        problems=problems,
        warnings=warnings,
    )


def _source(raw: Resolved, name: str) -> str:
    """A prefix naming the environment variable when the value came from there."""
    return f"{OVERRIDE_ENV[name]}: " if name in raw.overridden else ""


def _credential_problems(raw: Resolved) -> list[str]:
    problems: list[str] = []
    if not raw.account_id:
        problems.append(
            f"No Cloudflare account ID is set. Enter it in Settings or set {ENV_ACCOUNT_ID}."
        )
    elif (error := validate.validate_account_id(raw.account_id)) is not None:
        problems.append(_source(raw, "account_id") + error)
    if not raw.api_token:
        problems.append(
            "No API token is set. Enter it in Settings (it is kept in the system keychain) "
            f"or set {ENV_API_TOKEN}."
        )
    elif (error := validate.validate_api_token(raw.api_token)) is not None:
        problems.append(_source(raw, API_TOKEN_FIELD) + error)
    return problems


def _route_problems(raw: Resolved) -> list[str]:
    problems: list[str] = []
    if raw.route not in ROUTES:
        problems.append(f"Unknown route {raw.route!r}; choose direct or an AI Gateway route.")
    if raw.endpoint not in ENDPOINTS:
        problems.append(f"Unknown endpoint {raw.endpoint!r}; choose native or openai.")
    if raw.route in (_GATEWAY_REST, _GATEWAY_URL):
        if (error := validate.validate_gateway_id(raw.gateway_id)) is not None:
            problems.append(_source(raw, "gateway_id") + error)
        if raw.gateway_token and (err := validate.validate_gateway_token(raw.gateway_token)):
            problems.append(err)
    return problems


def _base(value: str, default: str, raw: Resolved, name: str) -> tuple[str, str | None]:
    """The base URL without a trailing slash ("" -> default), or the default and an error."""
    if not value:
        return default, None
    error = validate.validate_base_url(value)
    if error is not None:
        return default, _source(raw, name) + error
    return value.rstrip("/"), None

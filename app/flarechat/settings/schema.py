"""The settings schema: one versioned dataclass, saved as JSON (no secrets, ever)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ENDPOINTS", "ROUTES", "SCHEMA_VERSION", "Settings"]

SCHEMA_VERSION = 1
#: The values of ``flarechat.api.config.Route`` / ``Endpoint`` (settings may not import api).
ROUTES = ("direct", "gateway-rest", "gateway-url")
ENDPOINTS = ("native", "openai")


@dataclass(slots=True)
class Settings:
    """Everything the user can set, minus secrets (those live in the OS keychain).

    ``route`` is a ``flarechat.api.config.Route`` value, ``endpoint`` an ``Endpoint`` value;
    they are stored as plain strings so this module stays free of the api layer.
    """

    schema_version: int = SCHEMA_VERSION
    account_id: str = ""
    route: str = "direct"  # direct | gateway-rest | gateway-url
    endpoint: str = "native"  # native | openai
    gateway_id: str = ""
    reject_if_busy: bool = False
    skip_cache: bool = False
    cache_ttl: int | None = None  # seconds; None = gateway default
    default_max_tokens: int = 2048
    default_temperature: float | None = None
    default_system_prompt: str = ""
    api_base: str = ""  # "" = https://api.cloudflare.com/client/v4
    gateway_base: str = ""  # "" = https://gateway.ai.cloudflare.com/v1
    request_timeout: float = 120.0  # seconds to the first byte
    last_model: str = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
    #: UI state restored at start (window geometry, splitter sizes…), base64 strings
    ui_state: dict[str, str] = field(default_factory=dict)

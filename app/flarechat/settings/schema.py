"""The settings schema: one versioned dataclass, saved as JSON (no secrets, ever)."""

from __future__ import annotations

from dataclasses import dataclass, field

from flarechat.gateway_limits import BACKOFF_KINDS

__all__ = ["BACKOFFS", "ENDPOINTS", "ROUTES", "SCHEMA_VERSION", "Settings"]

SCHEMA_VERSION = 1
#: The values of ``flarechat.api.config.Route`` / ``Endpoint`` (settings may not import api).
ROUTES = ("direct", "gateway-rest", "gateway-url")
ENDPOINTS = ("native", "openai")
#: AI Gateway retry backoff kinds ("" in Settings = the gateway's default).
BACKOFFS = BACKOFF_KINDS


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
    #: AI Gateway request options (cf-aig-* headers, gateway routes only); empty = default
    gateway_cache_key: str = ""
    gateway_metadata: dict[str, str] = field(default_factory=dict)  # at most 5 entries
    gateway_collect_log: bool | None = None  # None = the gateway's setting
    gateway_request_timeout_ms: int | None = None
    gateway_max_attempts: int | None = None  # 1..5
    gateway_retry_delay_ms: int | None = None  # 0..5000
    gateway_backoff: str = ""  # "" | constant | linear | exponential
    default_max_tokens: int = 2048
    default_temperature: float | None = None
    default_system_prompt: str = ""
    api_base: str = ""  # "" = https://api.cloudflare.com/client/v4
    gateway_base: str = ""  # "" = https://gateway.ai.cloudflare.com/v1
    request_timeout: float = 120.0  # seconds to the first byte
    #: seconds a started reply may go without data (api.config.DEFAULT_IDLE_TIMEOUT)
    idle_timeout: float = 60.0
    #: seconds for a whole request, the deadline (api.config.DEFAULT_OVERALL_TIMEOUT)
    overall_timeout: float = 600.0
    last_model: str = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
    theme: str = "system"  # system | light | dark
    font_size: int = 0  # points; 0 = the system's size
    #: demo mode was on when the app last quit (no account): start in it again
    demo_mode: bool = False
    #: UI state restored at start (window geometry, splitter sizes…), base64 strings
    ui_state: dict[str, str] = field(default_factory=dict)

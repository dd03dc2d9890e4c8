"""Pure field validators shared by the settings dialog, the CLI and the store: error text or None.

Every validator takes the raw value the user typed (a ``str`` from a line edit or argv, or an
already-parsed number), trims surrounding whitespace, and returns ``None`` when the value is
acceptable or one plain-English sentence (or two) saying what is wrong and how to fix it.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from flarechat import gateway_limits

__all__ = [
    "CACHE_TTL_MAX",
    "CACHE_TTL_MIN",
    "GATEWAY_ID_MAX_LENGTH",
    "IDLE_TIMEOUT_MAX",
    "IDLE_TIMEOUT_MIN",
    "MAX_TOKENS_MAX",
    "MAX_TOKENS_MIN",
    "OVERALL_TIMEOUT_MAX",
    "OVERALL_TIMEOUT_MIN",
    "REQUEST_TIMEOUT_MAX",
    "REQUEST_TIMEOUT_MIN",
    "SAMPLING_LIMITS",
    "TEMPERATURE_MAX",
    "TEMPERATURE_MIN",
    "TOKEN_MAX_LENGTH",
    "TOKEN_MIN_LENGTH",
    "is_loopback_host",
    "is_unset",
    "parse_int",
    "validate_account_id",
    "validate_api_token",
    "validate_base_url",
    "validate_cache_ttl",
    "validate_gateway_id",
    "validate_gateway_token",
    "validate_idle_timeout",
    "validate_max_tokens",
    "validate_overall_timeout",
    "validate_request_timeout",
    "validate_sampling",
    "validate_temperature",
]

ACCOUNT_ID_LENGTH = 32
_ACCOUNT_ID_RE = re.compile(r"[0-9a-fA-F]{32}")
_ACCOUNT_ID_HINT = (
    'Find it in the Cloudflare dashboard → Workers AI → "Use REST API" '
    "(or in the dashboard URL after dash.cloudflare.com/)."
)

#: Cloudflare API tokens are 40 characters (53+ in the newer cfut_/cfat_ format); these bounds
#: only catch an obviously truncated paste or a whole paragraph pasted into the field.
TOKEN_MIN_LENGTH = 20
TOKEN_MAX_LENGTH = 512
#: Tokens travel in an HTTP header, so only visible ASCII can ever be valid.
_TOKEN_CHARS_RE = re.compile(r"[\x21-\x7e]+")

GATEWAY_ID_MAX_LENGTH = 64
_GATEWAY_ID_RE = re.compile(r"[a-z0-9_-]+")

#: AI Gateway's cache TTL bounds in seconds (the one source: flarechat.gateway_limits).
CACHE_TTL_MIN = gateway_limits.CACHE_TTL_MIN
CACHE_TTL_MAX = gateway_limits.CACHE_TTL_MAX
MAX_TOKENS_MIN = 1
MAX_TOKENS_MAX = 131_072
TEMPERATURE_MIN = 0.0
TEMPERATURE_MAX = 5.0
REQUEST_TIMEOUT_MIN = 5.0
REQUEST_TIMEOUT_MAX = 600.0
#: Seconds a started reply may go without data: below 5 s a slow model's pauses would cut it
#: off; past 10 minutes nobody is still waiting for it.
IDLE_TIMEOUT_MIN = 5.0
IDLE_TIMEOUT_MAX = 600.0
#: Seconds for a whole request: at least long enough for a short reply, at most an hour.
OVERALL_TIMEOUT_MIN = 10.0
OVERALL_TIMEOUT_MAX = 3600.0


@dataclass(frozen=True, slots=True)
class SamplingLimit:
    """The accepted range of one optional sampling parameter (cloudflare-api.md §2)."""

    label: str
    integer: bool
    low: float
    high: float


#: Optional per-conversation sampling parameters, widest range any model accepts.
SAMPLING_LIMITS: Mapping[str, SamplingLimit] = {
    "top_p": SamplingLimit("Top-p", integer=False, low=0.0, high=2.0),
    "top_k": SamplingLimit("Top-k", integer=True, low=1, high=50),
    "seed": SamplingLimit("Seed", integer=True, low=1, high=9_999_999_999),
    "repetition_penalty": SamplingLimit("Repetition penalty", integer=False, low=0.0, high=2.0),
    "frequency_penalty": SamplingLimit("Frequency penalty", integer=False, low=-2.0, high=2.0),
    "presence_penalty": SamplingLimit("Presence penalty", integer=False, low=-2.0, high=2.0),
}

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


def validate_account_id(value: str) -> str | None:
    """A Cloudflare account ID: exactly 32 hexadecimal characters."""
    text = value.strip()
    if not text:
        return f"Enter your Cloudflare account ID. {_ACCOUNT_ID_HINT}"
    if len(text) != ACCOUNT_ID_LENGTH:
        return (
            f"An account ID is {ACCOUNT_ID_LENGTH} characters long; this one has {len(text)}. "
            f"{_ACCOUNT_ID_HINT}"
        )
    if _ACCOUNT_ID_RE.fullmatch(text) is None:
        return (
            "An account ID contains only the characters 0-9 and a-f. "
            f"Check for a typo or a pasted e-mail address. {_ACCOUNT_ID_HINT}"
        )
    return None


def validate_api_token(value: str) -> str | None:
    """A Cloudflare API token (never echoed back in the message)."""
    return _validate_token(value, label="API token", where=_API_TOKEN_HINT)


def validate_gateway_token(value: str) -> str | None:
    """An AI Gateway authentication token (only needed for authenticated gateways)."""
    return _validate_token(value, label="gateway token", where=_GATEWAY_TOKEN_HINT)


_API_TOKEN_HINT = (
    'Create one in the Cloudflare dashboard → Workers AI → "Use REST API" → '
    '"Create a Workers AI API Token".'
)
_GATEWAY_TOKEN_HINT = (
    "Create one in the Cloudflare dashboard → AI Gateway → your gateway → Settings."
)


def _validate_token(value: str, *, label: str, where: str) -> str | None:
    text = value.strip()
    if not text:
        return f"Enter your {label}. {where}"
    if any(ch.isspace() for ch in text):
        return (
            f"The {label} contains a space or line break. Paste only the token itself "
            '(without "Bearer " or any surrounding text).'
        )
    if _TOKEN_CHARS_RE.fullmatch(text) is None:
        return f"The {label} contains characters a token never has. Copy it again. {where}"
    if len(text) < TOKEN_MIN_LENGTH:
        return (
            f"The {label} is too short ({len(text)} characters); it looks cut off. Copy it again."
        )
    if len(text) > TOKEN_MAX_LENGTH:
        return f"The {label} is too long ({len(text)} characters). Paste only the token itself."
    return None


def validate_gateway_id(value: str) -> str | None:
    """An AI Gateway ID (its name): 1 to 64 of a-z, 0-9, - and _."""
    text = value.strip()
    if not text:
        return "Enter the AI Gateway ID (the gateway's name in the dashboard), or choose Direct."
    if len(text) > GATEWAY_ID_MAX_LENGTH:
        return (
            f"A gateway ID is at most {GATEWAY_ID_MAX_LENGTH} characters; this one has {len(text)}."
        )
    if _GATEWAY_ID_RE.fullmatch(text) is None:
        return (
            "A gateway ID contains only lowercase letters, digits, - and _. "
            "Copy it from the Cloudflare dashboard → AI Gateway."
        )
    return None


def validate_cache_ttl(value: int | str | None) -> str | None:
    """AI Gateway cache TTL in whole seconds; ``None`` or "" means the gateway's default."""
    if is_unset(value):
        return None
    return _check_int(
        value, label="The cache TTL", low=CACHE_TTL_MIN, high=CACHE_TTL_MAX, unit=" seconds"
    )


def validate_max_tokens(value: int | str) -> str | None:
    """The reply length limit sent with every request."""
    return _check_int(value, label="Max tokens", low=MAX_TOKENS_MIN, high=MAX_TOKENS_MAX, unit="")


def validate_temperature(value: float | str | None) -> str | None:
    """Sampling temperature; ``None`` or "" means the model's default."""
    if is_unset(value):
        return None
    return _check_float(
        value, label="Temperature", low=TEMPERATURE_MIN, high=TEMPERATURE_MAX, unit=""
    )


def validate_request_timeout(value: float | str) -> str | None:
    """Seconds to wait for the first byte of a reply."""
    return _check_float(
        value,
        label="The request timeout",
        low=REQUEST_TIMEOUT_MIN,
        high=REQUEST_TIMEOUT_MAX,
        unit=" seconds",
    )


def validate_idle_timeout(value: float | str) -> str | None:
    """Seconds a streamed reply may go without data once it has started."""
    return _check_float(
        value,
        label="The idle timeout",
        low=IDLE_TIMEOUT_MIN,
        high=IDLE_TIMEOUT_MAX,
        unit=" seconds",
    )


def validate_overall_timeout(value: float | str) -> str | None:
    """Seconds for a whole request, connecting to the last byte (the deadline)."""
    return _check_float(
        value,
        label="The deadline",
        low=OVERALL_TIMEOUT_MIN,
        high=OVERALL_TIMEOUT_MAX,
        unit=" seconds",
    )


def validate_sampling(name: str, value: float | str | None) -> str | None:
    """One of ``SAMPLING_LIMITS``; ``None`` or "" means the model's default (not sent)."""
    if is_unset(value):
        return None
    limit = SAMPLING_LIMITS[name]
    if limit.integer:
        low, high = int(limit.low), int(limit.high)
        if isinstance(value, float):
            return f"{limit.label} must be a whole number from {low:,} to {high:,}."
        return _check_int(value, label=limit.label, low=low, high=high, unit="")
    return _check_float(value, label=limit.label, low=limit.low, high=limit.high, unit="")


def is_unset(value: object) -> bool:
    """``None`` or a blank string: an optional field left empty (the default applies)."""
    return value is None or (isinstance(value, str) and not value.strip())


def parse_int(value: object) -> int | None:
    """A whole number from an int or its text; ``None`` for anything else (bools included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _check_int(value: object, *, label: str, low: int, high: int, unit: str) -> str | None:
    number = parse_int(value)
    if number is None:
        return f"{label} must be a whole number from {low:,} to {high:,}{unit}."
    if not low <= number <= high:
        return f"{label} must be from {low:,} to {high:,}{unit}; {number:,} is out of range."
    return None


def _parse_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _check_float(value: object, *, label: str, low: float, high: float, unit: str) -> str | None:
    number = _parse_float(value)
    if number is None or not math.isfinite(number):
        return f"{label} must be a number from {low:g} to {high:g}{unit}."
    if not low <= number <= high:
        return f"{label} must be from {low:g} to {high:g}{unit}; {number:g} is out of range."
    return None


def validate_base_url(value: str) -> str | None:
    """A custom API or gateway base URL; "" means the built-in Cloudflare default.

    Must be an absolute http(s) URL with a host and no query, fragment or credentials. Plain
    http is refused except to a loopback host, because the API token travels with every request.
    """
    text = value.strip()
    if not text:
        return None
    if any(ch.isspace() for ch in text):
        return "A base URL cannot contain spaces."
    try:
        parts = urlsplit(text)
        host = parts.hostname
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return "That is not a valid URL. Use the form https://host/path."
    if parts.scheme not in ("http", "https") or not host:
        return "A base URL must start with https:// and include a host name."
    if parts.username is not None or parts.password is not None:
        return "A base URL must not contain a user name or password."
    if parts.query or parts.fragment:
        return "A base URL must not contain a query (?…) or fragment (#…)."
    if parts.scheme == "http" and not is_loopback_host(host):
        return (
            "Use https:// for anything but this computer: plain http:// would send the API "
            "token unencrypted. (http:// is allowed for localhost and 127.0.0.1.)"
        )
    return None


def is_loopback_host(host: str) -> bool:
    """True for localhost and loopback IP addresses (127.0.0.0/8, ::1)."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False

"""AI Gateway request options as the user types them: validators and the metadata text format.

Each ``validate_*`` takes the raw value (a ``str`` from a field or argv, or a stored value) and
returns ``None`` when it is acceptable (empty means "the gateway's default") or one plain-English
sentence saying what is wrong. Metadata is written ``key=value, key=value`` (at most 5 entries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flarechat import gateway_limits as limits
from flarechat.settings.schema import BACKOFFS, Settings
from flarechat.settings.validate import is_unset, parse_int

__all__ = [
    "GATEWAY_MAX_ATTEMPTS_MAX",
    "GATEWAY_MAX_ATTEMPTS_MIN",
    "GATEWAY_REQUEST_TIMEOUT_MAX_MS",
    "GATEWAY_RETRY_DELAY_MAX_MS",
    "METADATA_MAX_ENTRIES",
    "GatewayPrefs",
    "format_metadata",
    "gateway_prefs",
    "parse_metadata",
    "validate_backoff",
    "validate_cache_key",
    "validate_max_attempts",
    "validate_metadata",
    "validate_metadata_entry",
    "validate_request_timeout_ms",
    "validate_retry_delay_ms",
]

# The gateway's own limits live in flarechat.gateway_limits (shared with the api layer); these
# names stay for the dialog and the CLI, which quote them in labels and help text.
METADATA_MAX_ENTRIES = limits.METADATA_MAX_ENTRIES
GATEWAY_MAX_ATTEMPTS_MIN = limits.MAX_ATTEMPTS_MIN
GATEWAY_MAX_ATTEMPTS_MAX = limits.MAX_ATTEMPTS_MAX
GATEWAY_RETRY_DELAY_MAX_MS = limits.RETRY_DELAY_MAX_MS
GATEWAY_REQUEST_TIMEOUT_MAX_MS = limits.REQUEST_TIMEOUT_MAX_MS
CACHE_KEY_MAX_LENGTH = 1024
_ENTRY_SEPARATOR = ","
_PAIR_SEPARATOR = "="
_FORMAT_HINT = "Write metadata as key=value, separated by commas (e.g. team=docs, ticket=42)."


def _header_safe(text: str) -> bool:
    """Visible ASCII and spaces only: the value travels in an HTTP header."""
    return text.isascii() and all(0x20 <= ord(ch) < 0x7F for ch in text)


def validate_cache_key(value: str) -> str | None:
    text = value.strip()
    if not text:
        return None
    if not _header_safe(text):
        return "The cache key may contain only plain ASCII letters, digits and punctuation."
    if len(text) > CACHE_KEY_MAX_LENGTH:
        return f"The cache key is at most {CACHE_KEY_MAX_LENGTH:,} characters long."
    return None


def _int_in(value: int | str | None, *, label: str, low: int, high: int) -> str | None:
    if is_unset(value):
        return None
    number = parse_int(value)
    if number is None or not low <= number <= high:
        return f"{label} must be a whole number from {low:,} to {high:,}, or empty for the default."
    return None


def validate_request_timeout_ms(value: int | str | None) -> str | None:
    return _int_in(
        value,
        label="The gateway request timeout (ms)",
        low=limits.REQUEST_TIMEOUT_MIN_MS,
        high=GATEWAY_REQUEST_TIMEOUT_MAX_MS,
    )


def validate_max_attempts(value: int | str | None) -> str | None:
    return _int_in(
        value,
        label="Gateway max attempts",
        low=GATEWAY_MAX_ATTEMPTS_MIN,
        high=GATEWAY_MAX_ATTEMPTS_MAX,
    )


def validate_retry_delay_ms(value: int | str | None) -> str | None:
    return _int_in(
        value,
        label="The gateway retry delay (ms)",
        low=limits.RETRY_DELAY_MIN_MS,
        high=GATEWAY_RETRY_DELAY_MAX_MS,
    )


def validate_backoff(value: str) -> str | None:
    text = value.strip()
    if not text or text in BACKOFFS:
        return None
    return f"The gateway backoff must be one of {', '.join(BACKOFFS)}, or empty for the default."


def validate_metadata_entry(key: str, value: str) -> str | None:
    """One ``key=value`` metadata entry (both parts plain text, the key not empty)."""
    if not key.strip():
        return f"A metadata entry has no key. {_FORMAT_HINT}"
    if not _header_safe(key) or not _header_safe(value):
        return f"Metadata {key.strip()!r} may contain only plain ASCII text."
    return None


def validate_metadata(metadata: Mapping[str, str]) -> str | None:
    if len(metadata) > METADATA_MAX_ENTRIES:
        return (
            f"AI Gateway keeps at most {METADATA_MAX_ENTRIES} metadata entries; "
            f"there are {len(metadata)}."
        )
    for key, value in metadata.items():
        if (error := validate_metadata_entry(key, value)) is not None:
            return error
    return None


def parse_metadata(text: str) -> tuple[dict[str, str], str | None]:
    """``"team=docs, ticket=42"`` -> ({"team": "docs", "ticket": "42"}, None), or the error."""
    entries: dict[str, str] = {}
    for part in (p.strip() for p in text.split(_ENTRY_SEPARATOR)):
        if not part:
            continue
        if _PAIR_SEPARATOR not in part:
            return {}, f"Metadata {part!r} has no '='. {_FORMAT_HINT}"
        key, value = (s.strip() for s in part.split(_PAIR_SEPARATOR, 1))
        if (error := validate_metadata_entry(key, value)) is not None:
            return {}, error
        if key in entries:
            return {}, f"Metadata {key!r} is given twice; each key may appear once."
        entries[key] = value
    error = validate_metadata(entries)
    return ({}, error) if error else (entries, None)


def format_metadata(metadata: Mapping[str, str]) -> str:
    """The text ``parse_metadata`` reads back."""
    return f"{_ENTRY_SEPARATOR} ".join(
        f"{key}{_PAIR_SEPARATOR}{value}" for key, value in metadata.items()
    )


@dataclass(frozen=True, slots=True)
class GatewayPrefs:
    """The saved AI Gateway request options, checked; empty/None = the gateway's default."""

    cache_key: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    collect_log: bool | None = None
    request_timeout_ms: int | None = None
    max_attempts: int | None = None
    retry_delay_ms: int | None = None
    backoff: str = ""


#: GatewayPrefs field -> (Settings field, validator).
_CHECKS: Mapping[str, tuple[str, Callable[[Any], str | None]]] = {
    "cache_key": ("gateway_cache_key", validate_cache_key),
    "metadata": ("gateway_metadata", validate_metadata),
    "collect_log": ("gateway_collect_log", lambda _value: None),
    "request_timeout_ms": ("gateway_request_timeout_ms", validate_request_timeout_ms),
    "max_attempts": ("gateway_max_attempts", validate_max_attempts),
    "retry_delay_ms": ("gateway_retry_delay_ms", validate_retry_delay_ms),
    "backoff": ("gateway_backoff", validate_backoff),
}


def gateway_prefs(settings: Settings) -> tuple[GatewayPrefs, list[str]]:
    """The options ``settings`` hold, and a warning for each invalid one (its default is used)."""
    values: dict[str, Any] = {}
    warnings: list[str] = []
    for name, (setting, check) in _CHECKS.items():
        value = getattr(settings, setting)
        if (error := check(value)) is not None:
            warnings.append(f"{error} The gateway's default is used instead.")
            continue
        values[name] = value.strip() if isinstance(value, str) else value
    values["metadata"] = dict(values.get("metadata", {}))
    return GatewayPrefs(**values), warnings

"""Settings file migrations: one small function per schema version, applied in order on load.

To add version N+1: bump ``SCHEMA_VERSION`` in schema.py and add ``N: _vN_to_vN1`` to
``MIGRATIONS``. Each function takes the raw JSON object of version N and returns the object of
version N+1; it must tolerate missing keys and odd values (the store type-checks afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flarechat.settings.schema import SCHEMA_VERSION

__all__ = [
    "MIGRATIONS",
    "PLAINTEXT_SECRET_KEYS",
    "Migration",
    "MigrationResult",
    "holds_plaintext_secret",
    "migrate",
    "without_plaintext_secrets",
]

JSONObject = dict[str, Any]
Migration = Callable[[JSONObject, list[str]], JSONObject]
"""A step: (raw object, notes to append for the user) -> the next version's raw object."""

#: Pre-versioned (v0) files used camelCase keys and a few different names.
_V0_RENAMES = {
    "accountId": "account_id",
    "gateway": "gateway_id",
    "gatewayId": "gateway_id",
    "rejectIfBusy": "reject_if_busy",
    "skipCache": "skip_cache",
    "cacheTtl": "cache_ttl",
    "maxTokens": "default_max_tokens",
    "temperature": "default_temperature",
    "systemPrompt": "default_system_prompt",
    "apiBase": "api_base",
    "gatewayBase": "gateway_base",
    "timeout": "request_timeout",
    "model": "last_model",
}
#: v0 could hold a plaintext token; it is dropped, never carried forward. (Any version is checked
#: for them: a hand-edited file may hold one too.) The store tells the user what became of it.
PLAINTEXT_SECRET_KEYS = ("apiToken", "api_token", "token", "gatewayToken", "gateway_token")


def holds_plaintext_secret(data: JSONObject) -> bool:
    return any(key in data for key in PLAINTEXT_SECRET_KEYS)


def without_plaintext_secrets(data: JSONObject) -> JSONObject:
    return {k: v for k, v in data.items() if k not in PLAINTEXT_SECRET_KEYS}


def _v0_to_v1(data: JSONObject, notes: list[str]) -> JSONObject:
    """camelCase keys -> schema names; ``useGateway: true`` -> route "gateway-rest"."""
    out: JSONObject = {
        _V0_RENAMES.get(key, key): value for key, value in without_plaintext_secrets(data).items()
    }
    use_gateway = data.get("useGateway")
    if "route" not in out and isinstance(use_gateway, bool):
        out["route"] = "gateway-rest" if use_gateway else "direct"
    out.pop("useGateway", None)
    return out


MIGRATIONS: dict[int, Migration] = {
    0: _v0_to_v1,
}


@dataclass(frozen=True, slots=True)
class MigrationResult:
    """The migrated object, whether anything changed, and notes for the user."""

    data: JSONObject
    migrated: bool
    notes: list[str]


def migrate(data: JSONObject) -> MigrationResult:
    """Bring a raw settings object up to ``SCHEMA_VERSION``.

    A file without ``schema_version`` is version 0. A file from a newer Flarechat is read as-is
    (unknown keys are ignored later) and noted, since saving will write the current version.
    """
    notes: list[str] = []
    version = data.get("schema_version", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        notes.append(f"The settings file has an invalid schema_version ({version!r}); read as v0.")
        version = 0
    if version > SCHEMA_VERSION:
        notes.append(
            f"The settings file was written by a newer Flarechat (schema {version}); "
            "settings this version does not know are ignored."
        )
        return MigrationResult(data, migrated=False, notes=notes)
    start = version
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](dict(data), notes)
        version += 1
        data["schema_version"] = version
    return MigrationResult(data, migrated=version != start, notes=notes)

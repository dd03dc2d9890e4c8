"""The settings file: tolerant JSON load (with migrations) and atomic save. Never holds a secret.

``load()`` never raises for bad content: a missing file gives defaults, a field with a wrong
type or an invalid value falls back to its default (the others are kept), and an unreadable
or corrupt file is moved aside to ``settings.json.corrupt-<UTC timestamp>``. Each of these is
reported in ``store.problems`` for the UI to show. ``save()`` writes a temp file in the same
directory, fsyncs it and renames it over the old one, so a crash leaves either the old or the
new file, never half of one. Both do blocking file I/O: call them off the GUI thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flarechat.paths import atomic_write_text, config_dir, storage_refusal
from flarechat.settings import gateway_options, validate
from flarechat.settings.migrations import (
    holds_plaintext_secret,
    migrate,
    without_plaintext_secrets,
)
from flarechat.settings.schema import ENDPOINTS, ROUTES, SCHEMA_VERSION, Settings
from flarechat.versioned_file import FileNotWritable, VersionedJsonFile

__all__ = ["SETTINGS_FILENAME", "SettingsStore"]

SETTINGS_FILENAME = "settings.json"
_JSON_INDENT = 2
_TOKEN_FOUND = "The settings file held an API token in plain text"
_TOKEN_AGAIN = "Enter the token again in Settings to keep it in the system keychain."
log = logging.getLogger(__name__)


class _WrongType(Exception):
    """A stored value does not have the field's type."""


def _optional(check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """A string check where "" (not set yet) is fine."""
    return lambda value: check(value) if value.strip() else None


def _choice(allowed: tuple[str, ...]) -> Callable[[str], str | None]:
    return lambda value: None if value in allowed else f"must be one of {', '.join(allowed)}"


#: Value checks beyond the type, by field: error text or None.
_VALUE_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "account_id": _optional(validate.validate_account_id),
    "route": _choice(ROUTES),
    "endpoint": _choice(ENDPOINTS),
    "gateway_id": _optional(validate.validate_gateway_id),
    "cache_ttl": validate.validate_cache_ttl,
    "default_max_tokens": validate.validate_max_tokens,
    "default_temperature": validate.validate_temperature,
    "api_base": validate.validate_base_url,
    "gateway_base": validate.validate_base_url,
    "request_timeout": validate.validate_request_timeout,
    "idle_timeout": validate.validate_idle_timeout,
    "overall_timeout": validate.validate_overall_timeout,
    "gateway_cache_key": gateway_options.validate_cache_key,
    "gateway_metadata": gateway_options.validate_metadata,
    "gateway_request_timeout_ms": gateway_options.validate_request_timeout_ms,
    "gateway_max_attempts": gateway_options.validate_max_attempts,
    "gateway_retry_delay_ms": gateway_options.validate_retry_delay_ms,
    "gateway_backoff": gateway_options.validate_backoff,
}
#: String fields stored trimmed (a pasted account ID often carries a newline).
_TRIMMED = frozenset(
    {
        "account_id",
        "gateway_id",
        "api_base",
        "gateway_base",
        "last_model",
        "gateway_cache_key",
        "gateway_backoff",
    }
)


class SettingsStore:
    """Loads and saves one ``Settings`` JSON file (default: ``config_dir()/settings.json``).

    ``problems`` lists what the last ``load()`` had to repair, in plain English.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._path = path if path is not None else config_dir() / SETTINGS_FILENAME
        self._file = VersionedJsonFile(
            self._path,
            label="The settings file",
            version_key="schema_version",
            version=SCHEMA_VERSION,
            holds="a settings object",
            fallback="default settings are used",
        )
        self.problems: list[str] = []

    @property
    def path(self) -> Path:
        return self._path

    @property
    def read_only_reason(self) -> str | None:
        """Set when the file was written by a newer Flarechat (or is damaged and could not be
        moved aside): ``save()`` then leaves it alone, so nothing in it is lost."""
        return self._file.read_only_reason

    def load(self) -> Settings:
        """Read the file; never raises for missing, corrupt or odd content."""
        raw = self._file.read()
        self.problems = list(self._file.problems)
        if raw is None:
            return Settings()
        result = migrate(raw)
        self.problems.extend(result.notes)
        settings = self._build(result.data)
        if holds_plaintext_secret(raw):
            self.problems.append(self._remove_plaintext_secret(settings, raw))
        elif result.migrated:
            self._save_migrated(settings)
        return settings

    def save(self, settings: Settings) -> None:
        """Write atomically. Raises ``OSError`` if the disk refuses, ``ValueError`` if a value
        cannot be written as JSON (the existing file is then left untouched). A file from a
        newer Flarechat is never overwritten (``read_only_reason``): nothing is written."""
        try:
            self._file.write(_document(settings), indent=_JSON_INDENT, sort_keys=True)
        except FileNotWritable as error:
            log.info("settings not saved: %s", error)

    def _write(self, settings: Settings) -> None:
        """Write whatever the guards say (a plaintext token must go even from a newer file)."""
        text = json.dumps(_document(settings), indent=_JSON_INDENT, sort_keys=True, allow_nan=False)
        atomic_write_text(self._path, text + "\n")

    # -- a token found in the file --------------------------------------------------------

    def _remove_plaintext_secret(self, settings: Settings, raw: dict[str, Any]) -> str:
        """Get the token out of the file whatever the disk allows; say truthfully what happened.

        1. the normal atomic save (needs a temp file: fails on a full disk or locked folder);
        2. overwrite the file in place with its own content minus the token — no bigger than
           before, so it needs no new space and no write access to the folder;
        3. delete the file (the settings stay in memory and are saved when the disk allows).
        """
        try:
            self._write(settings)  # even over a newer file: a plaintext token must go
        except (OSError, ValueError) as exc:
            first = _reason(exc)
        else:
            return f"{_TOKEN_FOUND}; it has been removed. {_TOKEN_AGAIN}"
        try:
            _overwrite_in_place(self._path, without_plaintext_secrets(raw))
        except (OSError, ValueError):
            pass
        else:
            return (
                f"{_TOKEN_FOUND}; it has been removed, but the upgraded settings could not be "
                f"saved ({first}). {_TOKEN_AGAIN}"
            )
        try:
            os.unlink(self._path)
        except OSError as exc:
            return (
                f"{_TOKEN_FOUND} and it could NOT be removed ({first}; {_reason(exc)}). "
                f"Delete {self._path} yourself, then enter the token again in Settings."
            )
        return (
            f"{_TOKEN_FOUND}; the file could not be rewritten ({first}), so it was deleted. "
            f"Your other settings are used for now and saved again when possible. {_TOKEN_AGAIN}"
        )

    # -- loading --------------------------------------------------------------------------

    def _build(self, data: dict[str, Any]) -> Settings:
        hints = _field_types()
        values: dict[str, Any] = {}
        for field in dataclasses.fields(Settings):
            if field.name == "schema_version" or field.name not in data:
                continue
            value = self._checked(field.name, data[field.name], hints[field.name])
            if value is not _INVALID:
                values[field.name] = value
        return Settings(**values)

    def _checked(self, name: str, raw: object, hint: object) -> object:
        try:
            value = _convert(raw, hint)
        except _WrongType:
            self.problems.append(
                f"Setting {name!r} had a value of the wrong type ({type(raw).__name__}); "
                "the default is used."
            )
            return _INVALID
        if name in _TRIMMED and isinstance(value, str):
            value = value.strip()
        check = _VALUE_CHECKS.get(name)
        error = check(value) if check is not None else None
        if error is not None:
            self.problems.append(f"Setting {name!r} was invalid ({error}); the default is used.")
            return _INVALID
        return value

    def _save_migrated(self, settings: Settings) -> None:
        """Write a migrated file back at once, so old keys (and any old secret) are gone."""
        try:
            self.save(settings)
        except OSError as exc:
            self.problems.append(
                f"The settings were upgraded but could not be saved ({_reason(exc)})."
            )


_INVALID = object()


def _document(settings: Settings) -> dict[str, Any]:
    data = dataclasses.asdict(settings)
    data["schema_version"] = SCHEMA_VERSION
    return data


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        cause = storage_refusal(exc) or exc.strerror  # a full disk is never "read-only"
        if cause:
            return cause
    return str(exc) or type(exc).__name__


def _overwrite_in_place(path: Path, data: dict[str, Any]) -> None:
    """Replace the file's bytes without a temp file: write over the start, then truncate.

    Compact JSON of the file's own object minus some keys is never longer than the file was, so
    this reuses blocks the file already has (ValueError if it would be longer: nothing written).
    """
    new = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    fd = os.open(path, os.O_WRONLY)
    try:
        if len(new) > os.fstat(fd).st_size:
            raise ValueError("the scrubbed settings would be longer than the file")
        written = 0
        while written < len(new):
            written += os.write(fd, new[written:])
        os.ftruncate(fd, len(new))
        os.fsync(fd)
    finally:
        os.close(fd)


def _field_types() -> dict[str, object]:
    return typing.get_type_hints(Settings)


def _convert(value: object, hint: object) -> object:
    """``value`` as the annotated type, or ``_WrongType``. JSON has no int/float split, so a
    whole number is accepted for a float field; a bool is never accepted as a number."""
    if hint in (bool, str):
        if type(value) is not hint:
            raise _WrongType
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _WrongType
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _WrongType
        if not math.isfinite(value):
            raise _WrongType
        return float(value)
    return _convert_generic(value, hint)


def _convert_generic(value: object, hint: object) -> object:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is not type(None):
                with contextlib.suppress(_WrongType):
                    return _convert(value, arg)
        raise _WrongType
    if origin is dict:
        key_type, value_type = args
        if not isinstance(value, dict):
            raise _WrongType
        return {_convert(k, key_type): _convert(v, value_type) for k, v in value.items()}
    raise TypeError(f"SettingsStore cannot load fields of type {hint!r}")  # a schema bug

"""The on-disk model catalogue cache: instant start and offline use of the model picker.

The file is small JSON in ``cache_dir()/models.json``::

    {"version": 1, "fetched_at": 1767225600.0, "models": [{"name": "@cf/...", ...}, ...]}

Loading is tolerant: a missing, unreadable or corrupt file gives ``None``; an entry that
is not a usable model is skipped and the rest are kept; unknown keys are ignored. Saving is
atomic (temp file in the same directory, fsync, ``os.replace``). The methods do file I/O:
GUI code calls them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, NamedTuple

from flarechat import safejson
from flarechat.api.models import ModelInfo
from flarechat.paths import atomic_write_text, cache_dir

__all__ = [
    "CACHE_FILE_NAME",
    "CACHE_VERSION",
    "CachedCatalogue",
    "CatalogueCache",
    "model_from_json",
    "model_to_json",
]

log = logging.getLogger(__name__)

CACHE_FILE_NAME = "models.json"
CACHE_VERSION = 1

_STR_FIELDS = frozenset({"name", "description", "task"})
_OPTIONAL_STR_FIELDS = frozenset({"terms_url"})
_BOOL_FIELDS = frozenset({"beta", "paid_only", "reasoning", "function_calling", "lora", "vision"})
_OPTIONAL_INT_FIELDS = frozenset({"context_window"})
_OPTIONAL_FLOAT_FIELDS = frozenset(
    {"price_input_per_m", "price_output_per_m", "price_cached_per_m"}
)
_MODEL_FIELDS = frozenset(f.name for f in fields(ModelInfo))


class CachedCatalogue(NamedTuple):
    """What a load returns: the models and when they were fetched (Unix time)."""

    models: list[ModelInfo]
    fetched_at: float


def _field_ok(key: str, value: object) -> bool:
    """Whether ``value`` has the type ModelInfo declares for ``key``."""
    if key in _STR_FIELDS:
        return isinstance(value, str)
    if key in _OPTIONAL_STR_FIELDS:
        return value is None or isinstance(value, str)
    if key in _BOOL_FIELDS:
        return isinstance(value, bool)
    if key in _OPTIONAL_INT_FIELDS:
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
    if key in _OPTIONAL_FLOAT_FIELDS:
        return value is None or (isinstance(value, int | float) and not isinstance(value, bool))
    return False


def model_from_json(raw: object) -> ModelInfo | None:
    """One cached entry back to a ModelInfo; ``None`` if it has no usable name.

    A field with the wrong type falls back to its default rather than losing the model.
    """
    if not isinstance(raw, Mapping):
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _MODEL_FIELDS and _field_ok(key, value):
            is_number = key in _OPTIONAL_FLOAT_FIELDS and value is not None
            kwargs[key] = float(value) if is_number else value
    return ModelInfo(**kwargs)


def model_to_json(model: ModelInfo) -> dict[str, Any]:
    return asdict(model)


def _parse(text: str) -> CachedCatalogue | None:
    try:
        data = safejson.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        return None
    fetched_at = data.get("fetched_at")
    if not isinstance(fetched_at, int | float) or isinstance(fetched_at, bool):
        return None
    models = [m for m in map(model_from_json, data["models"]) if m is not None]
    return CachedCatalogue(models, float(fetched_at))


class CatalogueCache:
    """Reads and writes the cached text-generation catalogue."""

    def __init__(self, path: Path | None = None, *, clock: Callable[[], float] = time.time) -> None:
        self._path = path
        self._clock = clock

    @property
    def path(self) -> Path:
        """The cache file (resolved lazily so FLARECHAT_HOME set later is honoured)."""
        if self._path is None:
            self._path = cache_dir() / CACHE_FILE_NAME
        return self._path

    def load(self) -> CachedCatalogue | None:
        """The cached models and their fetch time, or ``None`` when nothing usable is cached."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("model cache unreadable (%s): %s", self.path, exc)
            return None
        cached = _parse(text)
        if cached is None:
            log.warning("model cache is corrupt, ignoring it: %s", self.path)
        return cached

    def save(self, models: Iterable[ModelInfo], *, fetched_at: float | None = None) -> float:
        """Atomically replace the cache; returns the fetch time written (default: now)."""
        stamp = self._clock() if fetched_at is None else fetched_at
        payload = {
            "version": CACHE_VERSION,
            "fetched_at": stamp,
            "models": [model_to_json(m) for m in models],
        }
        atomic_write_text(self.path, json.dumps(payload, ensure_ascii=False, indent=1))
        return stamp

"""The AI Gateway response cache: exact-match keys, per-entry TTL, MISS / HIT / BYPASS."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

__all__ = [
    "DEFAULT_CACHE_TTL",
    "MAX_CACHE_TTL",
    "MIN_CACHE_TTL",
    "CachedResponse",
    "GatewayCache",
    "cache_key",
    "parse_ttl",
]

#: cf-aig-cache-ttl bounds (§6.2) and the default used when a request names none.
MIN_CACHE_TTL = 60
MAX_CACHE_TTL = 30 * 24 * 3600
DEFAULT_CACHE_TTL = 300


@dataclass(frozen=True, slots=True)
class CachedResponse:
    """A complete, successful response, replayed byte for byte on a HIT."""

    media_type: str
    chunks: tuple[bytes, ...]
    headers: tuple[tuple[str, str], ...]


def cache_key(*, kind: str, model: str, body: bytes, auth: str) -> str:
    """Exact match on route kind, model, body and credentials (a digest, so no token is kept)."""
    digest = hashlib.sha256()
    for part in (kind.encode(), model.encode(), body, auth.encode()):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


class GatewayCache:
    """Thread-safe store; ``now`` comes from the emulator clock so tests can move time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, CachedResponse]] = {}

    def get(self, key: str, *, now: float) -> CachedResponse | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            expires, entry = found
            if now >= expires:
                del self._entries[key]
                return None
            return entry

    def put(self, key: str, entry: CachedResponse, *, ttl: float, now: float) -> None:
        with self._lock:
            self._entries[key] = (now + ttl, entry)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def parse_ttl(value: str | None) -> int:
    """The TTL a request asks for, or the default when absent or outside 60 s .. 1 month."""
    if value is None:
        return DEFAULT_CACHE_TTL
    try:
        ttl = int(value)
    except ValueError:
        return DEFAULT_CACHE_TTL
    return ttl if MIN_CACHE_TTL <= ttl <= MAX_CACHE_TTL else DEFAULT_CACHE_TTL

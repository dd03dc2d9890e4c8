"""AI Gateway's limits on per-request options, in one place for the api and settings layers."""

from __future__ import annotations

__all__ = [
    "BACKOFF_KINDS",
    "CACHE_TTL_MAX",
    "CACHE_TTL_MIN",
    "MAX_ATTEMPTS_MAX",
    "MAX_ATTEMPTS_MIN",
    "METADATA_MAX_ENTRIES",
    "REQUEST_TIMEOUT_MAX_MS",
    "REQUEST_TIMEOUT_MIN_MS",
    "RETRY_DELAY_MAX_MS",
    "RETRY_DELAY_MIN_MS",
]

# Top level, not in api/ or settings/: settings must not import api (import-linter contract),
# yet both validate the same cf-aig-* values; cloudflare-api.md §6.2 and §6.4 are the source.

#: ``cf-aig-cache-ttl`` in seconds: AI Gateway's minimum (one minute) …
CACHE_TTL_MIN = 60
#: … and maximum (one month, 30 days).
CACHE_TTL_MAX = 2_592_000
#: ``cf-aig-metadata``: entries beyond the fifth are dropped by the gateway, so refuse them.
METADATA_MAX_ENTRIES = 5
#: ``cf-aig-max-attempts`` (retries.maxAttempts 1-5 in the Workers binding).
MAX_ATTEMPTS_MIN = 1
MAX_ATTEMPTS_MAX = 5
#: ``cf-aig-retry-delay`` in milliseconds.
RETRY_DELAY_MIN_MS = 0
RETRY_DELAY_MAX_MS = 5000
#: ``cf-aig-backoff``, in the order a menu shows them.
BACKOFF_KINDS = ("constant", "linear", "exponential")
#: ``cf-aig-request-timeout`` in milliseconds (to the provider's first byte). The gateway
#: documents no maximum; ten minutes is longer than any reply takes to start, so more is a typo.
REQUEST_TIMEOUT_MIN_MS = 1
REQUEST_TIMEOUT_MAX_MS = 600_000

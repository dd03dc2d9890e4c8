"""The AI Gateway limits module is what the api enforces: each bound accepted, one past refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from flarechat import gateway_limits as limits
from flarechat.api import _routes
from flarechat.api.config import Connection, GatewayOptions, Route, Secret

#: option field -> (lowest accepted, highest accepted)
RANGES: dict[str, tuple[int, int]] = {
    "cache_ttl": (limits.CACHE_TTL_MIN, limits.CACHE_TTL_MAX),
    "max_attempts": (limits.MAX_ATTEMPTS_MIN, limits.MAX_ATTEMPTS_MAX),
    "retry_delay_ms": (limits.RETRY_DELAY_MIN_MS, limits.RETRY_DELAY_MAX_MS),
    "request_timeout_ms": (limits.REQUEST_TIMEOUT_MIN_MS, limits.REQUEST_TIMEOUT_MAX_MS),
}


def _options(**values: Any) -> GatewayOptions:
    return dataclasses.replace(GatewayOptions(), **values)


def test_the_documented_values() -> None:
    # cloudflare-api.md §6.2 / §6.4; a change here is a change in AI Gateway, not a tidy-up.
    assert (limits.CACHE_TTL_MIN, limits.CACHE_TTL_MAX) == (60, 30 * 24 * 3600)
    assert limits.METADATA_MAX_ENTRIES == 5
    assert (limits.MAX_ATTEMPTS_MIN, limits.MAX_ATTEMPTS_MAX) == (1, 5)
    assert (limits.RETRY_DELAY_MIN_MS, limits.RETRY_DELAY_MAX_MS) == (0, 5000)
    assert limits.BACKOFF_KINDS == ("constant", "linear", "exponential")
    assert limits.REQUEST_TIMEOUT_MIN_MS == 1
    assert limits.REQUEST_TIMEOUT_MAX_MS == 600_000


@pytest.mark.parametrize("name", sorted(RANGES))
def test_the_api_accepts_each_bound_and_refuses_one_past_it(name: str) -> None:
    low, high = RANGES[name]
    _routes.validate_gateway_options(_options(**{name: low}))
    _routes.validate_gateway_options(_options(**{name: high}))
    for outside in (low - 1, high + 1):
        with pytest.raises(ValueError, match="must be"):
            _routes.validate_gateway_options(_options(**{name: outside}))


def test_the_api_accepts_every_backoff_kind_and_nothing_else() -> None:
    for kind in limits.BACKOFF_KINDS:
        _routes.validate_gateway_options(_options(backoff=kind))
    with pytest.raises(ValueError, match=", ".join(sorted(limits.BACKOFF_KINDS))):
        _routes.validate_gateway_options(_options(backoff="quadratic"))


def test_the_api_caps_metadata_entries() -> None:
    most = {f"k{i}": i for i in range(limits.METADATA_MAX_ENTRIES)}
    _routes.validate_gateway_options(_options(metadata=most))
    with pytest.raises(ValueError, match=f"at most {limits.METADATA_MAX_ENTRIES}"):
        _routes.validate_gateway_options(_options(metadata={**most, "one": "more"}))


def test_the_headers_carry_the_values_at_the_bounds() -> None:
    conn = Connection(
        account_id="0" * 32, token=Secret("t"), route=Route.GATEWAY_REST, gateway_id="gw"
    )
    options = _options(
        cache_ttl=limits.CACHE_TTL_MAX,
        max_attempts=limits.MAX_ATTEMPTS_MAX,
        retry_delay_ms=limits.RETRY_DELAY_MAX_MS,
        request_timeout_ms=limits.REQUEST_TIMEOUT_MAX_MS,
    )
    headers = _routes.gateway_headers(conn, options)
    assert headers["cf-aig-cache-ttl"] == str(limits.CACHE_TTL_MAX)
    assert headers["cf-aig-max-attempts"] == str(limits.MAX_ATTEMPTS_MAX)
    assert headers["cf-aig-retry-delay"] == str(limits.RETRY_DELAY_MAX_MS)
    assert headers["cf-aig-request-timeout"] == str(limits.REQUEST_TIMEOUT_MAX_MS)


def test_the_api_reexports_the_same_objects() -> None:
    # Old import sites (flarechat.api._routes.CACHE_TTL_MIN…) see the one module's values.
    for name in ("BACKOFF_KINDS", "CACHE_TTL_MAX", "CACHE_TTL_MIN", "METADATA_MAX_ENTRIES"):
        assert getattr(_routes, name) is getattr(limits, name)

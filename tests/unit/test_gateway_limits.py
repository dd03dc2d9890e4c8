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


# -- settings: the validators behind the dialog, the CLI and the settings file ----------------

#: settings validator -> (lowest accepted, highest accepted), the same limits as the api's.
SETTINGS_RANGES: dict[str, tuple[int, int]] = {
    "validate_cache_ttl": (limits.CACHE_TTL_MIN, limits.CACHE_TTL_MAX),
    "validate_max_attempts": (limits.MAX_ATTEMPTS_MIN, limits.MAX_ATTEMPTS_MAX),
    "validate_retry_delay_ms": (limits.RETRY_DELAY_MIN_MS, limits.RETRY_DELAY_MAX_MS),
    "validate_request_timeout_ms": (limits.REQUEST_TIMEOUT_MIN_MS, limits.REQUEST_TIMEOUT_MAX_MS),
}


def _settings_validator(name: str) -> Any:
    from flarechat.settings import gateway_options, validate

    return getattr(gateway_options, name, None) or getattr(validate, name)


@pytest.mark.parametrize("name", sorted(SETTINGS_RANGES))
def test_settings_accept_each_gateway_bound_and_refuse_one_past_it(name: str) -> None:
    check = _settings_validator(name)
    low, high = SETTINGS_RANGES[name]
    assert check(low) is None
    assert check(high) is None
    assert check(low - 1) is not None
    assert check(high + 1) is not None


def test_settings_backoffs_and_metadata_cap_are_the_gateways() -> None:
    from flarechat.settings import gateway_options, schema

    assert schema.BACKOFFS is limits.BACKOFF_KINDS
    for kind in limits.BACKOFF_KINDS:
        assert gateway_options.validate_backoff(kind) is None
    most = {f"k{i}": "v" for i in range(limits.METADATA_MAX_ENTRIES)}
    assert gateway_options.validate_metadata(most) is None
    assert gateway_options.validate_metadata({**most, "one": "more"}) is not None


def test_settings_limit_names_are_the_gateway_limits_objects() -> None:
    # The dialog and the CLI quote these names; they must be the shared values, not copies.
    from flarechat.settings import gateway_options as gw
    from flarechat.settings import validate

    pairs = {
        gw.METADATA_MAX_ENTRIES: limits.METADATA_MAX_ENTRIES,
        gw.GATEWAY_MAX_ATTEMPTS_MIN: limits.MAX_ATTEMPTS_MIN,
        gw.GATEWAY_MAX_ATTEMPTS_MAX: limits.MAX_ATTEMPTS_MAX,
        gw.GATEWAY_RETRY_DELAY_MAX_MS: limits.RETRY_DELAY_MAX_MS,
        gw.GATEWAY_REQUEST_TIMEOUT_MAX_MS: limits.REQUEST_TIMEOUT_MAX_MS,
        validate.CACHE_TTL_MIN: limits.CACHE_TTL_MIN,
        validate.CACHE_TTL_MAX: limits.CACHE_TTL_MAX,
    }
    assert all(ours == theirs for ours, theirs in pairs.items())


def test_no_settings_module_but_secrets_imports_keyring() -> None:
    # The import-linter contract fences only settings.schema; this covers every settings module.
    import ast
    from pathlib import Path

    import flarechat.settings

    offenders = []
    for source in sorted(Path(flarechat.settings.__file__).parent.glob("*.py")):
        if source.name == "secrets.py":
            continue
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{source.name}: {n}" for n in names if n.split(".")[0] == "keyring"]
    assert offenders == []

"""AI Gateway request options in Settings: validation, the metadata format, saving, resolving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarechat.api.config import GatewayOptions
from flarechat.core.connect import gateway_options_from
from flarechat.settings import gateway_options as gw
from flarechat.settings.resolve import resolve
from flarechat.settings.schema import Settings
from flarechat.settings.store import SettingsStore

CHOSEN = Settings(
    route="gateway-url",
    gateway_id="my-gw",
    gateway_cache_key="faq-1",
    gateway_metadata={"team": "docs", "ticket": "42"},
    gateway_collect_log=False,
    gateway_request_timeout_ms=15_000,
    gateway_max_attempts=3,
    gateway_retry_delay_ms=0,
    gateway_backoff="exponential",
)


def test_metadata_text_round_trips() -> None:
    parsed, error = gw.parse_metadata(" team = docs ,ticket=42, note=a=b ,")
    assert error is None
    assert parsed == {"team": "docs", "ticket": "42", "note": "a=b"}
    assert gw.parse_metadata(gw.format_metadata(parsed)) == (parsed, None)
    assert gw.parse_metadata("") == ({}, None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("team", "has no '='"),
        ("=docs", "has no key"),
        ("a=1, a=2", "given twice"),
        ("a=1, b=2, c=3, d=4, e=5, f=6", "at most 5 metadata entries; there are 6"),
        ("team=d\u00f6cs", "plain ASCII"),
    ],
)
def test_bad_metadata_text_says_why(text: str, message: str) -> None:
    parsed, error = gw.parse_metadata(text)
    assert parsed == {}
    assert error is not None
    assert message in error


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (gw.validate_cache_key, ["", "faq-1", "a b"], ["caf\u00e9", "x\ty", "k" * 1025]),
        (gw.validate_request_timeout_ms, [None, "", 1, "600000"], [0, "600001", "1.5", True]),
        (gw.validate_max_attempts, [None, 1, "5"], [0, 6, "many"]),
        (gw.validate_retry_delay_ms, [None, 0, 5000], [-1, 5001]),
        (gw.validate_backoff, ["", "constant", "linear", "exponential"], ["random"]),
    ],
)
def test_validators(check: object, good: list[object], bad: list[object]) -> None:
    assert callable(check)
    assert [check(value) for value in good] == [None] * len(good)
    assert all(isinstance(check(value), str) for value in bad)


def test_settings_round_trip_through_the_file(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.save(CHOSEN)
    loaded = SettingsStore(tmp_path / "settings.json").load()
    assert loaded == CHOSEN
    saved = json.loads((tmp_path / "settings.json").read_text(encoding="utf-8"))
    assert saved["gateway_metadata"] == {"team": "docs", "ticket": "42"}


def test_an_older_file_gets_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"schema_version": 1, "gateway_id": "gw"}), encoding="utf-8")
    store = SettingsStore(path)
    loaded = store.load()
    assert (loaded.gateway_cache_key, loaded.gateway_metadata, loaded.gateway_backoff) == (
        "",
        {},
        "",
    )
    assert loaded.gateway_collect_log is None
    assert store.problems == []


def test_invalid_saved_values_fall_back_to_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    raw = {
        "schema_version": 1,
        "gateway_max_attempts": 9,
        "gateway_backoff": "random",
        "gateway_metadata": {str(n): "v" for n in range(6)},
        "gateway_collect_log": "yes",
        "gateway_retry_delay_ms": 250,
    }
    path.write_text(json.dumps(raw), encoding="utf-8")
    store = SettingsStore(path)
    loaded = store.load()
    assert loaded.gateway_max_attempts is None
    assert loaded.gateway_backoff == ""
    assert loaded.gateway_metadata == {}
    assert loaded.gateway_collect_log is None
    assert loaded.gateway_retry_delay_ms == 250
    assert len(store.problems) == 4


def test_resolve_and_connect_build_the_gateway_options() -> None:
    resolved = resolve(CHOSEN, api_token=None, gateway_token=None, env={})
    assert gateway_options_from(resolved) == GatewayOptions(
        cache_key="faq-1",
        metadata={"team": "docs", "ticket": "42"},
        collect_log=False,
        request_timeout_ms=15_000,
        max_attempts=3,
        retry_delay_ms=0,
        backoff="exponential",
    )
    assert gateway_options_from(
        resolve(Settings(), api_token=None, gateway_token=None, env={})
    ) == (GatewayOptions())


def test_resolve_warns_and_drops_an_invalid_option() -> None:
    settings = Settings(gateway_max_attempts=7, gateway_cache_key="ok")
    resolved = resolve(settings, api_token=None, gateway_token=None, env={})
    assert resolved.gateway_options.max_attempts is None
    assert resolved.gateway_options.cache_key == "ok"
    assert any("max attempts" in warning for warning in resolved.warnings)

"""SettingsStore: defaults, round trip, repairs of bad content, migrations, atomic writes."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from flarechat.settings.migrations import MIGRATIONS
from flarechat.settings.schema import SCHEMA_VERSION, Settings
from flarechat.settings.store import SETTINGS_FILENAME, SettingsStore

ACCOUNT = "0123456789abcdef0123456789abcdef"


def _write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def _custom_settings() -> Settings:
    """Every field away from its default, so a round trip proves each one survives."""
    return Settings(
        account_id=ACCOUNT,
        route="gateway-url",
        endpoint="openai",
        gateway_id="team-gw_1",
        reject_if_busy=True,
        skip_cache=True,
        cache_ttl=3600,
        gateway_cache_key="faq",
        gateway_metadata={"team": "docs"},
        gateway_collect_log=True,
        gateway_request_timeout_ms=20_000,
        gateway_max_attempts=2,
        gateway_retry_delay_ms=500,
        gateway_backoff="linear",
        default_max_tokens=8192,
        default_temperature=0.7,
        default_system_prompt="Answer briefly.\nUse metric units. «ünïcode»",
        api_base="http://127.0.0.1:8787/client/v4",
        gateway_base="https://gw.example.com/v1",
        request_timeout=45.5,
        idle_timeout=30.0,
        overall_timeout=1200.0,
        last_model="@cf/qwen/qwq-32b",
        theme="dark",
        font_size=14,
        demo_mode=True,
        ui_state={"geometry": "AdnQywADAAAAAAA=", "splitter": "AAAA/w=="},
    )


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "config" / SETTINGS_FILENAME


def test_missing_file_gives_defaults_without_creating_it(path: Path) -> None:
    store = SettingsStore(path)
    assert store.load() == Settings()
    assert store.problems == []
    assert not path.exists()


def test_default_path_is_in_the_profile_config_dir(isolated_profile: Path) -> None:
    assert SettingsStore().path == isolated_profile / "config" / SETTINGS_FILENAME


def test_round_trip_keeps_every_field(path: Path) -> None:
    original = _custom_settings()
    assert all(
        getattr(original, f.name) != getattr(Settings(), f.name)
        for f in dataclasses.fields(Settings)
        if f.name != "schema_version"
    )
    SettingsStore(path).save(original)
    store = SettingsStore(path)
    loaded = store.load()
    assert loaded == original
    assert isinstance(loaded.request_timeout, float)
    assert store.problems == []


def test_saved_file_is_pretty_versioned_json(path: Path) -> None:
    SettingsStore(path).save(Settings(account_id=ACCOUNT))
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert '\n  "account_id": "0123456789abcdef0123456789abcdef",\n' in text
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION


def test_unknown_keys_are_ignored(path: Path) -> None:
    path.parent.mkdir(parents=True)
    _write(path, {"schema_version": 1, "account_id": ACCOUNT, "future_feature": {"x": 1}})
    store = SettingsStore(path)
    assert store.load() == Settings(account_id=ACCOUNT)
    assert store.problems == []


def test_wrong_types_fall_back_per_field_and_keep_the_rest(path: Path) -> None:
    path.parent.mkdir(parents=True)
    _write(
        path,
        {
            "schema_version": 1,
            "account_id": 1234,
            "reject_if_busy": "yes",
            "default_max_tokens": "4096",
            "cache_ttl": True,
            "request_timeout": "fast",
            "ui_state": ["geometry"],
            "gateway_id": "kept-gw",
            "skip_cache": True,
            "default_temperature": 1,
        },
    )
    store = SettingsStore(path)
    loaded = store.load()
    defaults = Settings()
    assert loaded.account_id == defaults.account_id
    assert loaded.reject_if_busy is defaults.reject_if_busy
    assert loaded.default_max_tokens == defaults.default_max_tokens
    assert loaded.cache_ttl is defaults.cache_ttl
    assert loaded.request_timeout == defaults.request_timeout
    assert loaded.ui_state == {}
    assert (loaded.gateway_id, loaded.skip_cache) == ("kept-gw", True)
    assert loaded.default_temperature == 1.0
    assert isinstance(loaded.default_temperature, float)
    wrong = {"account_id", "reject_if_busy", "default_max_tokens", "cache_ttl"}
    wrong |= {"request_timeout", "ui_state"}
    assert len(store.problems) == len(wrong)
    for name in wrong:
        assert any(f"'{name}'" in problem and "wrong type" in problem for problem in store.problems)


def test_invalid_values_fall_back_with_the_validators_reason(path: Path) -> None:
    path.parent.mkdir(parents=True)
    _write(
        path,
        {
            "schema_version": 1,
            "route": "teleport",
            "default_max_tokens": 0,
            "default_temperature": 9.5,
            "api_base": "http://api.example.com/client/v4",
            "account_id": f"  {ACCOUNT}\n",
        },
    )
    store = SettingsStore(path)
    loaded = store.load()
    assert loaded.route == "direct"
    assert loaded.default_max_tokens == Settings().default_max_tokens
    assert loaded.default_temperature is None
    assert loaded.api_base == ""
    assert loaded.account_id == ACCOUNT  # valid once trimmed, stored trimmed
    assert len(store.problems) == 4
    assert any("'route'" in p and "direct, gateway-rest, gateway-url" in p for p in store.problems)
    assert any("'api_base'" in p and "https://" in p for p in store.problems)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2, 3]", b"\xff\xfe\x00 not utf-8", b""],
    ids=["bad-json", "not-an-object", "not-utf8", "empty"],
)
def test_corrupt_file_is_moved_aside(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    store = SettingsStore(path)
    assert store.load() == Settings()
    assert not path.exists()
    aside = list(path.parent.glob(f"{SETTINGS_FILENAME}.corrupt-*"))
    assert len(aside) == 1
    assert aside[0].read_bytes() == content
    assert len(store.problems) == 1
    assert aside[0].name in store.problems[0]


def test_repeated_corruption_never_overwrites_an_earlier_copy(path: Path) -> None:
    path.parent.mkdir(parents=True)
    for content in (b"{first", b"{second", b"{third"):
        path.write_bytes(content)
        SettingsStore(path).load()
    aside = sorted(p.read_bytes() for p in path.parent.glob(f"{SETTINGS_FILENAME}.corrupt-*"))
    assert aside == [b"{first", b"{second", b"{third"]


def test_store_recovers_after_a_corrupt_file(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00garbage")
    store = SettingsStore(path)
    store.load()
    store.save(Settings(account_id=ACCOUNT))
    assert store.load() == Settings(account_id=ACCOUNT)
    assert store.problems == []


def test_every_schema_version_has_a_migration() -> None:
    assert sorted(MIGRATIONS) == list(range(SCHEMA_VERSION))


def test_v0_file_is_migrated_and_saved_back_without_its_token(path: Path) -> None:
    path.parent.mkdir(parents=True)
    plaintext_token = "LEGACYtoken0123456789abcdefABCDEF012345"
    _write(
        path,
        {
            "accountId": ACCOUNT,
            "gateway": "old-gw",
            "useGateway": True,
            "rejectIfBusy": True,
            "maxTokens": 1024,
            "temperature": 0.2,
            "model": "@cf/meta/llama-3.1-8b-instruct",
            "apiToken": plaintext_token,
        },
    )
    store = SettingsStore(path)
    loaded = store.load()
    assert loaded == Settings(
        account_id=ACCOUNT,
        gateway_id="old-gw",
        route="gateway-rest",
        reject_if_busy=True,
        default_max_tokens=1024,
        default_temperature=0.2,
        last_model="@cf/meta/llama-3.1-8b-instruct",
    )
    assert any("plain text" in problem for problem in store.problems)
    saved = path.read_text(encoding="utf-8")
    assert plaintext_token not in saved
    assert json.loads(saved)["schema_version"] == SCHEMA_VERSION
    assert "accountId" not in json.loads(saved)
    again = SettingsStore(path)
    assert again.load() == loaded
    assert again.problems == []


def test_v0_without_gateway_flag_keeps_the_direct_route(path: Path) -> None:
    path.parent.mkdir(parents=True)
    _write(path, {"accountId": ACCOUNT, "skipCache": True, "cacheTtl": 600})
    loaded = SettingsStore(path).load()
    assert (loaded.route, loaded.skip_cache, loaded.cache_ttl) == ("direct", True, 600)


def test_file_from_a_newer_version_is_read_but_not_rewritten(path: Path) -> None:
    path.parent.mkdir(parents=True)
    _write(path, {"schema_version": SCHEMA_VERSION + 1, "account_id": ACCOUNT, "new": 1})
    before = path.read_bytes()
    store = SettingsStore(path)
    assert store.load() == Settings(account_id=ACCOUNT)
    assert any("newer Flarechat" in problem for problem in store.problems)
    assert path.read_bytes() == before


def test_saving_over_a_file_from_a_newer_version_writes_nothing(path: Path) -> None:
    path.parent.mkdir(parents=True)
    _write(path, {"schema_version": SCHEMA_VERSION + 40, "account_id": ACCOUNT, "new": [1]})
    before = path.read_bytes()
    store = SettingsStore(path)
    settings = store.load()
    assert store.read_only_reason is not None
    assert any("not saved" in problem for problem in store.problems)
    store.save(dataclasses.replace(settings, default_max_tokens=99))  # e.g. at quit
    assert path.read_bytes() == before


def test_a_plaintext_token_is_removed_even_from_a_newer_file(path: Path) -> None:
    path.parent.mkdir(parents=True)
    secret = "plaintext-token-in-a-newer-file-8c2d"
    _write(path, {"schema_version": SCHEMA_VERSION + 1, "account_id": ACCOUNT, "token": secret})
    SettingsStore(path).load()
    assert secret not in path.read_text()


def test_save_leaves_no_temporary_files(path: Path) -> None:
    store = SettingsStore(path)
    for tokens in (100, 200, 300):
        store.save(Settings(default_max_tokens=tokens))
    assert sorted(p.name for p in path.parent.iterdir()) == [SETTINGS_FILENAME]
    assert store.load().default_max_tokens == 300


def test_unserialisable_settings_leave_the_old_file_intact(path: Path) -> None:
    store = SettingsStore(path)
    store.save(Settings(account_id=ACCOUNT))
    before = path.read_bytes()
    with pytest.raises(ValueError, match="JSON"):
        store.save(Settings(default_temperature=float("nan")))
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [SETTINGS_FILENAME]


def test_failed_write_keeps_the_old_file_and_removes_the_temp_file(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SettingsStore(path)
    store.save(Settings(account_id=ACCOUNT))
    before = path.read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        store.save(Settings(account_id=ACCOUNT, gateway_id="never-written"))
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [SETTINGS_FILENAME]


def test_settings_have_no_secret_fields() -> None:
    names = {f.name for f in dataclasses.fields(Settings)}
    assert not names & {"api_token", "gateway_token", "token", "password", "secret", "api_key"}

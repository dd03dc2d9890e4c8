"""The idle timeout and the deadline as settings: their ranges, the file's repairs, and the
Connection Preferences builds from them (account and demo mode alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarechat.api.config import DEFAULT_IDLE_TIMEOUT, DEFAULT_OVERALL_TIMEOUT
from flarechat.settings import validate
from flarechat.settings.schema import SCHEMA_VERSION, Settings
from flarechat.settings.secrets import API_TOKEN, MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.control.preferences import DemoBackend, Preferences

ACCOUNT = "0123456789abcdef0123456789abcdef"
TOKEN = "deadline-settings-token-5e1a90c7b2"


def test_the_defaults_are_the_api_defaults() -> None:
    settings = Settings()
    assert (settings.idle_timeout, settings.overall_timeout) == (
        DEFAULT_IDLE_TIMEOUT,
        DEFAULT_OVERALL_TIMEOUT,
    )
    assert validate.validate_idle_timeout(settings.idle_timeout) is None
    assert validate.validate_overall_timeout(settings.overall_timeout) is None


@pytest.mark.parametrize("value", [5, 60.0, "600", 12.5])
def test_idle_timeout_accepted(value: float | str) -> None:
    assert validate.validate_idle_timeout(value) is None


@pytest.mark.parametrize("value", [4.9, 601, 0, -1, "soon"])
def test_idle_timeout_rejected(value: float | str) -> None:
    message = validate.validate_idle_timeout(value)
    assert message is not None
    assert message.startswith("The idle timeout")


@pytest.mark.parametrize("value", [10, 600.0, "3600"])
def test_deadline_accepted(value: float | str) -> None:
    assert validate.validate_overall_timeout(value) is None


@pytest.mark.parametrize(
    ("value", "words"), [(9.9, "from 10 to 3,600"), (3601, "from 10 to 3,600")]
)
def test_deadline_rejected(value: float, words: str) -> None:
    message = validate.validate_overall_timeout(value)
    assert message is not None
    assert message.startswith("The deadline")
    assert words in message.replace("3600", "3,600")


def test_a_saved_pair_round_trips(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.save(Settings(idle_timeout=15.0, overall_timeout=90.0))
    loaded = store.load()
    assert (loaded.idle_timeout, loaded.overall_timeout) == (15.0, 90.0)
    assert store.problems == []


def test_a_file_from_before_the_fields_gets_the_defaults_without_a_problem(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "account_id": ACCOUNT}))
    store = SettingsStore(path)
    loaded = store.load()
    assert (loaded.idle_timeout, loaded.overall_timeout) == (60.0, 600.0)
    assert loaded.account_id == ACCOUNT
    assert store.problems == []


@pytest.mark.parametrize(
    ("stored", "words"),
    [
        ({"idle_timeout": 1, "overall_timeout": 99999}, "was invalid"),
        ({"idle_timeout": "60", "overall_timeout": True}, "wrong type"),
    ],
)
def test_bad_values_fall_back_to_the_defaults_and_say_so(
    tmp_path: Path, stored: dict[str, object], words: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, **stored}))
    store = SettingsStore(path)
    loaded = store.load()
    assert (loaded.idle_timeout, loaded.overall_timeout) == (60.0, 600.0)
    assert len(store.problems) == 2
    assert all(words in problem for problem in store.problems)
    assert any("'idle_timeout'" in p for p in store.problems)
    assert any("'overall_timeout'" in p for p in store.problems)


def _prefs(tmp_path: Path, settings: Settings) -> Preferences:
    prefs = Preferences(
        store=SettingsStore(tmp_path / "settings.json"),
        secrets=MemorySecretStore({API_TOKEN: TOKEN}),
        settings=settings,
        env={},
    )
    prefs.api_token = TOKEN
    return prefs


def test_the_connection_carries_the_saved_timeouts(tmp_path: Path) -> None:
    settings = Settings(account_id=ACCOUNT, idle_timeout=20.0, overall_timeout=300.0)
    conn = _prefs(tmp_path, settings).connection()
    assert (conn.idle_timeout, conn.overall_timeout) == (20.0, 300.0)
    assert conn.read_timeout == settings.request_timeout


def test_the_demo_connection_carries_them_too(tmp_path: Path) -> None:
    prefs = _prefs(tmp_path, Settings(idle_timeout=7.0, overall_timeout=45.0))
    prefs.use_demo(
        DemoBackend(
            api_base="http://127.0.0.1:1/client/v4",
            gateway_base="http://127.0.0.1:1/v1",
            account_id=ACCOUNT,
            token="demo-token",
            stop=lambda: None,
        )
    )
    conn = prefs.connection()
    assert (conn.idle_timeout, conn.overall_timeout) == (7.0, 45.0)

"""The token through a real Secret Service (gnome-keyring on a private D-Bus), as CI runs it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import keyring_support
from flarechat.settings import secrets
from flarechat.settings.secrets import API_TOKEN, GATEWAY_TOKEN, KeyringSecretStore
from keyring_support import SecretServiceSession, real_secret_service

TOKEN = "cfut_realKEYRINGtest0123456789abcdefghijklmn"


@pytest.fixture
def secret_service(tmp_path: Path) -> Iterator[SecretServiceSession]:
    with real_secret_service(tmp_path / "secret-service") as session:
        yield session


def _files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.mark.keyring_real
def test_token_round_trip_through_the_real_secret_service(
    secret_service: SecretServiceSession, isolated_profile: Path
) -> None:
    store = KeyringSecretStore()
    assert store.describe() == "SecretService Keyring"
    assert secrets.describe_backend() == "SecretService Keyring"
    assert store.get(API_TOKEN) is None
    store.set(API_TOKEN, TOKEN)
    assert store.get(API_TOKEN) == TOKEN
    assert KeyringSecretStore().get(API_TOKEN) == TOKEN  # a fresh store reads it back
    assert store.get(GATEWAY_TOKEN) is None
    # The keyring file exists and is encrypted: the token is nowhere in plain text.
    assert list((secret_service.home / ".local" / "share" / "keyrings").iterdir())
    assert _files_containing(secret_service.home, TOKEN) == []
    store.delete(API_TOKEN)
    assert store.get(API_TOKEN) is None
    store.delete(API_TOKEN)  # already gone: not an error
    assert [p for p in isolated_profile.rglob("*") if p.is_file()] == []


@pytest.mark.keyring_real
@pytest.mark.asyncio
async def test_async_helpers_against_the_real_secret_service(
    secret_service: SecretServiceSession, isolated_profile: Path
) -> None:
    store = KeyringSecretStore()
    await secrets.aset(store, GATEWAY_TOKEN, TOKEN)
    assert await secrets.aget(store, GATEWAY_TOKEN) == TOKEN
    await secrets.adelete(store, GATEWAY_TOKEN)
    assert await secrets.aget(store, GATEWAY_TOKEN) is None
    assert _files_containing(isolated_profile, TOKEN) == []


@pytest.mark.parametrize(
    ("required", "outcome"), [("", pytest.skip.Exception), ("1", pytest.fail.Exception)]
)
def test_missing_tools_skip_locally_but_fail_in_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, required: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv(keyring_support.REQUIRE_ENV, required)
    with pytest.raises(outcome, match="gnome-keyring-daemon"), real_secret_service(tmp_path):
        pytest.fail("the session must not start without its tools")

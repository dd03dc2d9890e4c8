"""SettingsStore against a refusing disk and hostile files: the token never stays silently."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from flarechat.settings import store as store_module
from flarechat.settings.schema import Settings
from flarechat.settings.store import SETTINGS_FILENAME, SettingsStore

ACCOUNT = "0123456789abcdef0123456789abcdef"
TOKEN = "v0-plaintext-token-0123456789abcdefghij"


@pytest.fixture
def path(isolated_profile: Path) -> Path:
    folder = isolated_profile / "config"
    folder.mkdir()
    return folder / SETTINGS_FILENAME


def write_v0(path: Path) -> None:
    v0 = {"accountId": ACCOUNT, "useGateway": True, "gateway": "old-gw", "apiToken": TOKEN}
    path.write_text(json.dumps(v0, indent=4), encoding="utf-8")


def refuse(error: int) -> Any:
    def writer(*args: object, **kwargs: object) -> None:
        raise OSError(error, os.strerror(error))

    return writer


def test_full_disk_still_scrubs_the_token_from_the_file(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC: the atomic writer cannot even make its temp file; the file is scrubbed in place."""
    write_v0(path)
    monkeypatch.setattr(store_module, "atomic_write_text", refuse(errno.ENOSPC))
    store = SettingsStore(path)
    loaded = store.load()
    assert loaded.account_id == ACCOUNT
    assert loaded.route == "gateway-rest"
    text = path.read_text(encoding="utf-8")
    assert TOKEN not in text
    assert json.loads(text)["accountId"] == ACCOUNT  # the rest is still there
    notes = " ".join(store.problems)
    assert "it has been removed" in notes
    assert "could not be saved" in notes
    monkeypatch.undo()
    again = SettingsStore(path)  # the next start migrates the scrubbed file normally
    assert again.load() == loaded


def test_read_only_folder_still_scrubs_the_token_from_the_file(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0555 folder: no temp file can be created there, but the file itself can be written.

    Tests run as root, which chmod does not stop, so the EACCES a normal user's mkstemp gets is
    injected at the atomic writer; the chmod keeps the test meaningful when run unprivileged.
    """
    write_v0(path)
    path.parent.chmod(0o555)
    monkeypatch.setattr(store_module, "atomic_write_text", refuse(errno.EACCES))
    try:
        store = SettingsStore(path)
        store.load()
    finally:
        path.parent.chmod(0o700)
    assert TOKEN not in path.read_text(encoding="utf-8")
    assert any("it has been removed" in p for p in store.problems)


def test_file_that_cannot_be_rewritten_is_deleted_rather_than_keep_the_token(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_v0(path)
    monkeypatch.setattr(store_module, "atomic_write_text", refuse(errno.ENOSPC))
    monkeypatch.setattr(store_module, "_overwrite_in_place", refuse(errno.EIO))
    store = SettingsStore(path)
    loaded = store.load()
    assert not path.exists()
    assert loaded.account_id == ACCOUNT  # used for this session
    assert any("so it was deleted" in p for p in store.problems)


def test_when_nothing_works_the_warning_says_the_token_is_still_there(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_v0(path)
    real_unlink = os.unlink

    def unlink(target: Any, *args: Any, **kwargs: Any) -> None:
        if Path(target) == path:
            raise PermissionError(errno.EACCES, "Permission denied")
        real_unlink(target, *args, **kwargs)

    monkeypatch.setattr(store_module, "atomic_write_text", refuse(errno.EROFS))
    monkeypatch.setattr(store_module, "_overwrite_in_place", refuse(errno.EROFS))
    monkeypatch.setattr(os, "unlink", unlink)
    store = SettingsStore(path)
    store.load()
    assert TOKEN in path.read_text(encoding="utf-8")  # truly could not be helped …
    notes = " ".join(store.problems)
    assert "could NOT be removed" in notes  # … and the user is told so, with the path
    assert str(path) in notes
    assert "it has been removed" not in notes
    assert TOKEN not in notes


def test_a_hand_edited_current_file_with_a_token_is_scrubbed_too(path: Path) -> None:
    path.write_text(
        json.dumps({"schema_version": 1, "account_id": ACCOUNT, "api_token": TOKEN}),
        encoding="utf-8",
    )
    store = SettingsStore(path)
    assert store.load() == Settings(account_id=ACCOUNT)
    assert TOKEN not in path.read_text(encoding="utf-8")
    assert any("it has been removed" in p for p in store.problems)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 200_000 + "]" * 200_000, "nested too deeply"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
        ('{"cache_ttl": ' + "9" * 10_000 + "}", "cannot be read"),
    ],
    ids=["deep-list", "deep-object", "huge-number"],
)
def test_hostile_json_is_set_aside_not_a_traceback(path: Path, text: str, why: str) -> None:
    path.write_text(text, encoding="utf-8")
    store = SettingsStore(path)
    assert store.load() == Settings()
    assert not path.exists()
    assert any(why in p and "moved to" in p for p in store.problems)
    assert len(list(path.parent.glob(f"{SETTINGS_FILENAME}.corrupt-*"))) == 1

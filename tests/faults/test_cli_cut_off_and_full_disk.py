"""Issue 25 item 18 on the command line: `flarechat models` against a model list cut off
mid-body says so (the server did answer in HTTP), exits with the network code and prints no
half list; the token is nowhere. And a profile the disk refuses is refused naming the real
cause: a full disk, a read-only mount and a missing permission are three different things."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from drive import assert_plain
from hostile_cli import Run, cli_against_hostile

from flarechat.cli import EXIT_CODES
from flarechat.emulator import DEMO_ACCOUNT_ID
from support.cut_off import CUT_OFF_WAYS, catalogue_body, cut_off
from support.hostile import HostileServer, answer

TOKEN = "tok-faults-cut-off-3e9a61b7d4"
EXIT_NETWORK = 9


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> Iterator[Run]:
    """``run(capsys, server, *argv)``: ``flarechat`` in-process against ``server``; then no
    form of the token in what it printed, logged (at DEBUG) or wrote to the profile."""
    with cli_against_hostile(monkeypatch, isolated_profile, logged, token=TOKEN) as run:
        yield run


@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["table", "json"])
@pytest.mark.parametrize("way", CUT_OFF_WAYS)
def test_item18_models_cut_off_mid_body_says_the_list_was_cut_off(
    way: str, flags: tuple[str, ...], cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(cut_off(catalogue_body(), way))) as server:
        code, out, err = cli(capsys, server, "models", *flags)
    assert code == EXIT_NETWORK, err
    assert EXIT_CODES[code] == "network, TLS or timeout failure"
    assert out == ""  # no half list
    message = err.removeprefix("flarechat: ").strip()
    assert message.startswith("The model list was cut off mid-way"), err
    assert "Try again" in message
    assert "did not answer in HTTP" not in err
    assert "could not read" not in err
    assert_plain(message)


# -- a profile the disk refuses, named by its cause -------------------------------------------
#
# Each disk is real: a tmpfs mounted read-only, and folders the process may not write (mode
# 555, the command run without root's CAP_DAC_OVERRIDE by setpriv, so the kernel refuses it as
# it would any user's), with the profile's folders already made or still to make. One function
# (paths.storage_refusal) names the cause; `models` writes nothing, so a full disk is no
# refusal here (the window's test covers it).

CAUSES = {
    "read-only-mount": "the disk or folder is mounted read-only",
    "no-permission": "permission denied",
}
FOLDERS = ("config", "data", "logs", "cache")
EXIT_PROFILE_UNUSABLE = 2
APP = (sys.executable, "-m", "flarechat")
#: Runs a command as root without the capabilities that let root write anyone's folder.
WITHOUT_ROOTS_OVERRIDE = (
    "setpriv",
    "--inh-caps=-all",
    "--ambient-caps=-all",
    "--bounding-set=-dac_override,-dac_read_search",
    "--",
)


def _mount_tmpfs(where: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)


@contextmanager
def _refusing_home(
    cause: str, tmp_path: Path, *, made: bool
) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """FLARECHAT_HOME that refuses writes for ``cause`` (its folders ``made`` beforehand or
    not); the command's prefix."""
    home = tmp_path / "home"
    home.mkdir()
    if cause == "read-only-mount":
        _mount_tmpfs(home, "size=64k")
        try:
            for name in FOLDERS if made else ():
                (home / name).mkdir()
            _mount_tmpfs(home, "remount,ro")
            yield home, ()
        finally:
            subprocess.run(["umount", str(home)], check=True)
        return
    for name in FOLDERS if made else ():
        (home / name).mkdir(mode=0o555)
        (home / name).chmod(0o555)
    home.chmod(0o555)
    try:
        yield home, WITHOUT_ROOTS_OVERRIDE
    finally:
        for folder in (home, *(home / name for name in FOLDERS if made)):
            folder.chmod(0o700)


@pytest.mark.parametrize("made", [True, False], ids=["folders-made", "folders-to-make"])
@pytest.mark.parametrize("cause", list(CAUSES))
def test_a_profile_the_disk_refuses_is_refused_naming_the_real_cause(
    cause: str, made: bool, tmp_path: Path
) -> None:
    with _refusing_home(cause, tmp_path, made=made) as (home, prefix):
        env = dict(os.environ)
        env.update(
            {
                "FLARECHAT_HOME": str(home),
                "CLOUDFLARE_ACCOUNT_ID": DEMO_ACCOUNT_ID,
                "CLOUDFLARE_API_TOKEN": TOKEN,
                "FLARECHAT_API_BASE": "http://127.0.0.1:9/client/v4",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            }
        )
        done = subprocess.run(
            [*prefix, *APP, "models"], env=env, capture_output=True, text=True, timeout=60
        )
    said = done.stderr
    assert done.returncode == EXIT_PROFILE_UNUSABLE, said
    assert said.startswith("flarechat: "), said
    assert CAUSES[cause] in said
    for other, words in CAUSES.items():
        assert other == cause or words not in said
    assert cause == "read-only-mount" or "read-only" not in said
    assert "Traceback" not in said
    assert_plain(said.removeprefix("flarechat: "))

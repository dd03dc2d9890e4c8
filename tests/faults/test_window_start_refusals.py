"""The window when it can't start: a profile folder it can't use (issue 25 item 12) is
explained in a dialog with the command line's words and the app exits cleanly; SIGTERM ends
the app while the database's error box is up (item 9)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from flarechat import paths
from flarechat.core.store import DB_FILENAME
from flarechat.emulator import EmulatorServer
from flarechat.ui.app import EXIT_PROFILE_UNUSABLE, GuiOptions, _run
from support.cli import point_at, run_cli
from support.kill import PATIENCE, app_env, running_app

TOKEN = "tok-faults-start-3b7e21c0d4"
POLL_S = 0.1
#: The exit code when the database can't be used (ui.app._run).
EXIT_NO_DATABASE = 1


def _wait_for_text(path: Path, text: str, app: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        assert app.poll() is None, "the app ended before it said anything"
        if path.is_file() and text in path.read_text(encoding="utf-8", errors="replace"):
            return
        time.sleep(POLL_S)
    raise AssertionError(f"{text!r} never appeared in {path.name}")


def test_sigterm_ends_the_app_while_the_database_error_box_is_shown(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    (profile / "data" / DB_FILENAME).mkdir(parents=True)  # a folder where the database goes
    env = app_env(profile, "http://127.0.0.1:9/client/v4", token=TOKEN, autosend="")
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as err, running_app(env, stderr=err) as app:
        _wait_for_text(profile / "logs" / "flarechat.log", "chat database cannot be used", app)
        app.send_signal(signal.SIGTERM)
        assert app.wait(PATIENCE) == EXIT_NO_DATABASE
    said = errors.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in said
    assert "--- Logging error ---" not in said


def test_a_home_that_is_a_file_is_explained_and_the_app_exits_cleanly(tmp_path: Path) -> None:
    home = tmp_path / "not-a-folder"
    home.write_text("oops", encoding="utf-8")
    env = app_env(home, "http://127.0.0.1:9/client/v4", token=TOKEN, autosend="")
    errors = tmp_path / "stderr.txt"
    with errors.open("wb") as err, running_app(env, stderr=err) as app:
        _wait_for_text(errors, "FLARECHAT_HOME names a file, not a folder", app)
        app.send_signal(signal.SIGTERM)  # the dialog is up: ending it is a clean exit
        assert app.wait(PATIENCE) == EXIT_PROFILE_UNUSABLE
    said = errors.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in said
    assert f"flarechat: Flarechat can't use the folder {home}" in said


def _mount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], check=True)


async def _dialog_then_exit(options: GuiOptions) -> tuple[str, int]:
    """``ui.app._run`` up to its dialog: the dialog's text, and the exit code once it is
    closed with its button."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as ui.app does: closing is _run's decision
    running = asyncio.ensure_future(_run(options))
    deadline = time.monotonic() + PATIENCE
    boxes: list[QMessageBox] = []
    while not boxes:
        assert not running.done(), running.exception() or "the window ended without a dialog"
        assert time.monotonic() < deadline, "no dialog was shown"
        await asyncio.sleep(POLL_S)
        boxes = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible()
        ]
    (box,) = boxes
    text = box.text()
    (button,) = box.buttons()
    button.click()
    return text, await asyncio.wait_for(running, PATIENCE)


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", ["home-is-a-file", "read-only-home", "read-only-data-folder"])
async def test_the_window_shows_the_command_lines_explanation_in_a_dialog(
    fault: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mounted: list[Path] = []
    if fault == "home-is-a-file":
        home = isolated_profile.parent / "home-file"
        home.write_text("oops", encoding="utf-8")
        monkeypatch.setenv(paths.HOME_ENV, str(home))
    else:
        # A real read-only mount (a tmpfs, remounted ro), which refuses root too: over the
        # whole profile, or over its data folder only.
        refused = isolated_profile if fault == "read-only-home" else isolated_profile / "data"
        refused.mkdir(exist_ok=True)
        _mount(refused, "size=64k")
        mounted.append(refused)
        for kind in ("config", "data", "logs", "cache"):
            (isolated_profile / kind).mkdir(exist_ok=True)
        _mount(refused, "remount,ro")
    point_at(emulator, monkeypatch, token=TOKEN)
    try:
        await _explained_alike(fault, isolated_profile, capsys)
    finally:
        for where in mounted:
            await asyncio.to_thread(subprocess.run, ["umount", str(where)], check=True)


async def _explained_alike(
    fault: str, isolated_profile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, code = await _dialog_then_exit(GuiOptions())
    assert code == EXIT_PROFILE_UNUSABLE
    assert "Flarechat can't use the folder" in text
    assert "Traceback" not in text
    capsys.readouterr()  # the window's stderr line, checked by the subprocess test
    if fault == "read-only-data-folder":  # only the window keeps chats there
        cause = "it can't be written: the disk or folder is mounted read-only"
        assert text == str(paths.ProfileUnavailable(isolated_profile / "data", cause))
        return
    cli = await asyncio.to_thread(run_cli, capsys, "models", token=TOKEN)  # its own loop
    assert cli.code == EXIT_PROFILE_UNUSABLE
    assert f"flarechat: {text}\n" in cli.err  # the command line's very words

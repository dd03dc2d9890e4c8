"""Issue 25 item 18 in the real window: a model list cut off mid-body says so (the server did
answer in HTTP), in the model picker's status; a window started on a full disk says the disk
is full (not "read-only"), still shows the history, and prints no logging traceback."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from pathlib import Path

import pytest
from drive import assert_plain, faulty_window
from PySide6.QtWidgets import QApplication
from window_helpers import next_emit, until

from flarechat import paths
from flarechat.core.conversation import Conversation, new_id
from flarechat.core.store import DB_FILENAME, ChatStore
from flarechat.emulator import EmulatorServer
from flarechat.logsetup import configure_file_logging
from flarechat.ui.app import GuiOptions, _run
from flarechat.ui.window.main_window import MainWindow
from support.cli import point_at
from support.cut_off import CUT_OFF_WAYS, catalogue_body, cut_off
from support.full_disk import full_disk
from support.hostile import HostileServer, answer
from support.kill import PATIENCE, app_env, running_app


@pytest.mark.asyncio
@pytest.mark.parametrize("way", CUT_OFF_WAYS)
async def test_item18_a_model_list_cut_off_mid_body_says_so_in_the_picker(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture, way: str
) -> None:
    with HostileServer(answer(cut_off(catalogue_body(), way))) as server:
        base = server.api_base
        async with faulty_window(emulator, isolated_profile, logged, api_base=base) as run:
            loaded = next_emit(run.env.workspace.models_loaded)
            run.env.workspace.refresh_models()
            _models, _fetched_at, offline = await loaded
            await run.env.chat.drain()
            assert offline
            status = run.main.picker.status_text()
            assert "The model list was cut off mid-way" in status
            assert "Try again" in status
            assert "did not answer in HTTP" not in status
            assert "Offline" not in status  # the server was there: it stopped mid-way
            assert_plain(status)


# -- a window started on a full disk -----------------------------------------------------------
#
# The disk is real: a 1 MB tmpfs mounted for the test (support.full_disk), the profile written
# to it, the rest filled until the kernel answers ENOSPC. Nothing is injected.

TOKEN = "tok-faults-full-disk-8d20c4e6b1"
POLL_S = 0.1
TITLE = "Kept on a full disk"


def _profile_with_history(disk: Path) -> None:
    """A profile whose database holds one conversation, closed cleanly; no log file yet."""
    (disk / "profile" / "data").mkdir(parents=True)
    with ChatStore(disk / "profile" / "data" / DB_FILENAME) as store:
        store.create_conversation(Conversation(id=new_id(), title=TITLE))


async def _main_window(running: asyncio.Future[int]) -> MainWindow:
    found: list[MainWindow] = []

    def shown() -> bool:
        assert not running.done(), running.exception() or "the app ended before its window"
        found[:] = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        return any(w.isVisible() for w in found)

    await until(shown, "the main window")
    return next(w for w in found if w.isVisible())


@pytest.mark.asyncio
async def test_item18_a_window_started_on_a_full_disk_says_the_disk_is_full(
    emulator: EmulatorServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as ui.app does: closing is _run's decision
    with full_disk(tmp_path / "disk", _profile_with_history) as disk:
        monkeypatch.setenv(paths.HOME_ENV, str(disk / "profile"))
        point_at(emulator, monkeypatch, token=TOKEN)
        root = logging.getLogger()
        before = list(root.handlers)
        configure_file_logging()  # as flarechat.main does before the window: the real handler
        try:
            running = asyncio.ensure_future(_run(GuiOptions()))
            main = await _main_window(running)
            banner = main.pane.notice_banner
            await until(lambda: "disk is full" in banner.text, "the full disk's banner")
            assert "read-only" not in banner.text
            assert_plain(banner.text)
            await until(lambda: TITLE in _listed(main), "the history, still readable")
            main.close()
            assert await asyncio.wait_for(running, PATIENCE) == 0
        finally:
            for handler in set(root.handlers) - set(before):
                root.removeHandler(handler)
                handler.close()
    err = capfd.readouterr().err
    assert "--- Logging error ---" not in err
    assert "Traceback" not in err
    assert "can't be written: the disk is full" in err  # one plain line instead


def _listed(main: MainWindow) -> list[str]:
    view = main.sidebar.conversations
    return [view.item(row).text() for row in range(view.count())]


def test_item18_the_app_started_on_a_full_disk_prints_no_logging_traceback(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    """The real app as a subprocess, its stderr whole: it starts, sends (the emulator sees the
    request, so the window is up and the database open), and ends at SIGTERM, cleanly."""
    with full_disk(tmp_path / "disk", _profile_with_history) as disk:
        env = app_env(disk / "profile", emulator.api_base, token=TOKEN, autosend="Still there?")
        errors = tmp_path / "stderr.txt"
        with errors.open("wb") as err, running_app(env, stderr=err) as running:
            deadline = time.monotonic() + PATIENCE
            while not any("/ai/run/" in r.path for r in emulator.state.requests):
                assert running.poll() is None, errors.read_text(errors="replace")
                assert time.monotonic() < deadline, "the app never sent its message"
                time.sleep(POLL_S)
            running.send_signal(signal.SIGTERM)
            assert running.wait(PATIENCE) == 0
    said = errors.read_text(encoding="utf-8", errors="replace")
    assert "--- Logging error ---" not in said
    assert "Traceback" not in said
    assert said.count("can't be written: the disk is full") == 1

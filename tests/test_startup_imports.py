"""Start-up: what the first paint does not wait for, and the first-paint hook bench/ uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui import app as gui_app
from support.first_paint import at_first_paint, run_probe


def _modules_after(code: str) -> set[str]:
    """Top-level module names loaded by ``code`` in a fresh interpreter."""
    script = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return set(out.split())


def test_logsetup_does_not_load_the_api_package() -> None:
    loaded = _modules_after("import flarechat.logsetup")
    assert "flarechat.api" not in loaded
    assert "httpx" not in loaded


def test_the_app_entry_skips_httpx_command_line() -> None:
    code = "from flarechat.main import main\nmain(['--version'])\nimport httpx"
    loaded = _modules_after(code)
    assert "httpx" in loaded
    assert not {"rich", "click"} & loaded


def test_first_paint_calls_back_once_after_the_window_paints(qtbot: QtBot) -> None:
    widget = QWidget()
    qtbot.addWidget(widget)
    calls: list[int] = []
    gui_app.FirstPaint(widget, lambda: calls.append(1))
    widget.show()
    qtbot.waitUntil(lambda: calls == [1])
    widget.repaint()
    qtbot.wait(50)
    assert calls == [1]


def test_after_first_paint_appends_a_monotonic_time_when_benchmarking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qtbot: QtBot
) -> None:
    paint_file = tmp_path / "paint"
    monkeypatch.setenv(gui_app.BENCH_PAINT_ENV, str(paint_file))
    monkeypatch.setattr(gui_app, "PRELOADED_MODULES", ())
    gui_app._after_first_paint()
    (line,) = paint_file.read_text("utf-8").splitlines()
    assert float(line) > 0


#: Counts the argument parsers made, then starts the window as ``flarechat`` with no arguments.
COUNT_PARSERS = """
import argparse
PARSERS = []
_init = argparse.ArgumentParser.__init__

def _counting_init(self, *args, **kwargs):
    PARSERS.append(kwargs.get("prog") or "")
    _init(self, *args, **kwargs)

argparse.ArgumentParser.__init__ = _counting_init
"""


def test_the_window_without_arguments_builds_no_argument_parser(tmp_path: Path) -> None:
    """``flarechat`` alone opens the window without building the parser (~6 ms of start-up:
    gettext's catalogue lookups and the help formatter), which only flags need."""
    made = run_probe(tmp_path, COUNT_PARSERS + at_first_paint("PARSERS"))
    assert made == []

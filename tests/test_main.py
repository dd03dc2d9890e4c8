"""The ``flarechat`` entry point outside the window: version and windowed-build streams."""

from __future__ import annotations

import io
import sys

import pytest

import flarechat
from flarechat.main import main


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"flarechat {flarechat.__version__}\n"


def test_windowed_build_without_stdout_does_not_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    # pythonw and the Windows GUI exe start with sys.stdout = None.
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["--version"]) == 0
    assert isinstance(sys.stdout, io.TextIOBase)
    sys.stdout.close()


def test_help_says_demo_mode_can_simulate_every_banner(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    assert "Simulate menu" in text
    for banner in ("busy model", "slow first byte", "daily allocation", "licence"):
        assert banner in text

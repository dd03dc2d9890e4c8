"""The project's own promises: the README's Quick start and the CI script agree."""

from __future__ import annotations

import re
from pathlib import Path

import flarechat

ROOT = Path(__file__).resolve().parents[1]


def _quick_start() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Quick start\n(.*?)^## ", readme, flags=re.S | re.M)
    assert match is not None, "README has no Quick start section"
    return match.group(1)


def test_quick_start_is_exactly_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", _quick_start(), flags=re.S)
    commands = [line for block in blocks for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    install_and_launch, run_tests = commands
    assert install_and_launch.rstrip().endswith("flarechat")
    assert "[test]" in run_tests
    assert "pytest" in run_tests


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "<!-- test-command -->" in _quick_start()
    assert "test-command" in ci
    assert 'bash -c "$test_command"' in ci


def test_version_lives_in_one_place() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", flarechat.__version__)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject

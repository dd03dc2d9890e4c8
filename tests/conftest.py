"""Fixtures shared by the whole suite: an isolated profile per test and the local emulator."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# Before anything imports Qt: tests run offscreen, with a quiet, predictable locale.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

#: Variables a developer's shell may carry that would leak real settings into tests.
_ISOLATED_ENV = (
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_AI_GATEWAY_ID",
    "FLARECHAT_API_BASE",
    "FLARECHAT_GATEWAY_BASE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """With FLARECHAT_NO_SKIPS=1 (CI), a skipped test is a failure: CI must run everything."""
    report: pytest.TestReport = yield
    strict = os.environ.get("FLARECHAT_NO_SKIPS") == "1"
    if strict and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, but FLARECHAT_NO_SKIPS=1: {report.longrepr}"
    return report


@pytest.fixture(autouse=True)
def isolated_profile(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own FLARECHAT_HOME and never touches the developer's keychain."""
    home = tmp_path / "profile"
    home.mkdir()
    monkeypatch.setenv("FLARECHAT_HOME", str(home))
    for name in _ISOLATED_ENV:
        monkeypatch.delenv(name, raising=False)
    if request.node.get_closest_marker("keyring_real") is None:
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return home


@pytest.fixture(scope="session")
def emulator_server() -> Iterator[EmulatorServer]:
    """One emulator process-wide (starting uvicorn per test would dominate the run)."""
    from flarechat.emulator.server import EmulatorServer

    with EmulatorServer() as server:
        yield server


@pytest.fixture
def emulator(emulator_server: EmulatorServer) -> Iterator[EmulatorServer]:
    """The shared emulator with all faults, capacity holds and request logs cleared."""
    emulator_server.state.reset()
    yield emulator_server
    emulator_server.state.reset()

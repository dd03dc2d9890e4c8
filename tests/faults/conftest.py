"""The fault suite's setup: the UI tests' helpers importable, async tests on the app's qasync
loop, and fixtures for the hostile server, the heartbeat and the leak scan."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

# shell_helpers / window_helpers compose the app for the UI tests: reused, not copied.
_UI_TESTS = str(Path(__file__).resolve().parent.parent / "ui")
if _UI_TESTS not in sys.path:
    sys.path.insert(0, _UI_TESTS)

from flarechat.ui.shared.loop import FlareEventLoop  # noqa: E402
from flarechat.ui.shared.theme import apply_theme  # noqa: E402


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Async fault tests run on the app's own qasync loop, as the window does."""
    return {"qt": lambda: FlareEventLoop(QApplication.instance() or QApplication([]))}


@pytest.fixture(scope="session", autouse=True)
def themed_app(qapp: QApplication) -> QApplication:
    apply_theme(qapp, "light")
    return qapp


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record at DEBUG (what -v or the log file would hold), for the leak scan."""
    with caplog.at_level(logging.DEBUG):
        yield caplog

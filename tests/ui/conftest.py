"""UI test setup: pytest-qt's QApplication with our theme, and a qasync loop for async tests.

Async UI tests: mark them ``@pytest.mark.asyncio`` and simply ``await``; never call
``qtbot.wait*`` inside them (asyncio tasks don't advance in Qt's nested loop). Await a future
resolved by the signal instead (see ``signal_future``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget

from flarechat.ui.shared.loop import FlareEventLoop
from flarechat.ui.shared.theme import apply_theme


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Async tests under tests/ui run on the app's own qasync loop."""
    return {"qt": lambda: FlareEventLoop(QApplication.instance() or QApplication([]))}


@pytest.fixture(scope="session", autouse=True)
def themed_app(qapp: QApplication) -> QApplication:
    """The one QApplication, with Fusion and the light palette (screenshot-stable)."""
    apply_theme(qapp, "light")
    return qapp


def _find_button(root: QWidget, accessible_name: str) -> QAbstractButton:
    matches = [
        button
        for button in root.findChildren(QAbstractButton)
        if button.accessibleName() == accessible_name and button.isVisibleTo(root)
    ]
    assert matches, f"no visible button named {accessible_name!r}"
    return matches[0]


def _signal_future(signal: SignalInstance) -> asyncio.Future[tuple[Any, ...]]:
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def resolve(*args: Any) -> None:
        if not future.done():
            future.set_result(args)

    signal.connect(resolve)
    return future


@pytest.fixture
def find_button() -> Callable[[QWidget, str], QAbstractButton]:
    """``find_button(root, name)``: the shown button under root with this accessible name."""
    return _find_button


@pytest.fixture
def signal_future() -> Callable[[SignalInstance], asyncio.Future[tuple[Any, ...]]]:
    """``signal_future(signal)``: a future resolved with the next emission's arguments."""
    return _signal_future

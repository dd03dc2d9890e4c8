"""A database that cannot be opened stops start-up with a message box, not a traceback (the box's
class is imported only on that path: its enums cost every start-up time, issue #12)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from flarechat.core.store import default_path
from flarechat.ui import app as gui_app

WAIT_S = 15.0
POLL_S = 0.01


async def _shown_box() -> QMessageBox:
    async with asyncio.timeout(WAIT_S):
        while True:
            boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
            shown = [box for box in boxes if box.isVisible()]
            if shown:
                return shown[0]
            await asyncio.sleep(POLL_S)


@pytest.mark.asyncio
async def test_a_database_that_cannot_open_is_explained_in_a_box(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLARECHAT_HOME", str(tmp_path))
    default_path().mkdir(parents=True)  # a folder where the database file should be
    opening = asyncio.ensure_future(gui_app._open_store())
    box = await _shown_box()
    assert box.icon() == QMessageBox.Icon.Critical
    assert box.text()
    box.done(0)
    assert await opening is None
    box.deleteLater()

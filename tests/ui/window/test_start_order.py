"""Start-up overlaps its waits (issue #12): the window's modules are imported while the settings
file is read on its thread (and the database opens on its own), not after the read is back."""

from __future__ import annotations

import importlib
import threading
import types
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.store import AsyncChatStore
from flarechat.settings.schema import Settings
from flarechat.settings.store import SettingsStore
from flarechat.ui import app as gui_app

#: How long the settings read waits for the imports before giving up (the old order never
#: imported while it waited: the test then fails instead of hanging).
WAIT_S = 5.0


class _Stop(Exception):
    """Raised where the window would be built: this test is about what comes before."""


@pytest.mark.asyncio
async def test_the_window_modules_are_imported_while_the_settings_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLARECHAT_HOME", str(tmp_path))
    imported = threading.Event()
    overlapped: list[bool] = []

    def load(self: SettingsStore) -> Settings:  # on the settings' thread
        overlapped.append(imported.wait(WAIT_S))
        return Settings()

    def import_module(name: str) -> types.ModuleType:
        module = importlib.import_module(name)
        if name == gui_app.WINDOW_MODULES[-1]:
            imported.set()
        return module

    stores: list[AsyncChatStore] = []

    def build_window(**parts: Any) -> None:
        stores.append(parts["store"])
        raise _Stop

    monkeypatch.setattr(SettingsStore, "load", load)
    monkeypatch.setattr(gui_app, "importlib", types.SimpleNamespace(import_module=import_module))
    monkeypatch.setattr(gui_app, "Session", build_window)
    with pytest.raises(_Stop):
        await gui_app._run(gui_app.GuiOptions())
    for store in stores:
        await store.close()
    assert overlapped == [True]

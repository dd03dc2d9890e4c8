"""The database is opened and checked on its thread after the window's first paint (issue #12):
the check of a large history (``PRAGMA quick_check``, ~25 ms of CPU at 50,000 messages) does not
share a two-core machine with the window being built. What asked for the database before the
paint (the sidebar's list) waits and is answered then; a window that does not paint (shown
off-screen) has its database opened by the fallback timer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from window_helpers import next_emit

from flarechat.core.conversation import Conversation, new_id
from flarechat.core.store import AsyncChatStore, ChatStore
from flarechat.settings.secrets import MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui import app as gui_app
from flarechat.ui.app import FirstPaint, GuiOptions, Session
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.lazy_client import LazyClient

pytestmark = pytest.mark.asyncio

WAIT_S = 15.0
STORED_TITLE = "Stored before start"


@asynccontextmanager
async def _session(tmp_path: Path, *, paints: bool) -> AsyncIterator[Session]:
    """A shown Session around a database held until the first paint, as ``_run`` makes it."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    path = tmp_path / "chat.sqlite3"
    with ChatStore(path) as stored:
        stored.create_conversation(Conversation(id=new_id(), title=STORED_TITLE))
    prefs = Preferences(
        store=SettingsStore(tmp_path / "settings.json"), secrets=MemorySecretStore(), env={}
    )
    await prefs.load_settings()
    store = AsyncChatStore.opening(path, held=True)
    session = Session(prefs=prefs, client=LazyClient(), store=store, options=GuiOptions())
    if not paints:
        for probe in session.window.findChildren(FirstPaint):
            session.window.removeEventFilter(probe)
    try:
        yield session
    finally:
        session.window.close()
        await session.shutdown()


async def test_the_database_opens_after_the_first_paint_and_the_list_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gui_app, "TOKENS_AT_THE_LATEST_MS", 600_000)  # the paint releases it
    async with _session(tmp_path, paints=True) as session:
        opened = asyncio.ensure_future(session.store.opened())
        at_paint: list[bool] = []
        # Installed after the Session's own: called first, before it releases the database.
        FirstPaint(session.window, lambda: at_paint.append(opened.done()))
        listed = next_emit(session.workspace.conversations_changed)
        session.show([])
        (summaries,) = await asyncio.wait_for(listed, WAIT_S)
        assert at_paint == [False]
        assert opened.done()
        assert [s.title for s in summaries] == [STORED_TITLE]  # type: ignore[attr-defined]


async def test_a_window_that_does_not_paint_has_its_database_opened_all_the_same(
    tmp_path: Path,
) -> None:
    async with _session(tmp_path, paints=False) as session:
        listed = next_emit(session.workspace.conversations_changed)
        session.show([])
        (summaries,) = await asyncio.wait_for(listed, WAIT_S)
        assert [s.title for s in summaries] == [STORED_TITLE]  # type: ignore[attr-defined]

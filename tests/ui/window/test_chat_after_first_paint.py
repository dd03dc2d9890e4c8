"""The chat engine is built on the loop turn after the window's first paint (issue #12), and
nothing the user does before then is lost: a message sent in the same turn as ``show`` is
sent once the engine is there, a conversation clicked in the sidebar opens, Ctrl+N makes a new
chat, and the settings open at once (they do not need the engine).

Real widgets, a real database file and the emulator over loopback, as ``Session`` runs them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from shell_helpers import MODEL, TOKEN, make_settings
from window_helpers import next_emit

from flarechat.core.conversation import ROLE_USER, Conversation, ConversationTree, Message, new_id
from flarechat.core.store import AsyncChatStore, ChatStore
from flarechat.emulator import EmulatorServer
from flarechat.settings.secrets import API_TOKEN, MemorySecretStore
from flarechat.settings.store import SettingsStore
from flarechat.ui.app import FirstPaint, GuiOptions, Session
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.preferences import Preferences
from flarechat.ui.lazy_client import LazyClient

WAIT_S = 15.0
EARLY_TEXT = "Sent before the chat engine was built"
STORED_TITLE = "Stored before start"
PROBLEM = "The settings file was set aside (test)."
TYPED = "Typed before the engine was built"


async def _ready_prefs(tmp_path: Path, emulator: EmulatorServer) -> Preferences:
    """An account with its token already read: a send may go at once."""
    store = SettingsStore(tmp_path / "settings.json")
    await asyncio.to_thread(store.save, make_settings(emulator))
    prefs = Preferences(store=store, secrets=MemorySecretStore({API_TOKEN: TOKEN}), env={})
    await prefs.load_settings()
    await prefs.load_tokens()
    return prefs


@asynccontextmanager
async def _session(
    tmp_path: Path,
    emulator: EmulatorServer,
    *,
    paints: bool = True,
    problems: list[str] | None = None,
) -> AsyncIterator[Session]:
    """A shown Session; ``paints=False``: as a window shown off-screen (no first paint comes,
    so the engine is built by the fallback timer, and the test can act before it)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    prefs = await _ready_prefs(tmp_path, emulator)
    store = await AsyncChatStore.open(tmp_path / "chat.sqlite3")
    session = Session(prefs=prefs, client=LazyClient(), store=store, options=GuiOptions())
    if not paints:
        for probe in session.window.findChildren(FirstPaint):
            session.window.removeEventFilter(probe)
    try:
        session.show(problems or [])
        yield session
    finally:
        session.window.close()
        await session.shutdown()


def _stored_conversation(path: Path) -> str:
    """One conversation with one user message, written before the window starts."""
    conversation = Conversation(id=new_id(), title=STORED_TITLE, model=MODEL)
    tree = ConversationTree(conversation)
    tree.add(Message(new_id(), conversation.id, None, ROLE_USER, "Hello from before"))
    with ChatStore(path) as store:
        store.insert_trees([tree])
    return conversation.id


def _built(chat: ChatController) -> bool:
    """Whether the engine is built (read through a call: each await may build it)."""
    return chat.started


@pytest.mark.asyncio
async def test_the_first_frame_comes_before_the_chat_engine(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    async with _session(tmp_path, emulator) as session:
        chat, window = session.chat, session.window
        assert not chat.started  # shown, not yet painted
        # the first frame's draft: the composer, the model line, the empty chat
        assert window.picker.current_model() == MODEL
        assert window.stack.currentWidget() is window.pane
        assert window.pane.empty_chat.isVisibleTo(window.pane)
        opened = next_emit(chat.conversation_opened)
        await asyncio.wait_for(opened, WAIT_S)  # the engine's own draft, after the paint
        assert _built(chat)
        assert chat.current_id
        assert window.pane.empty_chat.isVisibleTo(window.pane)


@pytest.mark.asyncio
async def test_what_was_shown_before_the_engine_stays_when_it_is_built(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    """The engine's draft takes the place of the draft's look: the start-up banner, text
    typed in the composer and the focus (here the sidebar's search field) stay."""
    async with _session(tmp_path, emulator, paints=False, problems=[PROBLEM]) as session:
        chat, window = session.chat, session.window
        QTest.keyClicks(window.pane.composer.editor, TYPED)
        window.sidebar.focus_search()
        opened = next_emit(chat.conversation_opened)
        assert not chat.started
        await asyncio.wait_for(opened, WAIT_S)
        assert _built(chat)
        assert chat.current_id
        banner = window.pane.notice_banner
        assert banner.isVisibleTo(window.pane)
        assert PROBLEM in banner.text
        assert window.pane.composer.text() == TYPED
        assert window.sidebar.search_field.hasFocus()


@pytest.mark.asyncio
async def test_a_message_sent_in_the_same_turn_as_show_is_sent_once_the_engine_is_built(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    async with _session(tmp_path, emulator) as session:
        chat, composer = session.chat, session.window.pane.composer
        added = next_emit(chat.message_added)
        finished = next_emit(chat.turn_finished)
        QTest.keyClicks(composer.editor, EARLY_TEXT)
        QTest.keyClick(composer.editor, Qt.Key.Key_Return)
        assert not chat.started
        assert composer.text() == ""  # it left the composer, for the engine
        conversation_id, message = await asyncio.wait_for(added, WAIT_S)
        assert getattr(message, "content", None) == EARLY_TEXT
        assert conversation_id == chat.current_id
        _reply_id, reply = await asyncio.wait_for(finished, WAIT_S)
        assert getattr(reply, "status", None) == "done"
        assert chat.is_stored(chat.current_id or "")


@pytest.mark.asyncio
async def test_a_sidebar_click_before_the_engine_is_built_opens_the_conversation(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    stored = _stored_conversation(tmp_path / "chat.sqlite3")
    async with _session(tmp_path, emulator, paints=False) as session:
        chat, sidebar = session.chat, session.window.sidebar
        listed = next_emit(session.workspace.conversations_changed)
        await asyncio.wait_for(listed, WAIT_S)
        assert not chat.started  # no paint: the engine waits for the fallback timer
        opened = next_emit(chat.conversation_opened)
        row = next(
            row
            for row in range(sidebar.conversations.count())
            if sidebar.conversations.item(row).text() == STORED_TITLE
        )
        sidebar.conversations.setCurrentRow(row)
        assert not chat.started
        # the engine's draft (made at show) comes first, then the conversation clicked
        draft_id, _ = await asyncio.wait_for(opened, WAIT_S)
        assert draft_id != stored
        clicked = next_emit(chat.conversation_opened)
        conversation_id, path = await asyncio.wait_for(clicked, WAIT_S)
        assert conversation_id == stored
        assert len(path) == 1  # type: ignore[arg-type]
        assert chat.current_id == stored


@pytest.mark.asyncio
async def test_new_chat_and_settings_before_the_engine_is_built(
    tmp_path: Path, emulator: EmulatorServer
) -> None:
    async with _session(tmp_path, emulator, paints=False) as session:
        chat, window = session.chat, session.window
        drafts: list[str] = []
        two_real: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_opened(conversation_id: str, _path: object) -> None:
            drafts.append(conversation_id)
            if len([d for d in drafts if d]) == 2 and not two_real.done():
                two_real.set_result(None)

        chat.conversation_opened.connect(on_opened)
        window.new_action.trigger()  # Ctrl+N
        window.settings_action.trigger()
        assert not chat.started
        assert window.settings_dialog is not None
        assert window.settings_dialog.isVisible()  # the settings need no engine
        window.settings_dialog.reject()
        await asyncio.wait_for(two_real, WAIT_S)
        # Ctrl+N's look at once (""), then the show's draft and Ctrl+N's, each its own
        real = [conversation_id for conversation_id in drafts if conversation_id]
        assert drafts[0] == ""
        assert real[0] != real[1]
        assert chat.current_id == real[1]

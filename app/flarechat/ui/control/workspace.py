"""Everything around the chat: the conversation list, search, export/import, the model
catalogue, settings and tokens, and switching to demo mode.

Every piece of work runs as a kept task (TaskKeeper) on the qasync loop; file, database and
keychain I/O happen off the GUI thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Signal

from flarechat.api.config import Connection, Secret
from flarechat.api.errors import WorkersAIError
from flarechat.api.models import ModelInfo
from flarechat.api.tokens import TokenCheck
from flarechat.core.catalogue import CatalogueCache
from flarechat.core.connect import ConfigurationError
from flarechat.core.store import AsyncChatStore, SearchHit, StoreError
from flarechat.core.tasks import TaskKeeper
from flarechat.paths import MAX_IMPORT_BYTES, read_regular_file
from flarechat.settings.resolve import DEFAULT_API_BASE
from flarechat.settings.schema import Settings
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.preferences import DemoBackend, Preferences
from flarechat.ui.control.view_data import VerifyInput

if TYPE_CHECKING:  # the lab's file modules come after the first paint (LabController.start)
    from flarechat.core.conversation import ConversationTree
    from flarechat.core.lab.exchange import LabExchange

__all__ = ["CatalogueClient", "WorkspaceController"]

log = logging.getLogger(__name__)

#: Results shown for a search across all conversations (find in one shows every match).
SEARCH_LIMIT = 50
FORMATS = {"markdown": ".md", "json": ".json"}
SIMULATION_FAILED = "The emulator did not take the simulation"


class CatalogueClient(Protocol):
    """The part of WorkersAIClient the workspace uses."""

    async def list_models(self, conn: Connection, *, task: str = ...) -> list[ModelInfo]: ...
    async def verify_token(self, conn: Connection) -> TokenCheck: ...


class WorkspaceController(QObject):
    """The conversation list, search, files, models, settings and demo mode.

    Signals:
        conversations_changed(list): ConversationSummary list (pinned first, newest first).
        search_results(list): SearchHit list for the latest query across all conversations.
        find_results(str, list): query, one message id per match of it in the open
            conversation (all branches; a message with three matches thrice), oldest first.
        conversation_deleted(str, str): id and title of a deleted conversation (offer Undo).
        focus_requested(str): show this message (a search hit was opened on its branch).
        models_loaded(list, object, bool): ModelInfo list, fetch time (float | None), offline.
        models_loading(bool): a live catalogue fetch started / ended.
        models_failed(str): why the live catalogue could not be fetched (a sentence); sent
            just before the models_loaded that falls back to the cache.
        configured_changed(bool): whether replies can be requested (account set up, or demo).
        demo_changed(bool): demo mode switched on.
        simulated(str): a Simulate menu entry was set up in the emulator (what happens next).
        notice(str, str, str, list): kind, title, text, [(action id, label)] for a banner.
    """

    conversations_changed = Signal(list)
    search_results = Signal(list)
    find_results = Signal(str, list)
    conversation_deleted = Signal(str, str)
    focus_requested = Signal(str)
    models_loaded = Signal(list, object, bool)
    models_loading = Signal(bool)
    models_failed = Signal(str)
    configured_changed = Signal(bool)
    demo_changed = Signal(bool)
    simulated = Signal(str)
    notice = Signal(str, str, str, list)

    def __init__(
        self,
        *,
        chat: ChatController,
        store: AsyncChatStore,
        client: CatalogueClient,
        prefs: Preferences,
        catalogue: CatalogueCache,
        start_demo: Callable[[], DemoBackend] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.chat = chat
        self._store = store
        self.prefs = prefs
        self._client = client
        self._catalogue = catalogue
        self._start_demo = start_demo
        self._jobs = TaskKeeper("workspace")
        self._models: list[ModelInfo] = []
        self._fetched_at: float | None = None
        self._search_serial = 0
        self._find_serial = 0
        self._titles: dict[str, str] = {}
        #: the presets, prompts and templates, exported and imported with the conversations
        self.lab: LabExchange | None = None
        chat.conversation_stored.connect(self.refresh_conversations)
        self.models_loaded.connect(chat.set_models)  # vision, LoRA… of each model
        chat.turn_finished.connect(self.refresh_conversations)

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        self._jobs.spawn(coro, name=name)

    # -- the conversation list -------------------------------------------------------------

    def start(self) -> None:
        """First load: the list, today's neurons, the cached catalogue, then the live one (when
        the tokens are still being read, ``tokens_loaded`` fetches the catalogue instead)."""
        self.refresh_conversations()
        self.chat.when_started(lambda: self.chat.status.refresh_neurons())
        if not self.prefs.tokens_pending:
            self.refresh_models()

    def tokens_loaded(self) -> None:
        """The keychain was read after the first paint: use the account it completes."""
        self._connection_changed()

    def refresh_conversations(self, *_: object) -> None:
        self._spawn(self._list(), "list")

    async def _list(self) -> None:
        try:
            summaries = await self._store.list_conversations()
        except StoreError as error:
            self.chat.report_store_problem(error)
            return
        self._titles = {s.id: s.title for s in summaries}
        self.conversations_changed.emit(summaries)

    def title_of(self, conversation_id: str | None) -> str | None:
        return self._titles.get(conversation_id) if conversation_id else None

    def open(self, conversation_id: str) -> None:
        self._spawn(self.chat.open_conversation(conversation_id), "open")

    def open_hit(self, conversation_id: str, message_id: str) -> None:
        """Open a search hit's conversation at its message."""
        self._spawn(self._open_at(conversation_id, message_id), "open-hit")

    async def _open_at(self, conversation_id: str, message_id: str) -> None:
        """Open the conversation on the branch that holds the message, then show it there."""
        opened = await self.chat.open_conversation(conversation_id, at=message_id or None)
        if opened and message_id:
            self.focus_requested.emit(message_id)

    def rename(self, conversation_id: str, title: str) -> None:
        tree = self.chat.current_tree()
        if tree is not None and tree.conversation.id == conversation_id:
            tree.conversation.title = title
        update = self._store.update_conversation(conversation_id, title=title)
        self._spawn(self._then_list(update), "rename")

    def set_pinned(self, conversation_id: str, pinned: bool) -> None:
        tree = self.chat.current_tree()
        if tree is not None and tree.conversation.id == conversation_id:
            tree.conversation.pinned = pinned
        update = self._store.update_conversation(conversation_id, pinned=pinned)
        self._spawn(self._then_list(update), "pin")

    async def _then_list(self, call: Coroutine[Any, Any, Any]) -> None:
        if await self._guard(call):
            await self._list()

    def delete(self, conversation_id: str) -> None:
        """Soft-delete (Undo brings it back); a reply streaming in it is stopped first."""
        self._spawn(self._delete(conversation_id), "delete")

    async def _delete(self, conversation_id: str) -> None:
        await self.chat.stop_conversation(conversation_id)
        title = self._titles.get(conversation_id, "Conversation")
        if not await self._guard(self._store.delete_conversation(conversation_id)):
            return
        was_current = self.chat.current_id == conversation_id
        self.chat.forget(conversation_id)
        await self._list()
        if was_current:
            self.chat.new_conversation()
        self.conversation_deleted.emit(conversation_id, title)

    def undo_delete(self, conversation_id: str) -> None:
        self._spawn(self._restore(conversation_id), "undo-delete")

    async def _restore(self, conversation_id: str) -> None:
        store = self._store
        if await self._guard(store.restore_conversation(conversation_id)):
            await self._list()
            await self.chat.open_conversation(conversation_id)

    # -- search ----------------------------------------------------------------------------

    def search(self, query: str) -> None:
        """Search every conversation; "" clears. Only the latest query's results are shown."""
        self._search_serial += 1
        if query.strip():
            self._spawn(self._search(query, self._search_serial), "search")

    async def _search(self, query: str, serial: int) -> None:
        try:
            hits = await self._store.search(query, SEARCH_LIMIT)
        except StoreError as error:
            self.chat.report_store_problem(error)
            return
        if serial == self._search_serial:
            self.search_results.emit(hits)

    def find(self, query: str) -> None:
        """Find in the open conversation (Ctrl+F): every match, on every branch, in the order
        they were written (a message's id once per occurrence in it, so "n of 3" counts
        matches, not messages). Only the latest query's results are shown."""
        self._find_serial += 1
        self._spawn(self._find(query, self._find_serial), "find")

    async def _find(self, query: str, serial: int) -> None:
        tree = self.chat.current_tree()
        if tree is None or not query.strip():
            self.find_results.emit(query, [])
            return
        conversation_id = tree.conversation.id
        try:
            hits = await self._store.search(query, None, conversation_id=conversation_id)
        except StoreError as error:
            self.chat.report_store_problem(error)
            return
        if serial == self._find_serial and self.chat.current_id == conversation_id:
            self.find_results.emit(query, _per_match(tree, hits, query))

    # -- export / import -------------------------------------------------------------------

    def export_conversation(self, conversation_id: str, *, path: Path, fmt: str) -> None:
        self._spawn(self._export_one(conversation_id, path=path, fmt=fmt), "export")

    async def _export_one(self, conversation_id: str, *, path: Path, fmt: str) -> None:
        from flarechat.core import export  # when first used: the first paint never exports

        try:
            tree = await self._store.load_tree(conversation_id)
            if fmt == "markdown":  # images go into a folder beside it, linked from the text
                await asyncio.to_thread(export.write_markdown, tree, path)
            else:
                text = json.dumps(export.conversation_to_json(tree), ensure_ascii=False, indent=2)
                await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        except (StoreError, OSError) as error:
            self.notice.emit("error", "Export failed", str(error), [])
            return
        self.notice.emit("info", "Conversation exported", f"Saved to {path}.", [])

    def export_all(self, path: Path) -> None:
        self._spawn(self._export_all(path), "export-all")

    async def _export_all(self, path: Path) -> None:
        from flarechat.core import export  # when first used: the first paint never exports

        try:
            lab = self.lab.export_doc() if self.lab is not None else None
            data = await self._store.run(export.export_all, lab=lab)
            text = json.dumps(data, ensure_ascii=False, indent=1)
            await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        except (StoreError, OSError) as error:
            self.notice.emit("error", "Export failed", str(error), [])
            return
        self.notice.emit("info", "Everything exported", f"Saved to {path}.", [])

    def import_all(self, path: Path) -> None:
        self._spawn(self._import_all(path), "import")

    async def _import_all(self, path: Path) -> None:
        from flarechat.core import export  # when first used: the first paint never exports

        try:
            raw = await asyncio.to_thread(read_regular_file, path, limit=MAX_IMPORT_BYTES)
            data = json.loads(raw.decode("utf-8"))
            report = await self._store.run(export.import_all, data)
        except (StoreError, OSError, ValueError) as error:
            self.notice.emit("error", "Import failed", str(error), [])
            return
        renamed = len(report.renamed_conflicts)
        summary = (
            f"{report.added} added, {report.skipped_same} already here"
            + (f", {renamed} imported as copies (same id, different content)" if renamed else "")
            + "."
        )
        if self.lab is not None and (lab := self.lab.import_doc(data)).added + len(lab.renamed):
            summary += f" Presets, prompts and templates: {lab.added + len(lab.renamed)} added."
        self.notice.emit("info", "Import finished", summary, [])
        await self._list()

    # -- the model catalogue ---------------------------------------------------------------

    def refresh_models(self) -> None:
        """Cached catalogue first (instant, offline), then the live one in the background."""
        self._spawn(self._refresh_models(), "models")

    async def _refresh_models(self) -> None:
        if not self._models:
            cached = await asyncio.to_thread(self._catalogue.load)
            if cached is not None:
                self._models, self._fetched_at = cached.models, cached.fetched_at
                self.models_loaded.emit(self._models, self._fetched_at, False)
        try:
            conn = self.prefs.connection()
        except ConfigurationError:
            self.models_loaded.emit(self._models, self._fetched_at, True)
            return
        self.models_loading.emit(True)
        try:
            models = await self._client.list_models(conn)
        except WorkersAIError as error:
            log.info("model catalogue unavailable, showing the cache: %s", error)
            self.models_failed.emit(str(error))
            self.models_loaded.emit(self._models, self._fetched_at, True)
            return
        finally:
            self.models_loading.emit(False)
        try:
            self._fetched_at = await asyncio.to_thread(self._catalogue.save, models)
        except OSError as error:  # a full disk: the fresh list is still shown, just not kept
            log.warning("the model catalogue could not be cached: %s", error)
            self._fetched_at = time.time()
        self._models = models
        self.models_loaded.emit(models, self._fetched_at, False)

    # -- settings, tokens, demo ------------------------------------------------------------

    def apply_settings(self, settings: Settings) -> None:
        """The settings dialog was accepted: use and save the new settings."""
        settings.ui_state = dict(self.prefs.settings.ui_state)
        settings.last_model = self.prefs.settings.last_model
        self.prefs.apply(settings)
        self._spawn(self.prefs.save(), "save-settings")
        self._connection_changed()

    def set_tokens(self, tokens: dict[str, str | None]) -> None:
        self.prefs.set_tokens(tokens)
        self._connection_changed()

    def _connection_changed(self) -> None:
        if self.prefs.demo is not None and self.prefs.account_ready:
            self._spawn(self._leave_demo(), "leave-demo")
            return
        self.configured_changed.emit(self.prefs.configured)
        self.refresh_models()

    async def _leave_demo(self) -> None:
        """An account was set up while in demo mode: from now on, talk to Cloudflare."""
        demo = self.prefs.demo
        self.prefs.use_demo(None)
        self.demo_changed.emit(False)
        self._connection_changed()
        if demo is not None:
            await asyncio.to_thread(demo.stop)

    async def verify(self, typed: VerifyInput) -> str:
        """The settings dialog's Verify: which kind of token this is (raises on failure)."""
        conn = Connection(
            account_id=typed.account_id,
            token=Secret(typed.api_token.reveal()),
            api_base=(typed.api_base or DEFAULT_API_BASE).rstrip("/"),
            read_timeout=typed.request_timeout,
        )
        check = await self._client.verify_token(conn)
        return check.message

    def enable_demo(self) -> None:
        """Switch this window to the built-in emulator (replies are simulated)."""
        self._spawn(self.use_demo(), "demo")

    async def use_demo(self) -> None:
        """Start the emulator (off the GUI thread) and send every request to it."""
        if self._start_demo is None or self.prefs.demo is not None:
            return
        backend = await asyncio.to_thread(self._start_demo)
        self.prefs.use_demo(backend)
        self.demo_changed.emit(True)
        self._connection_changed()

    @property
    def can_simulate(self) -> bool:
        """Whether the Simulate menu applies: demo mode, with an emulator that takes controls."""
        return self.prefs.demo is not None and self.prefs.demo.control is not None

    def simulate(self, key: str) -> None:
        """Demo mode's Simulate menu: tell the emulator what to do wrong next (off the GUI
        thread); ``simulated`` says what was set up, a notice why it could not be."""
        self._spawn(self.run_simulation(key), "simulate")

    async def run_simulation(self, key: str) -> None:
        from flarechat.ui.control.simulations import simulation

        demo, chosen = self.prefs.demo, simulation(key)
        if demo is None or demo.control is None:
            return  # demo mode ended meanwhile: nothing to simulate on
        try:
            await asyncio.to_thread(demo.control, chosen.action, **chosen.arguments)
        except (RuntimeError, OSError) as error:
            log.info("simulation %s refused: %s", key, error)
            self.notice.emit("error", SIMULATION_FAILED, str(error), [])
            return
        self.simulated.emit(chosen.done)

    def save_ui_state(self, state: dict[str, str]) -> None:
        self.prefs.settings.ui_state = dict(state)
        self._spawn(self.prefs.save(), "save-ui-state")

    async def shutdown(self) -> None:
        """Finish: cancel running jobs, stop the demo emulator (off the GUI thread)."""
        await self._jobs.aclose()
        if self.prefs.demo is not None:
            await asyncio.to_thread(self.prefs.demo.stop)

    async def drain(self) -> None:
        await self._jobs.drain()

    async def _guard(self, call: Coroutine[Any, Any, Any]) -> bool:
        """Await a store call; False (and a report) when the database failed."""
        try:
            await call
        except StoreError as error:
            self.chat.report_store_problem(error)
            return False
        return True


def _per_match(tree: ConversationTree, hits: list[SearchHit], query: str) -> list[str]:
    """Each hit's id once per occurrence of ``query`` in its text (at least once: the index
    matched it, as by a stem the plain text does not spell)."""
    from flarechat.core.find_text import find_ranges  # when first used: start-up never finds

    ids: list[str] = []
    for hit in hits:
        message_id = hit.message_id
        if message_id is not None and message_id in tree:
            count = len(find_ranges(tree.get(message_id).content, query))
            ids.extend([message_id] * max(1, count))
    return ids

"""The lab's controller: the library (presets, saved prompts, templates) applied to the chat
on screen, saved off the GUI thread; a reply's request as code; usage and context figures.

Qt-widget-free, like ``ui.control``: widgets call its methods and listen to its signals.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from PySide6.QtCore import QObject, Signal

from flarechat.api.models import ModelInfo
from flarechat.core import ledger, meters
from flarechat.core.connect import ConfigurationError
from flarechat.core.conversation import ConversationTree, new_id
from flarechat.core.lab.kinds import PRESETS, PROMPTS, TEMPLATES
from flarechat.core.lab.variables import variables
from flarechat.core.store import StoreError
from flarechat.core.tasks import TaskKeeper
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.preferences import Preferences
from flarechat.versioned_file import FileNotWritable

if TYPE_CHECKING:
    # The library's items and file are imported by start(), after the first paint (~10 ms
    # of start-up: their dataclasses, csv); View as code when first used (request_code).
    from flarechat.core.lab.exchange import LabImportReport
    from flarechat.core.lab.library import LabLibrary, Shelf
    from flarechat.core.lab.presets import Preset
    from flarechat.core.lab.prompt_library import SavedPrompt
    from flarechat.core.lab.request_view import RequestCode
    from flarechat.core.lab.storage import LabStore
    from flarechat.core.lab.templates import Template

__all__ = ["DayUsageSource", "LabController"]

log = logging.getLogger(__name__)

ReplyRows = list[ledger.LedgerRow]
#: A conversation with more messages than this has its usage summed off the GUI thread:
#: summing thousands of replies would hold up the first paint of the conversation opened.
USAGE_INLINE_MAX = 500
#: ...and starts this long after it is asked for (opening the conversation asks): begun at
#: once, its thread held the GIL against the open's message widgets and paint (~30-50 ms of
#: CPU inside a cold 5,000-message open; issue #12). Left by then, it is not summed at all.
USAGE_SUM_DELAY_S = 0.25
#: Conversation states whose usage totals are kept (a user flips between two or three chats).
USAGE_TOTALS_KEPT = 4
#: What a conversation's usage total was summed from: its id, its size, the usage epoch.
_UsageKey = tuple[str, int, int]


class DayUsageSource(Protocol):
    """Where today's replies are read from (``AsyncChatStore``)."""

    async def replies_today(self, *, now: float | None = None) -> ReplyRows: ...


class LabController(QObject):
    """Presets, prompts and templates for the chat on screen, plus its meters.

    Signals:
        library_changed(): presets, prompts, templates or the default preset changed.
        usage_changed(): the conversation's or today's usage figures changed.
        problem(str): the lab file could not be read or saved (a sentence for the status bar).
    """

    library_changed = Signal()
    usage_changed = Signal()
    problem = Signal(str)

    def __init__(
        self,
        *,
        chat: ChatController,
        prefs: Preferences,
        store: LabStore | None = None,
        library: LabLibrary | None = None,
        usage: DayUsageSource | None = None,
        clock: Callable[[], float] = time.time,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.chat, self.prefs = chat, prefs
        self._store = store
        self._library = library
        self._usage_source = usage
        self._clock = clock
        self._jobs = TaskKeeper("lab")
        self._save_lock = asyncio.Lock()
        #: set once the file was read (or failed to): no save before, which would replace
        #: the user's library with what was made in the meantime (issue 25 item 2)
        self._loaded = asyncio.Event()
        if library is not None:
            self._loaded.set()  # given whole: there is no file to wait for
        self._models: dict[str, ModelInfo] = {}
        self._adhoc_values: dict[str, dict[str, str]] = {}  # per template text, this session
        self._day_rows: ReplyRows = []
        #: today's usage of the account in use (demo mode's own, in demo mode): the ledger's
        self.day = ledger.DayUsage()
        #: The open conversation's usage, summed once per key (see conversation_usage).
        #: totals of the last few states summed (switching back to a chat sums it no more)
        self._conversation_totals: dict[_UsageKey, meters.UsageTotal] = {}
        self._summing: _UsageKey | None = None
        self._usage_epoch = 0  # bumped when a reply's usage or the prices may have changed
        chat.conversation_opened.connect(self._on_conversation_opened)
        chat.turn_finished.connect(self.on_turn_finished)
        chat.turn_failed.connect(self._on_turn_failed)

    # -- loading and saving ----------------------------------------------------------------

    @property
    def store(self) -> LabStore:
        """The profile's lab file (made on first use: start() reads it after the paint)."""
        if self._store is None:
            from flarechat.core.lab.storage import LabStore

            self._store = LabStore()
        return self._store

    @property
    def library(self) -> LabLibrary:
        """Presets, prompts and templates; empty until start() has read the file."""
        if self._library is None:
            from flarechat.core.lab.library import LabLibrary

            self._library = LabLibrary()
        return self._library

    @library.setter
    def library(self, library: LabLibrary) -> None:
        self._library = library

    def start(self) -> None:
        """Load the library and today's usage: off the GUI thread when the loop runs; without
        one (a tool building the window), read the small file at once."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.library = self.store.load()
            self._loaded.set()
            self.library_changed.emit()
            return
        self._jobs.spawn(self.load(), name="load-lab")
        self.refresh_usage()

    def set_usage_source(self, usage: DayUsageSource) -> None:
        """Where today's replies are read from (the chat database), for the day's figures."""
        self._usage_source = usage
        self.refresh_usage()

    async def load(self) -> None:
        """Read the lab file off the GUI thread (start-up). What was saved while it was being
        read joins what it holds, and is saved once it is known."""
        made_meanwhile = self._library
        try:
            self.library = await asyncio.to_thread(self.store.load)
        finally:
            self._loaded.set()
        for problem in self.store.problems:
            self.problem.emit(problem)
        if made_meanwhile is not None and _join(self.library, made_meanwhile):
            self._jobs.spawn(self._save(), name="save-lab")
        self.library_changed.emit()
        # The file is read after the first paint, when the start-up's new chat may be open
        # already: it starts from the default preset all the same.
        tree = self.chat.current_tree()
        if tree is not None and not len(tree):
            self._on_conversation_opened(tree.conversation.id, ())

    def _changed(self) -> None:
        self.library_changed.emit()
        self._jobs.spawn(self._save(), name="save-lab")

    async def _save(self) -> None:
        await self._loaded.wait()
        async with self._save_lock:
            try:
                await asyncio.to_thread(self.store.save, self.library)
            except FileNotWritable as error:
                self.problem.emit(f"The presets and templates were not saved. {error}")
            except (OSError, ValueError) as error:
                self.problem.emit(f"The presets and templates could not be saved ({error}).")

    # -- presets -----------------------------------------------------------------------------

    def presets(self) -> list[Preset]:
        return list(self.library.presets)

    def save_preset(self, name: str, *, with_gateway: bool = True) -> Preset | None:
        """The chat on screen's model, parameters and system prompt (and the profile's gateway
        options) as a new preset."""
        tree = self.chat.current_tree()
        if tree is None:
            return None
        from flarechat.core.lab import presets

        gateway = presets.gateway_of(self.prefs.settings) if with_gateway else None
        preset = presets.preset_from_conversation(
            tree.conversation,
            preset_id=new_id(),
            name=name,
            model=self.chat.current_model(),
            gateway=gateway,
        )
        preset = self.library.presets.add(_named(preset, name))
        self._changed()
        return preset

    def apply_preset(self, preset_id: str) -> bool:
        """Use a preset in the chat on screen (a new chat is made when there is none)."""
        from flarechat.core.lab import presets

        preset = self.library.presets.get(preset_id)
        if preset is None:
            return False
        if self.chat.session is None:
            self.chat.new_conversation()
        presets.apply_preset(self.chat, preset)
        if preset.gateway is not None:
            self.prefs.apply(presets.with_gateway(self.prefs.settings, preset.gateway))
            self._jobs.spawn(self.prefs.save(), name="save-settings")
        self.usage_changed.emit()
        return True

    def rename_preset(self, preset_id: str, name: str) -> None:
        self.rename_item(PRESETS, preset_id, name)

    def duplicate_preset(self, preset_id: str) -> Preset | None:
        copy: Preset | None = self.duplicate_item(PRESETS, preset_id)
        return copy

    def delete_preset(self, preset_id: str) -> None:
        self.delete_item(PRESETS, preset_id)

    def set_default_preset(self, preset_id: str | None) -> None:
        if preset_id is None or preset_id in self.library.presets:
            self.library.default_preset_id = preset_id
            self._changed()

    def _on_conversation_opened(self, conversation_id: str, messages: Sequence[object]) -> None:
        """A new, empty chat starts from the default preset."""
        # Not read yet (the draft shown before the first paint): no preset, as when empty.
        default = self._library.default_preset() if self._library is not None else None
        if default is not None and not messages and not self.chat.is_stored(conversation_id):
            from flarechat.core.lab import presets

            presets.apply_preset(self.chat, default)
        self.usage_changed.emit()

    # -- saved system prompts ----------------------------------------------------------------

    def prompts(self) -> list[SavedPrompt]:
        return list(self.library.prompts)

    def current_system_prompt(self) -> str:
        tree = self.chat.current_tree()
        return tree.conversation.system_prompt if tree is not None else ""

    def save_prompt(self, text: str, name: str = "") -> SavedPrompt | None:
        if not text.strip():
            return None
        from flarechat.core.lab.prompt_library import SavedPrompt

        prompt = self.library.prompts.add(_named(SavedPrompt(new_id(), name, text), name))
        self._changed()
        return prompt

    def delete_prompt(self, prompt_id: str) -> None:
        self.delete_item(PROMPTS, prompt_id)

    def use_system_prompt(self, text: str) -> None:
        """Set the chat on screen's system prompt, keeping its parameters."""
        if self.chat.session is None:
            self.chat.new_conversation()
        tree = self.chat.current_tree()
        params = dict(tree.conversation.params) if tree is not None else {}
        self.chat.set_options(text, params)
        self.usage_changed.emit()

    # -- templates ---------------------------------------------------------------------------

    def templates(self) -> list[Template]:
        return list(self.library.templates)

    def save_template(self, text: str, name: str = "") -> Template | None:
        if not variables(text):
            return None
        from flarechat.core.lab.templates import Template

        template = self.library.templates.add(_named(Template(new_id(), name, text), name))
        self._changed()
        return template

    def delete_template(self, template_id: str) -> None:
        self.delete_item(TEMPLATES, template_id)

    def _template_for(self, text: str) -> Template | None:
        if self._library is None:  # not read yet (the composer asks before the first paint)
            return None
        return next((t for t in self._library.templates if t.text == text), None)

    def remembered_values(self, text: str) -> dict[str, str]:
        """The values last filled into this template (a saved one's are kept in the profile)."""
        template = self._template_for(text)
        if template is not None:
            return dict(template.values)
        return dict(self._adhoc_values.get(text, {}))

    def remember_values(self, text: str, values: Mapping[str, str]) -> None:
        template = self._template_for(text)
        if template is None:
            self._adhoc_values[text] = dict(values)
        elif dict(template.values) != dict(values):
            self.library.templates.put(dataclasses.replace(template, values=dict(values)))
            self._changed()

    # -- any saved item: rename, edit, duplicate, delete -------------------------------------

    def shelf(self, kind: str) -> Shelf[Any]:
        """The presets, prompts or templates (``kind``: PRESETS, PROMPTS, TEMPLATES)."""
        shelves: dict[str, Shelf[Any]] = {
            PRESETS: self.library.presets,
            PROMPTS: self.library.prompts,
            TEMPLATES: self.library.templates,
        }
        return shelves[kind]

    def rename_item(self, kind: str, item_id: str, name: str) -> None:
        if " ".join(name.split()) and self.shelf(kind).rename(item_id, name) is not None:
            self._changed()

    def edit_item(self, kind: str, item_id: str, **changes: Any) -> Any:
        """Change a saved item's fields; the item as kept. Raises ``ValueError`` with a
        sentence for the user when the change is refused (nothing is changed then)."""
        item = self.shelf(kind).get(item_id)
        if item is None:
            raise ValueError("That item was deleted meanwhile.")
        edited = _checked_edit(kind, dataclasses.replace(item, **changes))
        if edited == item:
            return item
        kept = self.shelf(kind).edit(item_id, **changes)
        self._changed()
        return kept

    def duplicate_item(self, kind: str, item_id: str) -> Any:
        copy = self.shelf(kind).duplicate(item_id)
        if copy is not None:
            self._changed()
        return copy

    def delete_item(self, kind: str, item_id: str) -> None:
        shelf = self.shelf(kind)
        gone = self.library.remove_preset(item_id) if kind == PRESETS else shelf.remove(item_id)
        if gone is not None:
            self._changed()

    # -- export and import (WorkspaceController calls these) --------------------------------

    def export_doc(self) -> dict[str, Any]:
        from flarechat.core.lab import exchange

        return exchange.lab_to_json(self.library)

    def import_doc(self, data: Any) -> LabImportReport:
        from flarechat.core.lab import exchange

        report = exchange.import_lab(self.library, data)
        if report.changed:
            self._changed()
        return report

    # -- View as code ------------------------------------------------------------------------

    def request_code(self, message_id: str, *, tree: ConversationTree | None = None) -> RequestCode:
        """A reply's request as code (``tree``: a compare column's; default the chat on
        screen). Raises ``NoRequestRecord`` when it has none."""
        from flarechat.core.lab.request_view import NoRequestRecord, request_code_for

        try:
            conn = self.prefs.connection()
        except ConfigurationError:
            conn = None  # no account: the code names a placeholder for it
        source = tree if tree is not None else self.chat.current_tree()
        if source is None:
            raise NoRequestRecord("No conversation is open.")
        return request_code_for(source, message_id, conn=conn)

    # -- meters ------------------------------------------------------------------------------

    def set_models(self, models: Sequence[ModelInfo]) -> None:
        self._models = {m.name: m for m in models}
        self._usage_epoch += 1
        self.day = self._day_usage(self._day_rows)  # prices may be new
        self.usage_changed.emit()

    def model_names(self) -> list[str]:
        """The catalogue's text-generation models (what a preset may use)."""
        return [m.name for m in self._models.values() if m.task == "Text Generation"]

    def model_info(self, model: str | None = None) -> ModelInfo | None:
        return self._models.get(model or self.chat.current_model())

    def conversation_usage(self) -> meters.UsageTotal:
        """The chat on screen's usage over every reply on every branch, summed once per
        state. A long conversation's is summed off the GUI thread: until it is (usage_changed
        then), an empty total."""
        tree = self.chat.current_tree()
        if tree is None:
            return meters.UsageTotal()
        key = (tree.conversation.id, len(tree), self._usage_epoch)
        if (known := self._conversation_totals.get(key)) is not None:
            return known
        if len(tree) > USAGE_INLINE_MAX and self._loop_runs():
            if self._summing != key:
                self._summing = key
                self._jobs.spawn(self._sum_usage(tree, key), name="conversation-usage")
            return meters.UsageTotal()
        total = meters.conversation_usage(tree, self._models)
        self._keep_total(key, total)
        return total

    def _keep_total(self, key: _UsageKey, total: meters.UsageTotal) -> None:
        self._conversation_totals.pop(key, None)
        self._conversation_totals[key] = total  # the newest last
        while len(self._conversation_totals) > USAGE_TOTALS_KEPT:
            del self._conversation_totals[next(iter(self._conversation_totals))]

    async def _sum_usage(self, tree: ConversationTree, key: _UsageKey) -> None:
        await asyncio.sleep(USAGE_SUM_DELAY_S)
        if self._summing != key:
            return  # another state (or chat) is summed instead
        # The worker only reads: a message added meanwhile changes the key (summed again).
        total = await asyncio.to_thread(meters.conversation_usage, tree, dict(self._models))
        if self._summing == key:
            self._summing = None
        self._keep_total(key, total)
        current = self.chat.current_tree()
        if current is not None and current.conversation.id == key[0]:
            self.usage_changed.emit()

    @staticmethod
    def _loop_runs() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def current_model(self) -> str:
        """The model of the chat on screen (the chat controller's one current model)."""
        return self.chat.current_model()

    def context(
        self, draft: str, *, images: int = 0
    ) -> tuple[meters.ContextUse, meters.ContextLevel]:
        """How full the current model's context window is with the chat on screen, its
        system prompt, ``draft`` and ``images`` attached to it."""
        tree = self.chat.current_tree()
        path = tree.path() if tree is not None else []
        system = tree.conversation.system_prompt if tree is not None else ""
        info = self.model_info()
        use = meters.context_use(
            path,
            system_prompt=system,
            draft=draft,
            images=images,
            window=info.context_window if info else None,
        )
        params = tree.conversation.params if tree is not None else {}
        max_tokens = self.prefs.sampling(params).max_tokens
        return use, meters.context_level(use, max_tokens=max_tokens)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), UTC)

    def _day_usage(self, rows: ReplyRows) -> ledger.DayUsage:
        """The day as the ledger reads it, for the account in use: demo mode's replies never
        count against the real account's allocation (nor the real ones in demo mode)."""
        return ledger.day_usage(rows, self._models, demo=self.prefs.demo is not None)

    def on_turn_finished(self, *_: object) -> None:
        self._usage_epoch += 1  # the reply's usage arrived with it
        self.refresh_usage()

    def _on_turn_failed(self, *_: object) -> None:
        self._usage_epoch += 1  # a reply cut short may still have been billed
        self.refresh_usage()  # ...and a daily-allocation refusal fills the gauge

    def on_models_loaded(self, models: list[ModelInfo], *_: object) -> None:
        self.set_models(models)

    def refresh_usage(self) -> None:
        """Re-read today's replies from the store (start-up, after each reply, at 00:00 UTC)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._jobs.spawn(self._load_day(), name="usage-today")

    async def _load_day(self) -> None:
        if self._usage_source is None:
            self.usage_changed.emit()
            return
        try:
            rows = await self._usage_source.replies_today(now=self._clock())
        except StoreError as error:
            log.info("today's usage unavailable: %s", error)
            return
        self._day_rows = rows
        self.day = self._day_usage(rows)
        self.usage_changed.emit()

    # -- lifetime ----------------------------------------------------------------------------

    async def shutdown(self) -> None:
        await self._jobs.drain()
        await self._jobs.aclose()

    async def drain(self) -> None:
        await self._jobs.drain()


_NamedItem = TypeVar("_NamedItem", "Preset", "SavedPrompt", "Template")


def _named(item: _NamedItem, name: str) -> _NamedItem:
    """``item`` with the name the user gave, or made from it (and following it) when they gave
    none or took the one offered."""
    from flarechat.core.lab.library import derived_name

    given = " ".join(name.split())
    auto = derived_name(item)
    return dataclasses.replace(item, name=given or auto, auto_name=given in ("", auto))


def _checked_edit(kind: str, item: Any) -> Any:
    """``item`` as edited, or ValueError saying what the user must change."""
    if kind == PRESETS:
        from flarechat.core.lab import presets

        if not item.model.strip():
            raise ValueError("A preset needs a model.")
        problems: list[str] = []
        presets.checked_params(item.params, problems)
        if problems:
            raise ValueError(" ".join(problems).replace("it was left out", "fix it first"))
        return item
    if not item.text.strip():
        raise ValueError("The text is empty: write it, or delete the item instead.")
    if kind == TEMPLATES and not variables(item.text):
        raise ValueError("A template needs at least one {{variable}} in its text.")
    return item


def _join(library: LabLibrary, extra: LabLibrary) -> bool:
    """Add ``extra``'s presets, prompts and templates to ``library``; whether any were."""
    added = False
    for preset in extra.presets:
        library.presets.put(preset)
        added = True
    for prompt in extra.prompts:
        library.prompts.put(prompt)
        added = True
    for template in extra.templates:
        library.templates.put(template)
        added = True
    if extra.default_preset_id is not None:
        library.default_preset_id = extra.default_preset_id
    return added

"""The lab in the main window: its controller, the row above the composer, the Lab menu,
the status bar's allocation gauge and usage, and View as code. One call from MainWindow."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from flarechat.core.conversation import ROLE_ASSISTANT, ConversationTree
from flarechat.ui.chat.chat_pane import ChatPane
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.workspace import WorkspaceController
from flarechat.ui.lab.composer_bar import LabBar
from flarechat.ui.lab.controller import LabController
from flarechat.ui.lab.gauges import AllocationGauge, UsageLabel

if TYPE_CHECKING:  # imported when first used (view_code): the first paint never shows it
    from flarechat.ui.lab.code_dialog import RequestCodeDialog

__all__ = ["VIEW_CODE_KEYS", "LabHooks"]

VIEW_CODE_KEYS = "Ctrl+Alt+C"
STATUS_MESSAGE_MS = 4_000
NO_REPLY = "There is no sent reply to show as code."


class LabWindow(Protocol):
    """What the hooks use of MainWindow."""

    chat: ChatController
    workspace: WorkspaceController
    pane: ChatPane


class LabHooks:
    """Builds and wires the lab's parts into ``window``; holds them for tests and dialogs."""

    def __init__(self, window: QMainWindow, *, lab: LabController | None = None) -> None:
        host: LabWindow = window  # type: ignore[assignment]
        self.window = window
        self.chat, workspace, pane = host.chat, host.workspace, host.pane
        self.lab = lab or LabController(chat=self.chat, prefs=workspace.prefs, parent=window)
        self.bar = LabBar(self.lab, pane.composer, pane)
        pane.add_composer_accessory(self.bar)
        pane.send_filter = self.bar.send_text
        self.gauge = AllocationGauge(window)
        self.usage = UsageLabel(window)
        window.statusBar().addPermanentWidget(self.usage)
        window.statusBar().addPermanentWidget(self.gauge)
        self.code_dialog: RequestCodeDialog | None = None
        self.menu = self._build_menu()
        workspace.models_loaded.connect(self.lab.on_models_loaded)
        workspace.lab = self.lab
        self.lab.usage_changed.connect(self.show_usage)
        self.lab.problem.connect(self._status)
        self.gauge.day_ended.connect(self.lab.refresh_usage)
        workspace.demo_changed.connect(lambda *_: self.lab.refresh_usage())  # another account
        # The library file (and the lab's item and file modules, ~10 ms) is read once the
        # chat engine is built, after the first paint: the first frame shows none of it.
        self.chat.when_started(self.lab.start)
        self.show_usage()

    def _action(self, text: str, slot: object, keys: str = "") -> QAction:
        action = QAction(text, self.window)
        if keys:
            action.setShortcut(QKeySequence(keys))
        if callable(slot):
            action.triggered.connect(lambda *_: slot())
        self.window.addAction(action)
        return action

    def _build_menu(self) -> QMenu:
        bar = self.window.menuBar()
        menu = QMenu("&Lab", self.window)
        help_menu = next((a for a in bar.actions() if a.text().replace("&", "") == "Help"), None)
        bar.insertMenu(help_menu, menu) if help_menu is not None else bar.addMenu(menu)
        self.view_code_action = self._action(
            "View request as &code\N{HORIZONTAL ELLIPSIS}", self.view_last_code, VIEW_CODE_KEYS
        )
        menu.addAction(self.view_code_action)
        menu.addSeparator()
        self.presets_menu = menu.addMenu("Apply &preset")
        self.presets_menu.aboutToShow.connect(self._fill_presets)
        menu.addAction(
            self._action(
                "&Save settings as preset\N{HORIZONTAL ELLIPSIS}", self.bar.ask_preset_name
            )
        )
        menu.addAction(
            self._action("&Manage presets\N{HORIZONTAL ELLIPSIS}", self.bar.open_presets)
        )
        return menu

    def _fill_presets(self) -> None:
        self.presets_menu.clear()
        for preset in self.lab.presets():
            action = self.presets_menu.addAction(preset.name)
            action.triggered.connect(partial(self.lab.apply_preset, preset.id))
        if not self.lab.presets():
            self.presets_menu.addAction("No presets yet").setEnabled(False)

    def _status(self, text: str) -> None:
        self.window.statusBar().showMessage(text, STATUS_MESSAGE_MS)

    def show_usage(self) -> None:
        self.usage.show_usage(self.lab.conversation_usage())
        self.gauge.show_usage(self.lab.day, now=self.lab.now())

    # -- View as code ----------------------------------------------------------------------

    def last_reply_id(self) -> str | None:
        tree = self.chat.current_tree()
        path = tree.path() if tree is not None else []
        sent = [m for m in path if m.role == ROLE_ASSISTANT and m.request]
        return sent[-1].id if sent else None

    def view_last_code(self) -> None:
        message_id = self.last_reply_id()
        if message_id is None:
            self._status(NO_REPLY)
        else:
            self.view_code(message_id)

    def view_code(self, message_id: str, *, tree: ConversationTree | None = None) -> None:
        """Show a reply's request as code (``tree``: a compare column's conversation)."""
        from flarechat.core.lab.request_view import NoRequestRecord  # on first use
        from flarechat.ui.lab.code_dialog import open_request_code

        try:
            code = self.lab.request_code(message_id, tree=tree)
        except NoRequestRecord as why:
            self._status(str(why))
            return
        self.code_dialog = open_request_code(self.window, code)

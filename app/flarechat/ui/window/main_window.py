"""The main window: layout (sidebar | chat pane or welcome), toolbar, menus, status bar, dialogs,
and the wiring between the widgets and the two controllers. No business logic lives here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QMainWindow,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QWidget,
)

from flarechat.paths import config_dir, profile_dir
from flarechat.settings.schema import Settings
from flarechat.ui.chat.chat_pane import ChatPane
from flarechat.ui.chat.panels import WelcomePanel
from flarechat.ui.control import presenting
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.workspace import WorkspaceController
from flarechat.ui.lab.window_hooks import LabHooks
from flarechat.ui.models.picker import ModelPicker
from flarechat.ui.shared import text_commands, theme
from flarechat.ui.shared.accessible import name_internal_buttons
from flarechat.ui.shared.icons import APP_ICON, icon
from flarechat.ui.sidebar.sidebar import Sidebar
from flarechat.ui.window import reply_commands
from flarechat.ui.window.simulate_menu import SimulateMenu
from flarechat.ui.window.status_bar import FittingStatusBar, MetricsLabel

if TYPE_CHECKING:  # imported when first opened (window_dialogs, open_compare)
    from flarechat.ui.lab.compare_view import CompareWindow
    from flarechat.ui.settings.dialog import SettingsDialog

__all__ = ["MainWindow"]

APP_TITLE = "Flarechat"
#: Geometry/splitter changes settle this long before they are saved.
UI_STATE_DEBOUNCE_MS = 800
UNDO_VISIBLE_MS = 10_000
STATUS_MESSAGE_MS = 4_000
#: The status bar's metrics start this far from the window's edge, like the sidebar's text.
STATUS_INDENT_PX = 8
DEFAULT_SIZE = (1180, 780)
SIDEBAR_WIDTH = 260
#: Below this window width the sidebar narrows to NARROW_SIDEBAR_SHARE of it (never below
#: the sidebar's own minimum), leaving the chat the room.
NARROW_WINDOW_PX = 1000
NARROW_SIDEBAR_SHARE = 0.22
NO_ACCOUNT_TITLE = "Add your Cloudflare account to chat"
NO_ACCOUNT_TEXT = (
    "Flarechat needs your account ID and an API token before it can send a message. "
    "You can also try it now with simulated replies."
)
NO_ACCOUNT_ACTIONS = [
    ("open_settings", "Open settings\N{HORIZONTAL ELLIPSIS}"),
    ("demo", "Try demo mode"),
]
ZOOM_STEP = 1.1
ZOOM_LIMITS = (0.6, 2.0)
STATE_GEOMETRY, STATE_SPLITTER, STATE_ZOOM = "geometry", "splitter", "zoom"
QUIT_FALLBACK = "Ctrl+Q"


class MainWindow(QMainWindow):
    """The Flarechat window.

    Signals:
        closed(): the window was closed (the app then shuts down in order).
        ui_state_changed(dict): geometry/splitter/zoom to save (debounced), base64 strings.
    """

    closed = Signal()
    ui_state_changed = Signal(dict)

    def __init__(
        self, *, chat: ChatController, workspace: WorkspaceController, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.chat, self.workspace = chat, workspace
        self.setObjectName("mainWindow")
        self.setWindowIcon(icon(APP_ICON, role="accent"))
        self.setAccessibleName(APP_TITLE)
        self._zoom = 1.0
        self._base_point_size = self.font().pointSizeF()
        self._deleted: str | None = None
        self._has_conversations = False
        self._startup_problems = False  # then the chat pane shows them, not the welcome
        self.settings_dialog: SettingsDialog | None = None
        self.compare_window: CompareWindow | None = None
        self._build_widgets()
        self._build_toolbar()
        self._build_status_bar()
        self._build_menus()
        self._wire()
        self.lab_hooks = LabHooks(self)  # presets, prompts, templates, meters, View as code
        self.simulate_menu = SimulateMenu(self)  # demo mode's banners on demand
        self._fit_status_bar()
        self.resize(*DEFAULT_SIZE)
        self._update_title()
        name_internal_buttons(self)

    # -- layout ----------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.sidebar = Sidebar(self)
        self.pane = ChatPane(self)
        self.pane.bind(self.chat)
        self.welcome = WelcomePanel(self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.pane)
        self.stack.addWidget(self.welcome)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.stack)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([SIDEBAR_WIDTH, DEFAULT_SIZE[0] - SIDEBAR_WIDTH])
        self.setCentralWidget(self.splitter)
        self._save_timer = QTimer(self, singleShot=True, interval=UI_STATE_DEBOUNCE_MS)
        self._save_timer.setObjectName("ui-state-debounce")

    def _action(
        self,
        text: str,
        slot: Callable[[], object],
        *,
        shortcut: QKeySequence.StandardKey | str | None = None,
        icon_name: str = "",
        fallback: str = "",
    ) -> QAction:
        """A window action; ``fallback``: the keys where the platform has none for the
        standard key (Quit has none on Windows nor on Qt's generic Linux theme)."""
        action = QAction(text, self)
        if icon_name:
            action.setIcon(icon(icon_name))
        if isinstance(shortcut, QKeySequence.StandardKey):
            keys = QKeySequence.keyBindings(shortcut)
            action.setShortcuts(keys or ([QKeySequence(fallback)] if fallback else []))
        elif isinstance(shortcut, str):
            action.setShortcut(QKeySequence(shortcut))
        hint = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        action.setToolTip(f"{text.rstrip('…')} ({hint})" if hint else text.rstrip("…"))
        action.triggered.connect(lambda *_: slot())
        self.addAction(action)
        return action

    def _build_toolbar(self) -> None:
        self.picker = ModelPicker(self)
        self.new_action = self._action(
            "&New chat", self.new_chat, shortcut=QKeySequence.StandardKey.New, icon_name="new-chat"
        )
        self.settings_action = self._action(
            "&Settings…", self.open_settings, shortcut="Ctrl+,", icon_name="settings"
        )
        toolbar = QToolBar("Main toolbar", self)
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addWidget(self.picker)
        spacer = QWidget(toolbar)
        spacer.setSizePolicy(
            spacer.sizePolicy().Policy.Expanding, spacer.sizePolicy().Policy.Preferred
        )
        toolbar.addWidget(spacer)
        toolbar.addAction(self.new_action)
        toolbar.addAction(self.settings_action)
        self.addToolBar(toolbar)

    def _build_status_bar(self) -> None:
        self.metrics_label = MetricsLabel(self)
        bar = FittingStatusBar(self.metrics_label, self)
        self.setStatusBar(bar)
        self.metrics_label.setAccessibleName("Reply metrics")
        self.metrics_label.setContentsMargins(STATUS_INDENT_PX, 0, 0, 0)
        self.undo_button = QPushButton("Undo", self)
        self.undo_button.setAccessibleName("Undo delete")
        self.undo_button.hide()
        self.route_label = QLabel("", self)
        self.route_label.setAccessibleName("Connection route")
        bar.addWidget(self.metrics_label, 1)
        bar.addPermanentWidget(self.undo_button)
        bar.addPermanentWidget(self.route_label)
        self._undo_timer = QTimer(self, singleShot=True, interval=UNDO_VISIBLE_MS)
        self._undo_timer.setObjectName("undo-visible")

    def _fit_status_bar(self) -> None:
        """In a narrow window the chat's usage goes first, then the gauge's words (its bar and
        tooltip stay), then the route: never a clipped label."""
        bar = self.statusBar()
        if isinstance(bar, FittingStatusBar):
            hooks = self.lab_hooks
            bar.set_drop_order([hooks.usage, hooks.gauge.label, self.route_label])

    def _build_menus(self) -> None:
        keys = QKeySequence.StandardKey
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.new_action)
        file_menu.addSeparator()
        self.export_actions = [
            self._action(f"&Export conversation as {label}…", partial(self.ask_export, None, fmt))
            for fmt, label in (("markdown", "Markdown"), ("json", "JSON"))
        ]
        self.export_all_action = self._action("Export &all conversations…", self.ask_export_all)
        for action in (*self.export_actions, self.export_all_action):
            file_menu.addAction(action)
        file_menu.addAction(self._action("&Import conversations…", self.ask_import))
        file_menu.addSeparator()
        file_menu.addAction(
            self._action("&Quit", self.close, shortcut=keys.Quit, fallback=QUIT_FALLBACK)
        )
        self._build_edit_menu()
        self._build_chat_menu()
        self._build_view_and_help_menus()
        self._update_export_actions()

    def _build_edit_menu(self) -> None:
        keys = QKeySequence.StandardKey
        edit = self.menuBar().addMenu("&Edit")
        self.text_actions = text_commands.TextActions(edit, self._action)
        edit.addSeparator()
        edit.addAction(
            self._action("&Find in conversation…", self.pane.find_bar.open_bar, shortcut=keys.Find)
        )
        edit.addAction(
            self._action("Searc&h all conversations…", self.sidebar.focus_search, shortcut="Ctrl+K")
        )
        edit.addSeparator()
        edit.addAction(
            self._action(
                "C&onversation settings…", self.open_conversation_options, shortcut="Ctrl+Shift+,"
            )
        )
        edit.addAction(self.settings_action)

    def _build_chat_menu(self) -> None:
        """Everything the keyboard can do to a conversation, each with its keys on show."""
        chat = self.menuBar().addMenu("&Chat")
        self.model_action = self._action(
            "Choose &model…", self.picker.open_popup, shortcut="Ctrl+Shift+M"
        )
        self.regenerate_action = self._action(
            "&Regenerate reply", self.regenerate_last, shortcut="Ctrl+R", icon_name="regenerate"
        )
        self.copy_reply_action = self._action(
            "&Copy reply", self.copy_last_reply, shortcut="Ctrl+Shift+C", icon_name="copy"
        )
        self.previous_branch_action = self._action(
            "&Previous version", partial(self.switch_branch, -1), shortcut="Alt+Left"
        )
        self.next_branch_action = self._action(
            "Ne&xt version", partial(self.switch_branch, +1), shortcut="Alt+Right"
        )
        for action in (self.model_action, None, self.regenerate_action, self.copy_reply_action):
            chat.addAction(action) if action is not None else chat.addSeparator()
        chat.addAction(self.previous_branch_action)
        chat.addAction(self.next_branch_action)
        chat.addSeparator()
        # Keys the composer and transcript handle themselves: listed here so they can be
        # found, but not bound (a window shortcut would steal Esc from dialogs and fields).
        self._listed(chat, "&Stop reply", "Esc", self.pane.on_escape)
        self._listed(chat, "&Edit last message", "Up", self.chat.edit_last)
        self._listed(chat, "&Jump to latest", "Ctrl+End", self.pane.transcript_to_end)
        self._listed(chat, "Focus the message &box", "", self.pane.composer.setFocus)

    def _listed(self, menu: QMenu, text: str, keys: str, slot: Callable[[], object]) -> QAction:
        action = QAction(f"{text}\t{keys}" if keys else text, self)
        action.triggered.connect(lambda *_: slot())
        menu.addAction(action)
        return action

    def _build_view_and_help_menus(self) -> None:
        keys = QKeySequence.StandardKey
        view = self.menuBar().addMenu("&View")
        self.sidebar_action = self._action("Show &sidebar", self.toggle_sidebar, shortcut="Ctrl+B")
        self.sidebar_action.setCheckable(True)
        self.sidebar_action.setChecked(True)
        view.addAction(self.sidebar_action)
        view.addAction(self._action("&Compare models…", self.open_compare, shortcut="Ctrl+Shift+K"))
        view.addSeparator()
        view.addAction(
            self._action("Zoom &in", partial(self.zoom, ZOOM_STEP), shortcut=keys.ZoomIn)
        )
        view.addAction(
            self._action("Zoom &out", partial(self.zoom, 1 / ZOOM_STEP), shortcut=keys.ZoomOut)
        )
        view.addAction(self._action("&Actual size", partial(self.zoom, 0.0), shortcut="Ctrl+0"))
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self._action("Open &profile folder", self.open_profile_folder))
        help_menu.addAction(self._action("&About Flarechat", self.show_about))

    # -- wiring ----------------------------------------------------------------------------

    def _wire(self) -> None:
        chat, workspace, sidebar = self.chat, self.workspace, self.sidebar
        sidebar.conversation_activated.connect(workspace.open)
        sidebar.new_requested.connect(self.new_chat)
        sidebar.rename_requested.connect(workspace.rename)
        sidebar.delete_requested.connect(workspace.delete)
        sidebar.pin_requested.connect(workspace.set_pinned)
        sidebar.export_requested.connect(self.ask_export)
        sidebar.search_requested.connect(workspace.search)
        sidebar.search_hit_activated.connect(workspace.open_hit)
        self.picker.model_selected.connect(chat.set_model)
        self.picker.refresh_requested.connect(workspace.refresh_models)
        self.pane.example_chosen.connect(self.pane.composer.set_text)
        self.pane.composer.reject_if_busy_toggled.connect(self._on_reject_if_busy_toggled)
        self.pane.settings_requested.connect(self.open_settings)
        self.pane.transcript.view_code_requested.connect(self.view_code_requested)
        self.pane.switch_model_requested.connect(self.picker.open_popup)
        self.pane.demo_requested.connect(workspace.enable_demo)
        self.pane.find_bar.find_requested.connect(workspace.find)
        self.pane.transcript.log_id_copied.connect(
            lambda log_id: self.statusBar().showMessage(
                f"Copied log id {log_id}", STATUS_MESSAGE_MS
            )
        )
        self.welcome.settings_requested.connect(self.open_settings)
        self.welcome.demo_requested.connect(workspace.enable_demo)
        chat.conversation_opened.connect(self._on_conversation_opened)
        chat.conversation_stored.connect(lambda *_: self._update_export_actions())
        chat.model_changed.connect(self.picker.set_current)
        chat.model_changed.connect(self._show_model)
        chat.metrics_changed.connect(self.metrics_label.show_line)
        workspace.conversations_changed.connect(self._on_conversations_changed)
        workspace.search_results.connect(sidebar.set_search_results)
        workspace.find_results.connect(self.pane.find_bar.set_matches)
        workspace.focus_requested.connect(  # a search hit, with the query that found it
            lambda message_id: self.pane.show_message(message_id, sidebar.search_field.text())
        )
        workspace.conversation_deleted.connect(self._on_conversation_deleted)
        workspace.models_loaded.connect(self._on_models_loaded)
        workspace.models_loading.connect(self.picker.set_loading)
        workspace.models_failed.connect(self.picker.set_problem)
        workspace.configured_changed.connect(self._update_connection)
        workspace.demo_changed.connect(self._on_demo_changed)
        workspace.notice.connect(self.pane.show_notice)
        self.undo_button.clicked.connect(self._undo_delete)
        self._undo_timer.timeout.connect(self.undo_button.hide)
        self.splitter.splitterMoved.connect(lambda *_: self._save_timer.start())
        self._save_timer.timeout.connect(lambda: self.ui_state_changed.emit(self.ui_state()))

    def _on_conversation_opened(self, conversation_id: str, _messages: list[object]) -> None:
        self.sidebar.set_current(conversation_id)
        self._update_title()
        self._update_export_actions()

    def _on_conversations_changed(self, summaries: list[object]) -> None:
        self.sidebar.set_conversations(summaries)  # type: ignore[arg-type]
        self._has_conversations = bool(summaries)
        self._update_title()
        self._update_connection(self.workspace.prefs.configured)
        self._update_export_actions()

    def _update_export_actions(self) -> None:
        """Export only what exists: the open chat once stored, all of them once there are any."""
        current = self.chat.current_id
        stored = current is not None and self.chat.is_stored(current)
        for action in self.export_actions:
            action.setEnabled(stored)
        self.export_all_action.setEnabled(self._has_conversations)

    def _on_models_loaded(self, models: list[object], fetched_at: object, offline: bool) -> None:
        stamp = fetched_at if isinstance(fetched_at, float) else None
        self.picker.set_models(models, fetched_at=stamp, offline=offline)  # type: ignore[arg-type]
        self._show_model(self.chat.current_model())

    def _update_connection(self, configured: bool) -> None:
        """The welcome panel replaces the chat on a first run with no account (and no history)."""
        welcome = not configured and not self._has_conversations and not self._startup_problems
        self.stack.setCurrentWidget(self.welcome if welcome else self.pane)
        self.sidebar.setVisible(not welcome and self.sidebar_action.isChecked())
        self.route_label.setText(self.workspace.prefs.route_label())
        self.picker.set_account_missing(not configured)
        self.pane.composer.set_reject_if_busy(self.workspace.prefs.settings.reject_if_busy)
        self._show_model(self.chat.current_model())

    def show_startup_problems(self, title: str, text: str) -> None:
        """What start-up found (a settings file set aside, no keychain…) in a banner on the
        chat pane, which then stands in for the welcome panel so the banner is seen; it
        offers the welcome's two ways on when no account is set up."""
        self._startup_problems = True
        configured = self.workspace.prefs.configured
        actions = [] if configured else [presenting.ACTION_SETTINGS, presenting.ACTION_DEMO]
        self.pane.show_notice("warning", title, text, actions)
        self._update_connection(configured)

    def _show_model(self, model: str) -> None:
        """A new chat's empty page names the model and what it is good at."""
        self.pane.set_example_model(model, self.picker.strengths(model))

    def _on_reject_if_busy_toggled(self, on: bool) -> None:
        """The composer's switch is the setting itself (saved with the rest)."""
        self.workspace.prefs.settings.reject_if_busy = on
        self._save_timer.start()  # the debounced save writes the settings file too

    def _on_demo_changed(self, demo: bool) -> None:
        """The demo strip is the one place that says so (not the title, not the status bar)."""
        self.pane.demo_strip.setVisible(demo)
        self.workspace.prefs.settings.demo_mode = demo  # saved with the rest at quit
        if demo:
            self.pane.drop_notice(self.workspace.prefs.keychain_problem)

    def _update_title(self) -> None:
        """ "<chat title> — Flarechat": ending in the app's name, so Qt adds it no second time."""
        title = self.workspace.title_of(self.chat.current_id)
        self.setWindowTitle(" \N{EM DASH} ".join([*([title] if title else []), APP_TITLE]))

    def _on_conversation_deleted(self, conversation_id: str, title: str) -> None:
        self._deleted = conversation_id
        self.statusBar().showMessage(
            f"Deleted \N{LEFT DOUBLE QUOTATION MARK}{title}\N{RIGHT DOUBLE QUOTATION MARK}",
            UNDO_VISIBLE_MS,
        )
        self.undo_button.show()
        self._undo_timer.start()

    def _undo_delete(self) -> None:
        if self._deleted is not None:
            self.workspace.undo_delete(self._deleted)
        self._deleted = None
        self.undo_button.hide()
        self.statusBar().clearMessage()

    # -- dialogs and commands --------------------------------------------------------------

    def view_code_requested(self, message_id: str) -> None:
        """Show a reply's request as code (the transcript's and compare columns' action)."""
        self.lab_hooks.view_code(message_id)

    def new_chat(self) -> None:
        """A new draft chat; without an account (or demo), say what is missing and how to fix it."""
        self.chat.new_conversation()
        if not self.workspace.prefs.configured:
            self.pane.show_notice("info", NO_ACCOUNT_TITLE, NO_ACCOUNT_TEXT, NO_ACCOUNT_ACTIONS)

    def regenerate_last(self) -> None:
        if not reply_commands.regenerate_last(self.chat):
            self.statusBar().showMessage("There is no reply to regenerate.", STATUS_MESSAGE_MS)

    def copy_last_reply(self) -> None:
        copied = reply_commands.copy_last_reply(self.chat)
        text = "Copied the reply." if copied else "There is no reply to copy."
        self.statusBar().showMessage(text, STATUS_MESSAGE_MS)

    def switch_branch(self, step: int) -> None:
        if not reply_commands.switch_last_branch(self.chat, step):
            self.statusBar().showMessage("This reply has no other versions.", STATUS_MESSAGE_MS)

    def open_compare(self) -> None:
        from flarechat.ui.lab import compare_view  # on first use: the first paint never shows it

        self.compare_window = compare_view.open_compare(
            self, self.chat, models=self.picker.models(), presets=self.lab_hooks.lab.presets(),
            existing=self.compare_window, view_code=self.lab_hooks.view_code,
        )  # fmt: skip

    def open_settings(self) -> None:
        from flarechat.ui.window import window_dialogs  # when first opened (start-up time)

        self.settings_dialog = window_dialogs.open_settings(self, self.workspace)
        self.settings_dialog.settings_accepted.connect(self.apply_appearance)

    def apply_appearance(self, settings: Settings, *, at_start: bool = False) -> None:
        """Theme and text size, live. At start "system" changes nothing: the app already
        follows the system (or the scheme it was started with)."""
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return
        if settings.theme in ("light", "dark"):
            theme.apply_theme(app, "light" if settings.theme == "light" else "dark")
        elif not at_start:
            theme.apply_theme(app, None)
        if settings.font_size > 0 or not at_start:
            theme.apply_font_size(app, settings.font_size)
            self._base_point_size = app.font().pointSizeF()
            self.zoom(1.0)  # the same zoom, on the new base size

    def open_conversation_options(self) -> None:
        from flarechat.ui.window import window_dialogs  # when first opened (start-up time)

        window_dialogs.open_conversation_options(self, self.chat, prefs=self.workspace.prefs)

    def ask_export(self, conversation_id: str | None, fmt: str) -> None:
        target = conversation_id or self.chat.current_id
        if target is None or not self.chat.is_stored(target):
            self.statusBar().showMessage("Nothing to export yet.", STATUS_MESSAGE_MS)
            return
        from flarechat.ui.window import window_dialogs  # when first opened (start-up time)

        window_dialogs.ask_export(self, self.workspace, conversation_id=target, fmt=fmt)

    def ask_export_all(self) -> None:
        from flarechat.ui.window import window_dialogs  # when first opened (start-up time)

        window_dialogs.ask_export_all(self, self.workspace)

    def ask_import(self) -> None:
        from flarechat.ui.window import window_dialogs  # when first opened (start-up time)

        window_dialogs.ask_import(self, self.workspace)

    def toggle_sidebar(self) -> None:
        self.sidebar.setVisible(self.sidebar_action.isChecked())
        self._save_timer.start()

    def zoom(self, factor: float) -> None:
        """Scale the conversation's text (factor 0 resets)."""
        low, high = ZOOM_LIMITS
        self._zoom = 1.0 if factor == 0 else min(high, max(low, self._zoom * factor))
        font = self.pane.font()
        font.setPointSizeF(self._base_point_size * self._zoom)
        self.pane.transcript.setFont(font)
        self.pane.composer.setFont(font)
        self._save_timer.start()

    def open_profile_folder(self) -> None:
        from PySide6.QtCore import QUrl  # its class and enums are made when first used

        folder = profile_dir() or config_dir().parent
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def show_about(self) -> None:
        from flarechat.ui.window import window_dialogs  # when first opened (start-up time)

        window_dialogs.show_about(self, keychain=self.workspace.prefs.keychain_problem is None)

    # -- window state ----------------------------------------------------------------------

    def ui_state(self) -> dict[str, str]:
        """Geometry, splitter and zoom as base64/plain strings for Settings.ui_state."""
        return {
            STATE_GEOMETRY: bytes(self.saveGeometry().toBase64().data()).decode("ascii"),
            STATE_SPLITTER: bytes(self.splitter.saveState().toBase64().data()).decode("ascii"),
            STATE_ZOOM: f"{self._zoom:.3f}",
        }

    def restore(self, settings: Settings) -> None:
        """What the last session left: window state, look, and demo mode when there is no
        account (so the next launch does not land in a composer that cannot send)."""
        self.apply_appearance(settings, at_start=True)
        self.restore_ui_state(settings.ui_state)
        if settings.demo_mode and not self.workspace.prefs.account_ready:
            self.workspace.enable_demo()

    def restore_ui_state(self, state: dict[str, str]) -> None:
        """Put geometry, splitter sizes and zoom back as saved (bad values are ignored)."""
        if geometry := state.get(STATE_GEOMETRY):
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode("ascii")))
        if splitter := state.get(STATE_SPLITTER):
            self.splitter.restoreState(QByteArray.fromBase64(splitter.encode("ascii")))
        try:
            zoom = float(state.get(STATE_ZOOM, "1"))
        except ValueError:
            zoom = 1.0
        if zoom != 1.0:
            self.zoom(zoom)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_sidebar(event.size().width())

    def _fit_sidebar(self, width: int) -> None:
        """Below NARROW_WINDOW_PX the sidebar gives the chat room (it can still be hidden)."""
        cap = round(width * NARROW_SIDEBAR_SHARE) if width < NARROW_WINDOW_PX else SIDEBAR_WIDTH
        cap = max(cap, self.sidebar.minimumWidth())
        sizes = self.splitter.sizes()
        if len(sizes) == 2 and sizes[0] > cap:
            self.splitter.setSizes([cap, sum(sizes) - cap])

    def event(self, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Move) and self.isVisible():
            self._save_timer.start()
        return super().event(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_timer.stop()
        event.accept()
        self.closed.emit()

"""The main window: layout (sidebar | chat pane or welcome), toolbar, menus, status bar, dialogs,
and the wiring between the widgets and the two controllers. No business logic lives here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QWidget,
)

from flarechat.paths import config_dir, profile_dir
from flarechat.ui.chat.chat_pane import ChatPane
from flarechat.ui.chat.panels import DEMO_LABEL, WelcomePanel
from flarechat.ui.control.chat import ChatController
from flarechat.ui.control.workspace import WorkspaceController
from flarechat.ui.models.picker import ModelPicker
from flarechat.ui.settings.dialog import SettingsDialog
from flarechat.ui.shared import text_commands
from flarechat.ui.shared.accessible import name_internal_buttons
from flarechat.ui.shared.icons import APP_ICON, icon
from flarechat.ui.sidebar.sidebar import Sidebar
from flarechat.ui.window import window_dialogs

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
        self.settings_dialog: SettingsDialog | None = None
        self._build_widgets()
        self._build_toolbar()
        self._build_status_bar()
        self._build_menus()
        self._wire()
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
            "New chat",
            self.chat.new_conversation,
            shortcut=QKeySequence.StandardKey.New,
            icon_name="new-chat",
        )
        self.settings_action = self._action(
            "Settings…", self.open_settings, shortcut="Ctrl+,", icon_name="settings"
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
        bar = self.statusBar()
        self.metrics_label = QLabel("", self)
        self.metrics_label.setAccessibleName("Reply metrics")
        self.metrics_label.setContentsMargins(STATUS_INDENT_PX, 0, 0, 0)
        self.undo_button = QPushButton("Undo", self)
        self.undo_button.setAccessibleName("Undo delete")
        self.undo_button.hide()
        self.route_label = QLabel("", self)
        self.route_label.setAccessibleName("Connection route")
        self.demo_label = QLabel(DEMO_LABEL, self)
        self.demo_label.setObjectName("demoLabel")
        self.demo_label.setStyleSheet("color: palette(accent); font-weight: 600;")
        self.demo_label.hide()
        bar.addWidget(self.metrics_label, 1)
        bar.addPermanentWidget(self.undo_button)
        bar.addPermanentWidget(self.demo_label)
        bar.addPermanentWidget(self.route_label)
        self._undo_timer = QTimer(self, singleShot=True, interval=UNDO_VISIBLE_MS)
        self._undo_timer.setObjectName("undo-visible")

    def _build_menus(self) -> None:
        keys = QKeySequence.StandardKey
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.new_action)
        file_menu.addSeparator()
        for fmt, label in (("markdown", "Markdown"), ("json", "JSON")):
            file_menu.addAction(
                self._action(
                    f"Export conversation as {label}…", partial(self.ask_export, None, fmt)
                )
            )
        file_menu.addAction(self._action("Export all conversations…", self.ask_export_all))
        file_menu.addAction(self._action("Import conversations…", self.ask_import))
        file_menu.addSeparator()
        file_menu.addAction(
            self._action("Quit", self.close, shortcut=keys.Quit, fallback=QUIT_FALLBACK)
        )
        self._build_edit_menu()
        self._build_view_and_help_menus()

    def _build_edit_menu(self) -> None:
        keys = QKeySequence.StandardKey
        edit = self.menuBar().addMenu("&Edit")
        self.text_actions = text_commands.TextActions(edit, self._action)
        edit.addSeparator()
        edit.addAction(
            self._action("Find in conversation…", self.pane.find_bar.open_bar, shortcut=keys.Find)
        )
        edit.addAction(
            self._action("Search all conversations…", self.sidebar.focus_search, shortcut="Ctrl+K")
        )
        edit.addSeparator()
        edit.addAction(
            self._action(
                "Conversation settings…", self.open_conversation_options, shortcut="Ctrl+Shift+,"
            )
        )
        edit.addAction(self.settings_action)

    def _build_view_and_help_menus(self) -> None:
        keys = QKeySequence.StandardKey
        view = self.menuBar().addMenu("&View")
        self.sidebar_action = self._action("Show sidebar", self.toggle_sidebar, shortcut="Ctrl+B")
        self.sidebar_action.setCheckable(True)
        self.sidebar_action.setChecked(True)
        view.addAction(self.sidebar_action)
        view.addSeparator()
        view.addAction(self._action("Zoom in", partial(self.zoom, ZOOM_STEP), shortcut=keys.ZoomIn))
        view.addAction(
            self._action("Zoom out", partial(self.zoom, 1 / ZOOM_STEP), shortcut=keys.ZoomOut)
        )
        view.addAction(self._action("Actual size", partial(self.zoom, 0.0), shortcut="Ctrl+0"))
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self._action("Open profile folder", self.open_profile_folder))
        help_menu.addAction(self._action("About Flarechat", self.show_about))

    # -- wiring ----------------------------------------------------------------------------

    def _wire(self) -> None:
        chat, workspace, sidebar = self.chat, self.workspace, self.sidebar
        sidebar.conversation_activated.connect(workspace.open)
        sidebar.new_requested.connect(chat.new_conversation)
        sidebar.rename_requested.connect(workspace.rename)
        sidebar.delete_requested.connect(workspace.delete)
        sidebar.pin_requested.connect(workspace.set_pinned)
        sidebar.export_requested.connect(self.ask_export)
        sidebar.search_requested.connect(workspace.search)
        sidebar.search_hit_activated.connect(workspace.open_hit)
        self.picker.model_selected.connect(chat.set_model)
        self.picker.refresh_requested.connect(workspace.refresh_models)
        self.pane.settings_requested.connect(self.open_settings)
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
        chat.model_changed.connect(self.picker.set_current)
        chat.metrics_changed.connect(self.metrics_label.setText)
        workspace.conversations_changed.connect(self._on_conversations_changed)
        workspace.search_results.connect(sidebar.set_search_results)
        workspace.find_results.connect(self.pane.find_bar.set_matches)
        workspace.focus_requested.connect(self.pane.show_message)
        workspace.conversation_deleted.connect(self._on_conversation_deleted)
        workspace.models_loaded.connect(self._on_models_loaded)
        workspace.models_loading.connect(self.picker.set_loading)
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

    def _on_conversations_changed(self, summaries: list[object]) -> None:
        self.sidebar.set_conversations(summaries)  # type: ignore[arg-type]
        self._has_conversations = bool(summaries)
        self._update_title()
        self._update_connection(self.workspace.prefs.configured)

    def _on_models_loaded(self, models: list[object], fetched_at: object, offline: bool) -> None:
        stamp = fetched_at if isinstance(fetched_at, float) else None
        self.picker.set_models(models, fetched_at=stamp, offline=offline)  # type: ignore[arg-type]

    def _update_connection(self, configured: bool) -> None:
        """The welcome panel replaces the chat on a first run with no account (and no history)."""
        welcome = not configured and not self._has_conversations
        self.stack.setCurrentWidget(self.welcome if welcome else self.pane)
        self.sidebar.setVisible(not welcome and self.sidebar_action.isChecked())
        self.route_label.setText(self.workspace.prefs.route_label())

    def _on_demo_changed(self, demo: bool) -> None:
        self.pane.demo_strip.setVisible(demo)
        self.demo_label.setVisible(demo)
        self._update_title()

    def _update_title(self) -> None:
        title = self.workspace.title_of(self.chat.current_id)
        parts = [title] if title else []
        parts.append(APP_TITLE)
        if self.workspace.prefs.demo is not None:
            parts.append(DEMO_LABEL)
        self.setWindowTitle(" \N{EM DASH} ".join(parts))

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

    def open_settings(self) -> None:
        self.settings_dialog = window_dialogs.open_settings(self, self.workspace)

    def open_conversation_options(self) -> None:
        window_dialogs.open_conversation_options(self, self.chat, prefs=self.workspace.prefs)

    def ask_export(self, conversation_id: str | None, fmt: str) -> None:
        target = conversation_id or self.chat.current_id
        if target is None or not self.chat.is_stored(target):
            self.statusBar().showMessage("Nothing to export yet.", STATUS_MESSAGE_MS)
            return
        window_dialogs.ask_export(self, self.workspace, conversation_id=target, fmt=fmt)

    def ask_export_all(self) -> None:
        window_dialogs.ask_export_all(self, self.workspace)

    def ask_import(self) -> None:
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
        folder = profile_dir() or config_dir().parent
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def show_about(self) -> None:
        window_dialogs.show_about(self)

    # -- window state ----------------------------------------------------------------------

    def ui_state(self) -> dict[str, str]:
        """Geometry, splitter and zoom as base64/plain strings for Settings.ui_state."""
        return {
            STATE_GEOMETRY: bytes(self.saveGeometry().toBase64().data()).decode("ascii"),
            STATE_SPLITTER: bytes(self.splitter.saveState().toBase64().data()).decode("ascii"),
            STATE_ZOOM: f"{self._zoom:.3f}",
        }

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

    def event(self, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Move) and self.isVisible():
            self._save_timer.start()
        return super().event(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._save_timer.stop()
        event.accept()
        self.closed.emit()

"""The conversation list: date groups, pinned section, rename/pin/delete, search across chats."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from functools import partial
from typing import Protocol, TypeVar

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QSizePolicy,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import current_palette, scroll_bar_sheet
from flarechat.ui.sidebar.hits import (
    ID_ROLE,
    MESSAGE_ROLE,
    SearchHitDelegate,
    SearchHitLike,
    hit_item,
    snippet_html,
)

__all__ = [
    "GROUP_LABELS",
    "SearchHitLike",
    "Sidebar",
    "SummaryLike",
    "group_conversations",
    "snippet_html",
]

PINNED = "Pinned"
TODAY = "Today"
YESTERDAY = "Yesterday"
LAST_WEEK = "Previous 7 days"
OLDER = "Older"
GROUP_LABELS = (PINNED, TODAY, YESTERDAY, LAST_WEEK, OLDER)
WEEK_DAYS = 7
#: A query whose answer has not come back by then (the store failed, or is stuck behind a long
#: write) no longer holds back the newest text.
SEARCH_ANSWER_WAIT_MS = 2000
ROW_PADDING_PX = 5
EMPTY_LIST_TEXT = (
    "No conversations yet.\n\nWrite a message below to start one, or press Ctrl+N "
    "for a new chat. Your chats are saved on this computer."
)
NO_MATCHES_TEXT = "No matches."
#: Keys in the search field that move into the list below it.
_INTO_LIST_KEYS = (Qt.Key.Key_Down, Qt.Key.Key_PageDown)
_ACTIVATE_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class SummaryLike(Protocol):
    """What the sidebar reads from a conversation summary (``ChatStore.list_conversations``)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def updated_at(self) -> float: ...


S = TypeVar("S", bound=SummaryLike)


def _group_of(updated_at: float, today: date) -> str:
    day = datetime.fromtimestamp(updated_at).date()
    if day >= today:
        return TODAY
    if day == today - timedelta(days=1):
        return YESTERDAY
    if day >= today - timedelta(days=WEEK_DAYS):
        return LAST_WEEK
    return OLDER


def group_conversations(items: Iterable[S], *, now: datetime) -> list[tuple[str, list[S]]]:
    """Pinned, then Today / Yesterday / Previous 7 days / Older (local dates), newest first."""
    groups: dict[str, list[S]] = {label: [] for label in GROUP_LABELS}
    today = now.date()
    for item in sorted(items, key=lambda s: s.updated_at, reverse=True):
        groups[PINNED if item.pinned else _group_of(item.updated_at, today)].append(item)
    return [(label, groups[label]) for label in GROUP_LABELS if groups[label]]


class Sidebar(QWidget):
    """The left pane: search field, new-chat button, conversations or search results.

    Signals:
        conversation_activated(str): the user chose a conversation (its id).
        new_requested(): start a new conversation.
        rename_requested(str, str): conversation id, new title (already trimmed, non-empty).
        delete_requested(str): delete a conversation (soft; the window offers Undo).
        pin_requested(str, bool): conversation id, pinned.
        export_requested(str, str): conversation id, format ("markdown" or "json").
        search_requested(str): a query to run now; "" means the search was cleared. One query
            is out at a time: text typed meanwhile is asked for when its results come back
            (set_search_results), so each keystroke costs at most one query.
        search_hit_activated(str, str): conversation id, message id of a clicked result
            ("" when the conversation's title matched).
    """

    conversation_activated = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    pin_requested = Signal(str, bool)
    export_requested = Signal(str, str)
    search_requested = Signal(str)
    search_hit_activated = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self._pinned: dict[str, bool] = {}
        self._current: str | None = None
        self._filling = False
        self.search_field = QLineEdit(self)
        self.new_button = QToolButton(self)
        self.conversations = QListWidget(self)
        self.results = QListWidget(self)
        self._stack = QStackedWidget(self)
        self._empty_results = QLabel(NO_MATCHES_TEXT, self)
        self.empty_list = QLabel(EMPTY_LIST_TEXT, self)
        #: The query asked for and not yet answered (None: the results shown answer the field).
        self._asked: str | None = None
        self._answer_timer = QTimer(self, singleShot=True, interval=SEARCH_ANSWER_WAIT_MS)
        self._answer_timer.setObjectName("sidebar-search-answer-wait")
        self._build()
        self._connect()

    def _build(self) -> None:
        self.search_field.setPlaceholderText("Search all conversations")
        search = self.search_field.addAction(
            icon("search", role="muted"), QLineEdit.ActionPosition.LeadingPosition
        )
        search.setText("Search")  # names its button for screen readers; only the icon shows
        self.new_button.setIcon(icon("new-chat"))
        self.search_field.setClearButtonEnabled(True)
        self.search_field.setAccessibleName("Search all conversations")
        self.new_button.setText("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.setAccessibleName("New chat")
        self.new_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for view, name in ((self.conversations, "Conversations"), (self.results, "Search results")):
            view.setAccessibleName(name)
            view.setFrameShape(QListWidget.Shape.NoFrame)
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.conversations.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.results.setUniformItemSizes(True)  # one size asked for, not one per hit
        self._hit_delegate = SearchHitDelegate(self.results)
        self.results.setItemDelegate(self._hit_delegate)
        self._empty_results.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._empty_results.setEnabled(False)
        self.empty_list.setObjectName("emptySidebar")
        self.empty_list.setAccessibleName("No conversations yet")
        self.empty_list.setWordWrap(True)
        self.empty_list.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.empty_list.setContentsMargins(8, 16, 8, 8)
        self.empty_list.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        for page in (self.conversations, self.results, self._empty_results, self.empty_list):
            self._stack.addWidget(page)
        self.new_button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 4, 8)
        layout.setSpacing(6)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search_field)
        layout.addWidget(self._stack, 1)
        self.setMinimumWidth(200)
        self._restyle()

    def _restyle(self) -> None:
        """Roomy rows and a quiet selection (the palette's accent is for actions)."""
        p = current_palette()
        sheet = (
            f"QListWidget {{ background: {p.window}; }}"
            f"QListWidget::item {{ padding: {ROW_PADDING_PX}px 6px; border-radius: 6px; }}"
            f"QListWidget::item:selected {{ background: {p.selection}; color: {p.text}; }}"
            f"QListWidget::item:hover:!selected {{ background: {p.alt_base}; }}"
        ) + scroll_bar_sheet(p, groove=p.window)  # flat, as the transcript's
        for view in (self.conversations, self.results):
            view.setStyleSheet(sheet)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()

    def _connect(self) -> None:
        self.new_button.clicked.connect(self.new_requested)
        self.search_field.installEventFilter(self)
        self.search_field.textChanged.connect(self._on_search_text_changed)
        self._answer_timer.timeout.connect(self._on_answer_overdue)
        self.conversations.currentItemChanged.connect(self._on_current_item_changed)
        self.conversations.itemChanged.connect(self._on_item_changed)
        self.conversations.customContextMenuRequested.connect(self._on_context_menu)
        self.results.itemActivated.connect(self._on_result_activated)
        self.results.itemClicked.connect(self._on_result_activated)
        delete = QAction("Delete conversation", self.conversations)
        delete.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete.triggered.connect(self._delete_current)
        self.conversations.addAction(delete)

    # -- conversations ---------------------------------------------------------------------

    def set_conversations(
        self, items: Sequence[SummaryLike], *, now: datetime | None = None
    ) -> None:
        """Show these conversations grouped by date; keeps the current one selected."""
        self._filling = True
        try:
            self.conversations.clear()
            self._pinned = {item.id: item.pinned for item in items}
            for label, group in group_conversations(items, now=now or datetime.now()):
                self._add_header(label)
                for item in group:
                    self._add_conversation(item)
            self._select(self._current)
        finally:
            self._filling = False
        if not self.search_field.text().strip():
            self._show_list()

    def _show_list(self) -> None:
        """The conversations, or a line saying how to start when there are none."""
        has_items = bool(self._pinned)
        self._stack.setCurrentWidget(self.conversations if has_items else self.empty_list)

    def _add_header(self, label: str) -> None:
        header = QListWidgetItem(label.upper())
        header.setFlags(Qt.ItemFlag.NoItemFlags)
        font = header.font()
        font.setPointSizeF(font.pointSizeF() * 0.8)
        font.setBold(True)
        header.setFont(font)
        header.setForeground(self.palette().color(QPalette.ColorRole.PlaceholderText))
        self.conversations.addItem(header)

    def _add_conversation(self, summary: SummaryLike) -> None:
        item = QListWidgetItem(summary.title)
        item.setData(ID_ROLE, summary.id)
        item.setToolTip(summary.title)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.conversations.addItem(item)

    def _item_for(self, conversation_id: str | None) -> QListWidgetItem | None:
        for row in range(self.conversations.count()):
            item = self.conversations.item(row)
            if conversation_id is not None and item.data(ID_ROLE) == conversation_id:
                return item
        return None

    def _select(self, conversation_id: str | None) -> None:
        item = self._item_for(conversation_id)
        blocked = self.conversations.blockSignals(True)
        try:
            if item is None:
                self.conversations.setCurrentRow(-1)
            else:
                self.conversations.setCurrentItem(item)
        finally:
            self.conversations.blockSignals(blocked)

    def set_current(self, conversation_id: str | None) -> None:
        """Mark the open conversation (does not emit conversation_activated)."""
        self._current = conversation_id
        self._select(conversation_id)

    def current_id(self) -> str | None:
        return self._current

    def begin_rename(self, conversation_id: str | None = None) -> None:
        """Start editing a conversation's title in place (F2, double-click, or the menu)."""
        item = self._item_for(conversation_id or self._current)
        if item is not None:
            self.conversations.setCurrentItem(item)
            self.conversations.editItem(item)

    def _on_current_item_changed(
        self, current: QListWidgetItem | None, _previous: QListWidgetItem | None
    ) -> None:
        if self._filling:  # refilling moves rows; Qt's own current-row changes are no choice
            return
        conversation_id = current.data(ID_ROLE) if current is not None else None
        if isinstance(conversation_id, str) and conversation_id != self._current:
            self._current = conversation_id
            self.conversation_activated.emit(conversation_id)

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(ID_ROLE)
        title = " ".join(item.text().split())
        if self._filling or not isinstance(conversation_id, str) or not title:
            return
        self.rename_requested.emit(conversation_id, title)

    def _delete_current(self) -> None:
        if self._current is not None:
            self.delete_requested.emit(self._current)

    def _on_context_menu(self, pos: QPoint) -> None:
        item = self.conversations.itemAt(pos)
        conversation_id = item.data(ID_ROLE) if item is not None else None
        if not isinstance(conversation_id, str):
            return
        menu = self._context_menu(conversation_id)
        menu.popup(self.conversations.viewport().mapToGlobal(pos))

    def _context_menu(self, conversation_id: str) -> QMenu:
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        pinned = self._pinned.get(conversation_id, False)
        menu.addAction("Rename", partial(self.begin_rename, conversation_id))
        menu.addAction(
            "Unpin" if pinned else "Pin", partial(self._pin, conversation_id, not pinned)
        )
        menu.addSeparator()
        menu.addAction(
            "Export as Markdown…", partial(self.export_requested.emit, conversation_id, "markdown")
        )
        menu.addAction(
            "Export as JSON…", partial(self.export_requested.emit, conversation_id, "json")
        )
        menu.addSeparator()
        menu.addAction("Delete", partial(self.delete_requested.emit, conversation_id))
        return menu

    def _pin(self, conversation_id: str, pinned: bool) -> None:
        self.pin_requested.emit(conversation_id, pinned)

    # -- search ----------------------------------------------------------------------------

    def focus_search(self) -> None:
        self.search_field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_field.selectAll()

    def _on_search_text_changed(self, text: str) -> None:
        if text.strip():
            if self._asked is None:  # nothing out: ask now; else the answer asks for the rest
                self._ask(text.strip())
        else:
            self._asked = None
            self._answer_timer.stop()
            self._show_list()
            self.search_requested.emit("")

    def _ask(self, query: str) -> None:
        self._asked = query
        self._answer_timer.start()
        self.search_requested.emit(query)

    def _on_answer_overdue(self) -> None:
        """Stop holding typing back; ask for the field's text if it moved on (asking the same
        again would only queue a second copy behind the slow one)."""
        asked, self._asked = self._asked, None
        query = self.search_field.text().strip()
        if query and query != asked:
            self._ask(query)

    def set_search_results(self, hits: Sequence[SearchHitLike]) -> None:
        """Show the hits for the query asked (highlighted snippets). Results the field has moved
        on from are dropped and its text is asked for instead; ignored once the field is empty.
        """
        asked, self._asked = self._asked, None
        self._answer_timer.stop()
        query = self.search_field.text().strip()
        if not query:
            return
        if asked is not None and asked != query:  # typed on meanwhile: these are stale
            self._ask(query)
            return
        self.results.clear()
        self._hit_delegate.forget()
        for hit in hits:
            self.results.addItem(hit_item(hit))
        self._stack.setCurrentWidget(self.results if hits else self._empty_results)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.search_field
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and self._on_search_key(event.key())
        ):
            return True
        return super().eventFilter(watched, event)

    def _on_search_key(self, key: int) -> bool:
        """Down (or Page Down) moves into the list; Enter opens the first (or chosen) result."""
        view = self._stack.currentWidget()
        if not isinstance(view, QListWidget) or view.count() == 0:
            return False
        if key in _INTO_LIST_KEYS:
            if view.currentRow() < 0 or not view.currentItem().flags() & Qt.ItemFlag.ItemIsEnabled:
                view.setCurrentRow(self._first_row(view))
            view.setFocus(Qt.FocusReason.TabFocusReason)
            return True
        if key in _ACTIVATE_KEYS and view is self.results:
            if self._asked is not None:  # the results shown are for an older query
                return False
            item = view.currentItem() or view.item(self._first_row(view))
            if item is not None:
                self._on_result_activated(item)
            return True
        return False

    @staticmethod
    def _first_row(view: QListWidget) -> int:
        """The first row that can be chosen (the list's date headers cannot)."""
        for row in range(view.count()):
            if view.item(row).flags() & Qt.ItemFlag.ItemIsEnabled:
                return row
        return 0

    def _on_result_activated(self, item: QListWidgetItem) -> None:
        conversation_id, message_id = item.data(ID_ROLE), item.data(MESSAGE_ROLE)
        if isinstance(conversation_id, str):
            self.search_hit_activated.emit(conversation_id, message_id or "")

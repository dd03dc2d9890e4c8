"""Small panels of the window: the first-run welcome, a new chat's examples, the demo strip,
the find-in-conversation bar."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.icons import APP_ICON, icon, icon_pixmap

__all__ = [
    "DEMO_LABEL",
    "EXAMPLE_PROMPTS",
    "DemoStrip",
    "EmptyChatPanel",
    "FindBar",
    "WelcomePanel",
]

WELCOME_ICON_PX = 96
WELCOME_BUTTON_SIZE = (150, 34)
DEMO_ICON_PX = 16
DEMO_LABEL = "Demo mode \N{EM DASH} replies are simulated"
#: Typing pauses this long before the find runs.
FIND_DEBOUNCE_MS = 200
WELCOME_TEXT = (
    "Chat with Cloudflare Workers AI models.<br>"
    "Add your account to start, or try Flarechat now with simulated replies."
)


class WelcomePanel(QWidget):
    """Shown instead of the transcript on a first run without an account.

    Signals:
        settings_requested(): open the settings dialog.
        demo_requested(): switch this window to the built-in emulator.
    """

    settings_requested = Signal()
    demo_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePanel")
        self.setAccessibleName("Welcome")
        logo = QLabel(self)
        dpr = self.devicePixelRatioF()
        logo.setPixmap(icon_pixmap(APP_ICON, WELCOME_ICON_PX, dpr=dpr, role="accent"))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        logo.setAccessibleName("Flarechat")
        title = QLabel("Welcome to Flarechat", self)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        title.setFont(font)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        line = QLabel(WELCOME_TEXT, self)
        line.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.settings_button = QPushButton("Open settings", self)
        self.settings_button.setDefault(True)
        self.settings_button.setAccessibleName("Open settings")
        self.demo_button = QPushButton("Try demo mode", self)
        self.demo_button.setAccessibleName("Try demo mode")
        for button in (self.settings_button, self.demo_button):
            button.setMinimumSize(WELCOME_BUTTON_SIZE[0], WELCOME_BUTTON_SIZE[1])
        self.settings_button.clicked.connect(self.settings_requested)
        self.demo_button.clicked.connect(self.demo_requested)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.settings_button)
        buttons.addWidget(self.demo_button)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.addStretch(1)
        for widget in (logo, title):
            column.addWidget(widget)
        column.addWidget(line)
        column.addSpacing(12)
        column.addLayout(buttons)
        column.addStretch(2)


EXAMPLE_PROMPTS = (
    "Explain Cloudflare AI Gateway caching in three bullet points",
    "Write a Python function that retries an HTTP call with backoff",
    "Plan a relaxed three-day trip to Lisbon",
    "Summarise the pros and cons of SQLite for a desktop app",
)
EMPTY_TITLE = "What shall we talk about?"
EMPTY_MAX_WIDTH_PX = 560
EXAMPLE_GAP_PX = 8
#: The empty page's row: a stretch on each side of the examples' column.
SIDE_STRETCH, COLUMN_STRETCH = 1, 4


class EmptyChatPanel(QWidget):
    """A new chat's empty page: the model and what it is good at, and a few prompts to try.

    Signals:
        example_chosen(str): an example was clicked (it goes into the composer, not sent).
    """

    example_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyChat")
        self.setAccessibleName("New chat")
        title = QLabel(EMPTY_TITLE, self)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        title.setFont(font)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.model_line = QLabel(self)
        self.model_line.setWordWrap(True)
        self.model_line.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.model_line.setForegroundRole(self.model_line.foregroundRole().PlaceholderText)
        self.model_line.setAccessibleName("Current model")
        self.examples = [self._example(text) for text in EXAMPLE_PROMPTS]
        column = QVBoxLayout()
        column.setSpacing(EXAMPLE_GAP_PX)
        column.addWidget(title)
        column.addWidget(self.model_line)
        column.addSpacing(EXAMPLE_GAP_PX)
        for button in self.examples:
            column.addWidget(button)
        inner = QWidget(self)
        inner.setLayout(column)
        inner.setMaximumWidth(EMPTY_MAX_WIDTH_PX)
        self._column = column
        row = QHBoxLayout()
        row.addStretch(SIDE_STRETCH)
        row.addWidget(inner, COLUMN_STRETCH)
        row.addStretch(SIDE_STRETCH)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)
        self._outer = outer
        # The pane's minimum is the transcript's, not this page's: examples that do not fit
        # a short window are left out (resizeEvent), never squeezed.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_examples()

    def _fit_examples(self) -> None:
        """Show as many examples as fit the page's height, the last ones left out first. The
        model line wraps, so the column needs its height at the width it gets (its minimum
        size counts the line as one row: a two-line line was squeezed)."""
        margins = self._outer.contentsMargins()
        room = self.height() - margins.top() - margins.bottom()
        width = self._column_width(self.width() - margins.left() - margins.right())
        for button in self.examples:
            button.setVisible(True)
        for button in reversed(self.examples):
            self._column.invalidate()  # it caches its size until told
            if self._needed_height(width) <= room:
                break
            button.setVisible(False)

    def _column_width(self, row_width: int) -> int:
        """The examples' column's width in a row this wide (its stretch share, capped)."""
        spacing = max(0, self._outer.spacing()) * 2
        share = (row_width - spacing) * COLUMN_STRETCH // (2 * SIDE_STRETCH + COLUMN_STRETCH)
        return max(1, min(EMPTY_MAX_WIDTH_PX, share))

    def _needed_height(self, width: int) -> int:
        minimum = self._column.minimumSize().height()
        if not self._column.hasHeightForWidth():
            return minimum
        return max(minimum, self._column.totalHeightForWidth(width))

    def _example(self, text: str) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName("examplePrompt")
        button.setAccessibleName(f"Example: {text}")
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        button.setStyleSheet("QPushButton#examplePrompt { text-align: left; padding: 8px 12px; }")
        button.clicked.connect(lambda _checked=False, t=text: self.example_chosen.emit(t))
        return button

    def set_model(self, model: str, strengths: str = "") -> None:
        """``model``: the id; ``strengths``: one line from the catalogue (may be empty)."""
        name = model.rsplit("/", 1)[-1] if model else "no model chosen yet"
        line = f"Chatting with <b>{html.escape(name)}</b>"
        self.model_line.setText(f"{line}<br>{html.escape(strengths)}" if strengths else line)
        self._fit_examples()  # a longer line may leave room for fewer examples


class DemoStrip(QFrame):
    """The persistent strip saying that replies come from the built-in emulator.

    Signals:
        settings_requested(): the user wants to set up a real account.
    """

    settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setProperty("kind", "info")
        self.setAccessibleName(DEMO_LABEL)
        mark = QLabel(self)
        mark.setObjectName("bannerIcon")
        mark.setPixmap(
            icon_pixmap("info", DEMO_ICON_PX, dpr=self.devicePixelRatioF(), role="accent")
        )
        text = QLabel(
            f"<b>{DEMO_LABEL}</b> by Flarechat's built-in emulator; nothing leaves this computer.",
            self,
        )
        text.setObjectName("bannerText")
        text.setWordWrap(True)
        button = QPushButton("Use my account\N{HORIZONTAL ELLIPSIS}", self)
        button.setAccessibleName("Use my Cloudflare account")
        button.clicked.connect(self.settings_requested)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 8, 6)
        row.addWidget(mark)
        row.addWidget(text, 1)
        row.addWidget(button)
        self.hide()


class FindBar(QWidget):
    """Find in the open conversation: a field, "2 of 5" (matches, not messages),
    previous/next, close.

    Signals:
        find_requested(str): the (debounced) text to look for.
        matches_found(str, list): the query and the ids of the messages that hold a match
            (each once), to mark every match in them.
        match_selected(str, str, int): the message id of the current match, the query to mark
            in it, and which of its occurrences in that message is the current one.
        query_edited(): the text changed: marks of the earlier query no longer apply.
        closed(): the bar was closed (Esc or its close button).
    """

    find_requested = Signal(str)
    matches_found = Signal(str, list)
    match_selected = Signal(str, str, int)
    query_edited = Signal()
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self._matches: list[str] = []
        self._occurrences: list[int] = []  # each match's number among its message's matches
        self._query = ""
        self._index = -1
        self.field = QLineEdit(self)
        self.field.setPlaceholderText("Find in this conversation")
        self.field.setAccessibleName("Find in this conversation")
        self.field.setClearButtonEnabled(True)
        self.count = QLabel("", self)
        self.count.setObjectName("mutedLabel")
        self.count.setMinimumWidth(70)
        self.previous = self._tool("chevron-left", "Previous match")
        self.next = self._tool("chevron-right", "Next match (Enter)")
        close = QToolButton(self)
        close.setText("\N{MULTIPLICATION SIGN}")
        close.setAccessibleName("Close find bar")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        close.clicked.connect(self.close_bar)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 12, 2)
        row.addWidget(self.field, 1)
        for widget in (self.count, self.previous, self.next, close):
            row.addWidget(widget)
        self._timer = QTimer(self, singleShot=True, interval=FIND_DEBOUNCE_MS)
        self._timer.setObjectName("find-debounce")
        self._timer.timeout.connect(lambda: self.find_requested.emit(self.field.text()))
        self.field.textChanged.connect(self._on_text_changed)
        self.field.returnPressed.connect(lambda: self.step(+1))
        self.previous.clicked.connect(lambda: self.step(-1))
        self.next.clicked.connect(lambda: self.step(+1))
        self.hide()

    def _tool(self, name: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(icon(name))
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        button.setAutoRaise(True)
        return button

    def _on_text_changed(self, _text: str) -> None:
        self._timer.start()
        self.query_edited.emit()

    def open_bar(self) -> None:
        self.show()
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.closed.emit()

    def set_matches(self, query: str, message_ids: list[str]) -> None:
        """Results for ``query``: one message id per match, in order (ignored if the field
        has moved on); shows the last match."""
        if query != self.field.text():
            return
        self._matches = list(message_ids)
        self._occurrences = _occurrence_numbers(self._matches)
        self._query = query
        self._index = len(self._matches) - 1
        self.matches_found.emit(query, list(dict.fromkeys(self._matches)))
        self._show_current()

    def step(self, delta: int) -> None:
        if self._matches:
            self._index = (self._index + delta) % len(self._matches)
            self._show_current()

    def _show_current(self) -> None:
        total = len(self._matches)
        if not self.field.text().strip():
            self.count.setText("")
        elif total == 0:
            self.count.setText("No matches")
        else:
            self.count.setText(f"{self._index + 1} of {total}")
            index = self._index
            self.match_selected.emit(self._matches[index], self._query, self._occurrences[index])

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close_bar()
            return
        super().keyPressEvent(event)


def _occurrence_numbers(message_ids: list[str]) -> list[int]:
    """For each match, how many matches of the same message come before it."""
    seen: dict[str, int] = {}
    numbers: list[int] = []
    for message_id in message_ids:
        numbers.append(seen.get(message_id, 0))
        seen[message_id] = numbers[-1] + 1
    return numbers

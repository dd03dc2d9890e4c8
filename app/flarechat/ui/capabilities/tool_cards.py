"""A reply's tool calls as cards: the function's name and pretty arguments, a box for the
result the user gives (or the tool's canned one), and Continue, which sends them all back."""

from __future__ import annotations

import json
from collections.abc import Sequence

from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtGui import QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from flarechat import safejson
from flarechat.ui.control.view_data import ToolCallData
from flarechat.ui.shared.capped import PAGE_ITEMS, ShowAllButton, excerpt
from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import current_palette, fill_rounded, monospace_family, mute, named

__all__ = ["NO_NAME", "ToolCallCard", "ToolCallsPanel", "pretty_arguments"]

RESULT_LINES = 3
FUNCTION_MARK = "\N{LATIN SMALL LETTER F WITH HOOK}"
CONTINUE_TIP = "Send each result back to the model and let it go on"
WAITING_TEXT = "Give a result for each call, then Continue."
ANSWERED_TEXT = "Answered; the results follow below."
#: In place of the name of a call that came without one.
NO_NAME = "(no name)"


def pretty_arguments(arguments: str) -> str:
    """The call's JSON arguments indented (as they came, when they are not JSON)."""
    try:
        value = safejson.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return json.dumps(value, ensure_ascii=False, indent=2)


def _monospace(widget: QWidget) -> None:
    font = QFont(widget.font())
    font.setFamily(monospace_family())
    font.setStyleHint(QFont.StyleHint.Monospace)
    widget.setFont(font)


class ToolCallCard(QFrame):
    """One call: ``name(…)`` with its arguments; a result box while it waits for one."""

    def __init__(self, call: ToolCallData, *, answerable: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("toolCallCard")
        self.call = call
        name = _escape(call.name) if call.name.strip() else f"<i>{NO_NAME}</i>"
        title = named(QLabel(f"{FUNCTION_MARK} <b>{name}</b>", self), "toolName")
        title.setTextFormat(Qt.TextFormat.RichText)
        title.setAccessibleName(f"Tool call {call.name}")
        call_id = mute(named(QLabel(call.id, self), "toolCallId"))
        call_id.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: all of the arguments, pretty; the label renders at most RENDERED_CHARS of them
        self.arguments_text = pretty_arguments(call.arguments)
        shown = excerpt(self.arguments_text)
        self.arguments = named(QLabel(shown, self), "toolArguments")
        self.arguments.setTextFormat(Qt.TextFormat.PlainText)
        self.arguments.setWordWrap(True)
        self.arguments.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.arguments.setAccessibleName(f"Arguments of {call.name}")
        title_text = f"Arguments of {call.name}"
        self.show_all = ShowAllButton(title_text, font=self.arguments.font, parent=self)
        self.show_all.set_text(self.arguments_text, shown=len(shown))
        self.result_label = mute(named(QLabel("Result", self), "toolResultLabel"))
        self.result = QPlainTextEdit(self)
        self.result.setObjectName("toolResult")
        self.result.setAccessibleName(f"Result of {call.name}")
        self.result.setPlaceholderText(f"What {call.name} returned (text or JSON)")
        self.result.setTabChangesFocus(True)
        self.canned = QPushButton("Use canned result", self)
        self.canned.setAccessibleName(f"Use the canned result of {call.name}")
        self.canned.setToolTip(call.canned or "")
        self.canned.clicked.connect(self.use_canned)
        head = QHBoxLayout()
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(call_id)
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 8, 10, 8)
        column.setSpacing(4)
        column.addLayout(head)
        column.addWidget(self.arguments)
        column.addWidget(self.show_all, 0, Qt.AlignmentFlag.AlignLeft)
        column.addWidget(self.result_label)
        column.addWidget(self.result)
        column.addWidget(self.canned, 0, Qt.AlignmentFlag.AlignLeft)
        _monospace(self.arguments)
        _monospace(self.result)
        line = self.result.fontMetrics().lineSpacing()
        self.result.setFixedHeight(RESULT_LINES * line + 2 * RESULT_LINES + 8)
        self.set_answerable(answerable)

    def set_answerable(self, answerable: bool) -> None:
        self.result.setVisible(answerable)
        self.result_label.setVisible(answerable)
        self.canned.setVisible(answerable and self.call.canned is not None)

    def use_canned(self) -> None:
        if self.call.canned is not None:
            self.result.setPlainText(self.call.canned)

    def result_text(self) -> str:
        return self.result.toPlainText()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            _monospace(self.arguments)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        painter = QPainter(self)
        fill_rounded(painter, QRectF(self.rect()), fill=palette.alt_base, border=palette.border)
        painter.end()
        super().paintEvent(event)


class ToolCallsPanel(QWidget):
    """Every call of one reply, and Continue (enabled once each call has a result).

    Cards come a page (``PAGE_ITEMS``) at a time: a reply may hold 10,000 calls, and a card
    is a dozen widgets. "Show more" adds the next page; Continue needs every call's card.

    Signals:
        results_submitted(str, dict): the reply's message id, ``{call id: result text}``.
    """

    results_submitted = Signal(str, dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolCalls")
        self._message_id = ""
        self._calls: tuple[ToolCallData, ...] = ()
        self._answerable = False
        self.cards: list[ToolCallCard] = []
        self._cards = QVBoxLayout()
        self._cards.setSpacing(6)
        self.more_button = named(QPushButton(self), "toolShowMore")
        self.more_button.clicked.connect(self.show_more)
        self.hint = mute(named(QLabel(self), "toolHint"))
        self.continue_button = named(QPushButton(icon("continue"), "Continue"), "toolContinue")
        self.continue_button.setAccessibleName("Continue with these results")
        self.continue_button.setToolTip(CONTINUE_TIP)
        self.continue_button.clicked.connect(self.submit)
        footer = QHBoxLayout()
        footer.addWidget(self.hint, 1)
        footer.addWidget(self.continue_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(6)
        column.addLayout(self._cards)
        column.addWidget(self.more_button, 0, Qt.AlignmentFlag.AlignLeft)
        column.addLayout(footer)

    def set_calls(
        self, message_id: str, calls: Sequence[ToolCallData], *, answerable: bool
    ) -> None:
        """Show ``calls``; result boxes and Continue only while they wait for results."""
        calls = tuple(calls)
        if (message_id, calls) != (self._message_id, self._calls):
            self._message_id, self._calls = message_id, calls
            self._rebuild()
        self._answerable = answerable
        for card in self.cards:
            card.set_answerable(answerable)
        self.continue_button.setVisible(answerable)
        self.hint.setText(WAITING_TEXT if answerable else ANSWERED_TEXT)
        self._update_continue()

    def _rebuild(self) -> None:
        for card in self.cards:
            card.hide()
            card.deleteLater()
        self.cards = []
        self._add_cards(PAGE_ITEMS)

    def show_more(self) -> None:
        """The next page of cards (those already shown keep what was typed in them)."""
        self._add_cards(PAGE_ITEMS)
        for card in self.cards[-PAGE_ITEMS:]:
            card.set_answerable(self._answerable)
        self._update_continue()

    def _add_cards(self, count: int) -> None:
        start = len(self.cards)
        for call in self._calls[start : start + count]:
            card = ToolCallCard(call, answerable=True, parent=self)
            card.result.textChanged.connect(self._update_continue)
            self._cards.addWidget(card)
            self.cards.append(card)
        hidden = len(self._calls) - len(self.cards)
        self.more_button.setVisible(hidden > 0)
        if hidden > 0:
            page = min(PAGE_ITEMS, hidden)
            self.more_button.setText(f"Show {page:,} more calls ({hidden:,} not shown)")
            self.more_button.setAccessibleName(f"Show {page:,} more tool calls")

    def _update_continue(self) -> None:
        every = len(self.cards) == len(self._calls)
        filled = every and all(card.result_text().strip() for card in self.cards)
        self.continue_button.setEnabled(self._answerable and filled and bool(self.cards))

    def results(self) -> dict[str, str]:
        return {card.call.id: card.result_text() for card in self.cards}

    def submit(self) -> None:
        if self.continue_button.isEnabled():
            self.continue_button.setEnabled(False)  # one click sends once
            self.results_submitted.emit(self._message_id, self.results())


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

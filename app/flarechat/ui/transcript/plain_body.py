"""A user message's text: whole when short; a long one collapsed to its start, and Show all
lays the rest out in bounded steps, so a 1 MB message never freezes the window."""

from __future__ import annotations

import bisect
import re

from PySide6.QtCore import QMimeData, Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QLabel, QToolButton, QVBoxLayout, QWidget

from flarechat.ui.shared.theme import current_palette, named
from flarechat.ui.transcript.document_page import DocumentPage
from flarechat.ui.transcript.message_parts import wrapped_label

__all__ = ["COLLAPSE_CHARS", "COLLAPSE_LINES", "STEP_CHARS", "PlainBody", "preview"]

#: A text longer than this (or with more lines) is shown collapsed: a label lays its text out
#: whole on every height question (1 MB: 0.5 s each).
COLLAPSE_CHARS = 3_000
COLLAPSE_LINES = 40
#: What a collapsed text shows of its start.
PREVIEW_CHARS = 600
PREVIEW_LINES = 12
#: Text appended per loop turn while Show all lays the text out (Qt: ~2-4 ms per 1,000 chars).
STEP_CHARS = 4_000
#: One document block holds at most this much: Qt lays a changed block out whole, so a
#: 1 MB paragraph is cut (at a space) into blocks it can lay out one at a time.
PIECE_CHARS = 2_000
#: Where Qt's insertText starts a new block; each is a block break of our own instead.
_BREAK = re.compile("\r\n|[\r\n\u2029\ufdd0\ufdd1]")


def preview(text: str) -> str:
    """The start of a long text, cut at a line or a space, with an ellipsis."""
    head = text[:PREVIEW_CHARS]
    lines = head.split("\n")
    if len(lines) > PREVIEW_LINES:
        head = "\n".join(lines[:PREVIEW_LINES])
    elif len(head) == PREVIEW_CHARS and " " in head:
        head = head[: head.rindex(" ")]
    return head.rstrip() + " …"


def next_piece(text: str, start: int) -> tuple[int, int]:
    """(end of the piece starting at ``start``, where the next one starts): up to a line
    break, or PIECE_CHARS cut after a space (anywhere if the run has none)."""
    limit = start + PIECE_CHARS
    found = _BREAK.search(text, start, limit + 2)
    if found is not None and found.start() <= limit:
        return found.start(), found.end()
    if limit >= len(text):
        return len(text), len(text)
    space = text.rfind(" ", start, limit)
    cut = space + 1 if space > start else limit
    return cut, cut


class _PlainPage(DocumentPage):
    """The whole text as document blocks; a selection copies the original characters (the
    blocks a long paragraph was cut into add no line breaks)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(current_palette(), parent)
        self.setObjectName("userTextPage")
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.full_text = ""
        #: Document position and text offset where each block starts.
        self.block_starts: list[int] = []
        self.text_starts: list[int] = []
        self._shown_end = 0  # text[:_shown_end] is in the document

    def offset(self, position: int) -> int:
        """The text offset shown at document ``position``."""
        index = max(0, bisect.bisect_right(self.block_starts, position) - 1)
        if not self.block_starts:
            return 0
        block = self.document().findBlockByNumber(index)
        inside = min(position - self.block_starts[index], max(0, block.length() - 1))
        return self.text_starts[index] + inside

    def createMimeDataFromSelection(self) -> QMimeData:
        cursor = self.textCursor()
        mime = QMimeData()
        start, end = self.offset(cursor.selectionStart()), self.offset(cursor.selectionEnd())
        if cursor.selectionEnd() >= self.document().characterCount() - 1:
            end = len(self.full_text) if self.is_complete() else end
        mime.setText(self.full_text[start:end])
        return mime

    def is_complete(self) -> bool:
        return bool(self.text_starts) and self._shown_end >= len(self.full_text)

    def append_step(self, budget: int) -> None:
        """Append about ``budget`` more characters of the text, whole pieces, in one edit."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        try:
            start, stop = self._shown_end, min(len(self.full_text), self._shown_end + budget)
            while start < stop:
                end, following = next_piece(self.full_text, start)
                if self.text_starts:
                    cursor.insertBlock()
                self.block_starts.append(cursor.position())
                self.text_starts.append(start)
                cursor.insertText(self.full_text[start:end])
                start = following
            self._shown_end = start
        finally:
            cursor.endEditBlock()

    def reset(self, text: str) -> None:
        self.clear()
        self.full_text, self._shown_end = text, 0
        self.block_starts.clear()
        self.text_starts.clear()


class PlainBody(QWidget):
    """A user message's text, selectable. Up to COLLAPSE_CHARS (and COLLAPSE_LINES) it is a
    label; a longer one shows its start and a Show all button, which lays the whole text out
    STEP_CHARS per loop turn in a document (Show less folds it again).

    ``steps`` counts the loop turns the last Show all took.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("userBody")
        self._text = ""
        self._label = wrapped_label("userText")
        self._label.setTextFormat(Qt.TextFormat.PlainText)
        self._page: _PlainPage | None = None
        self._toggle: QToolButton | None = None
        self._more = QTimer(self)
        self._more.setSingleShot(True)
        self._more.setInterval(0)
        self._more.timeout.connect(self._step)
        self.steps = 0
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.setSpacing(4)
        self._column.addWidget(self._label)

    # -- queries ---------------------------------------------------------------------------------

    def text(self) -> str:
        """The whole text (whatever is shown of it)."""
        return self._text

    def shown_text(self) -> str:
        """What is on screen, as plain text."""
        if self.is_expanded() and self._page is not None:
            return self._page.document().toPlainText()
        return self._label.text()

    def is_collapsed(self) -> bool:
        return self._toggle is not None and not self._toggle.isHidden() and not self.is_expanded()

    def is_expanded(self) -> bool:
        return self._page is not None and not self._page.isHidden()

    def is_filling(self) -> bool:
        """True while Show all is still laying the text out on following loop turns."""
        return self._more.isActive()

    @property
    def label(self) -> QLabel:
        """The label showing the whole text, or a long text's start."""
        return self._label

    @property
    def page(self) -> _PlainPage | None:
        """The expanded text's document view (after the first Show all)."""
        return self._page

    @property
    def toggle(self) -> QToolButton | None:
        """Show all / Show less (made for the first long text)."""
        return self._toggle

    # -- showing ---------------------------------------------------------------------------------

    def setText(self, text: str) -> None:
        if text == self._text and self._label.text():
            return
        self._text = text
        self._fold()
        long = len(text) > COLLAPSE_CHARS or text.count("\n") >= COLLAPSE_LINES
        self._label.setText(preview(text) if long else text)
        if long:
            self._toggle_button().show()
        elif self._toggle is not None:
            self._toggle.hide()

    def expand(self) -> None:
        """Show the whole text: its first step now, the rest on following loop turns."""
        if self.is_expanded():
            return
        page = self._page_view()
        page.reset(self._text)
        self.steps = 0
        self._label.hide()
        page.show()
        self._toggle_button().setText("Show less")
        self._step()

    def collapse(self) -> None:
        self._fold()
        self._label.show()

    def _fold(self) -> None:
        self._more.stop()
        if self._page is not None:
            self._page.hide()
            self._page.reset("")
        self._label.show()
        if self._toggle is not None:
            self._toggle.setText(_show_all_text(self._text))

    def _step(self) -> None:
        page = self._page
        if page is None or page.isHidden():
            return
        page.append_step(STEP_CHARS)
        self.steps += 1
        if not page.is_complete():
            self._more.start()

    def _on_toggle(self) -> None:
        if self.is_expanded():
            self.collapse()
        else:
            self.expand()

    # -- parts -----------------------------------------------------------------------------------

    def _toggle_button(self) -> QToolButton:
        if self._toggle is None:
            button = named(QToolButton(self), "showAllButton")
            button.setAutoRaise(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setAccessibleName("Show the whole message or fold it")
            button.setText(_show_all_text(self._text))
            button.clicked.connect(self._on_toggle)
            self._column.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
            self._toggle = button
        return self._toggle

    def _page_view(self) -> _PlainPage:
        if self._page is None:
            self._page = _PlainPage(self)
            self._column.insertWidget(1, self._page)
        return self._page


def _show_all_text(text: str) -> str:
    return f"Show all \N{MIDDLE DOT} {len(text):,} characters"

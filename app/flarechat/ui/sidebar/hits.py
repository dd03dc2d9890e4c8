"""Search results as list rows: a hit's data in item roles, painted as rich text by a delegate.

Rows are painted, not built from a QLabel per hit: a label per row (rich-text parsing, a widget
styled through the list's style sheet, heightForWidth) cost several milliseconds a hit, so
fifty hits held the GUI for hundreds of milliseconds on every keystroke. Every row has the
same height (a title line and SNIPPET_LINES of snippet), so the view asks for one size and
paints only the rows on screen; a row's laid-out text is kept until the hits change, so a
repaint (hover, selection, scrolling back) does not lay it out again.
"""

from __future__ import annotations

import html
from typing import Protocol

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import QListWidgetItem, QStyledItemDelegate, QStyleOptionViewItem

from flarechat.ui.shared.item_rows import bold, draw_bare_row
from flarechat.ui.shared.theme import current_palette
from flarechat.ui.sidebar.snippets import plain_snippet

__all__ = [
    "ID_ROLE",
    "MARKS",
    "MATCH_END",
    "MATCH_START",
    "MESSAGE_ROLE",
    "SNIPPET_LINES",
    "SearchHitDelegate",
    "SearchHitLike",
    "hit_html",
    "hit_item",
    "snippet_html",
]

ID_ROLE = Qt.ItemDataRole.UserRole
MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1
_TITLE_ROLE = Qt.ItemDataRole.UserRole + 2
#: The snippet with its match markers, Markdown already taken out (the title's, for a title hit).
_SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 3
#: Markers the store puts around matched terms in a search snippet.
MATCH_START = "\x02"
MATCH_END = "\x03"
MARKS = (MATCH_START, MATCH_END)
#: Lines of snippet under the title; a 16-word snippet fills about three in the sidebar.
SNIPPET_LINES = 3
#: Inside a row, around its text (matches the list's ``::item`` padding in the sidebar sheet).
PAD_X, PAD_Y = 6, 5
#: Under a title match, where a message match has its snippet.
TITLE_MATCH_TEXT = "Matched in the title"


class SearchHitLike(Protocol):
    """What the sidebar reads from a search hit (``ChatStore.search``)."""

    @property
    def conversation_id(self) -> str: ...
    @property
    def conversation_title(self) -> str: ...
    @property
    def message_id(self) -> str | None: ...  # None: the title matched
    @property
    def snippet(self) -> str: ...


def snippet_html(snippet: str, *, highlight: str, text: str | None = None) -> str:
    """The store's marked snippet as rich text, matches highlighted (other control
    characters, which Qt would draw as boxes, are dropped)."""
    plain = "".join(c for c in snippet.replace("\n", " ") if c.isprintable() or c in MARKS)
    escaped = html.escape(plain)
    color = f" color:{text};" if text else ""
    start = f'<span style="background-color:{highlight};{color} font-weight:600;">'
    return escaped.replace(MATCH_START, start).replace(MATCH_END, "</span>")


def hit_item(hit: SearchHitLike) -> QListWidgetItem:
    """A row for ``hit``: its ids and text in roles; its plain text for screen readers."""
    marked = hit.snippet if hit.message_id is None else plain_snippet(hit.snippet)
    unmarked = marked.replace(MATCH_START, "").replace(MATCH_END, "")
    item = QListWidgetItem(unmarked if hit.message_id is None else hit.conversation_title)
    item.setData(ID_ROLE, hit.conversation_id)
    item.setData(MESSAGE_ROLE, hit.message_id)
    item.setData(_TITLE_ROLE, hit.conversation_title)
    item.setData(_SNIPPET_ROLE, marked)
    item.setData(Qt.ItemDataRole.AccessibleTextRole, f"Match in {hit.conversation_title}")
    item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, unmarked)
    return item


def hit_html(index: QModelIndex | QPersistentModelIndex) -> str:
    """A row's rich text in today's palette: the title in bold, then the snippet (for a title
    match, the marked title alone)."""
    p = current_palette()
    snippet = snippet_html(
        str(index.data(_SNIPPET_ROLE) or ""), highlight=p.match_bg, text=p.match_text
    )
    if index.data(MESSAGE_ROLE) is None:
        return f'<b>{snippet}</b><br><span style="color:{p.muted};">{TITLE_MATCH_TEXT}</span>'
    return f"<b>{html.escape(str(index.data(_TITLE_ROLE) or ''))}</b><br>{snippet}"


class SearchHitDelegate(QStyledItemDelegate):
    """Paints a hit row (the style's row background, then the rich text, clipped to the row).

    A row's laid-out text is kept while its rich text and width are the same; ``forget()``
    lets them all go (new hits).
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._documents: dict[int, tuple[str, int, QTextDocument]] = {}

    def forget(self) -> None:
        """Let the laid-out rows go (the hits changed)."""
        self._documents.clear()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        title = QFontMetrics(bold(option.font)).lineSpacing()
        lines = title + SNIPPET_LINES * option.fontMetrics.lineSpacing()
        return QSize(0, lines + 2 * PAD_Y)  # as wide as the view: it fills its width

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        styled = draw_bare_row(self, painter, option, index, panel_only=True)
        rect: QRect = styled.rect.adjusted(PAD_X, PAD_Y, -PAD_X, -PAD_Y)
        document = self._document(index, font=styled.font, width=rect.width())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, QColor(current_palette().text))
        context.clip = rect.translated(-rect.topLeft()).toRectF()
        painter.save()
        painter.translate(rect.topLeft())
        painter.setClipRect(context.clip)
        document.documentLayout().draw(painter, context)
        painter.restore()

    def _document(
        self, index: QModelIndex | QPersistentModelIndex, *, font: QFont, width: int
    ) -> QTextDocument:
        """The row's text laid out at ``width``, from the cache while its text and width hold."""
        text = hit_html(index)
        kept = self._documents.get(index.row())
        if kept is not None and kept[0] == text and kept[1] == width:
            return kept[2]
        document = QTextDocument()
        document.setDocumentMargin(0)
        document.setDefaultFont(font)
        document.setHtml(text)
        document.setTextWidth(width)
        self._documents[index.row()] = (text, width, document)
        return document

"""Helpers for the transcript tests: what a Markdown body shows, read from its document, and
how often a widget is painted."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QUrl
from PySide6.QtWidgets import QTextBrowser, QWidget

from flarechat.ui.shared.theme import monospace_family
from flarechat.ui.transcript.markdown_view import MarkdownView


def code_colours(view: MarkdownView) -> set[str]:
    """The foreground colours of the body's monospace text (highlighting adds several)."""
    colours: set[str] = set()
    mono = monospace_family()
    for document in view.documents():
        block = document.begin()
        while block.isValid():
            iterator = block.begin()
            while not iterator.atEnd():
                fragment = iterator.fragment()
                fmt = fragment.charFormat()
                families = fmt.fontFamilies() or []
                if fragment.text().strip() and mono in families:
                    colours.add(fmt.foreground().color().name())
                iterator += 1
            block = block.next()
    return colours


def is_highlighted(view: MarkdownView) -> bool:
    """Does the body hold pygments-highlighted code (keywords, names, strings coloured)?"""
    return len(code_colours(view)) >= 2


def click_link(view: MarkdownView, href: str) -> None:
    """Activate a link in the body's first page, as a click on it does."""
    page = view.findChild(QTextBrowser)
    assert page is not None
    page.anchorClicked.emit(QUrl(href))


class PaintCounter(QObject):
    """Counts the paint events a widget receives."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return super().eventFilter(watched, event)

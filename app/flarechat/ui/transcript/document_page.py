"""One page of a message body: a read-only QTextDocument as tall as its text, laid out whole
only when its width really changes."""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QPalette, QResizeEvent
from PySide6.QtWidgets import QAbstractScrollArea, QFrame, QSizePolicy, QTextBrowser, QWidget

from flarechat.ui.shared.theme import Palette

__all__ = ["DocumentPage"]


class DocumentPage(QTextBrowser):
    """Selectable rich text with links (``anchorClicked``), no scrolling of its own.

    ``layout_count`` counts whole layouts of the document (one per width it really has).
    """

    def __init__(self, palette: Palette, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markdownPage")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setUndoRedoEnabled(False)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.viewport().setAutoFillBackground(False)
        doc = self.document()
        doc.setDocumentMargin(0)
        doc.setUndoRedoEnabled(False)
        doc.documentLayout().documentSizeChanged.connect(self._on_size_changed)
        self._height = 0
        self._laid_width: int | None = None
        self.layout_count = 0
        self.apply_palette(palette)

    def apply_palette(self, colours: Palette) -> None:
        """Transparent over the message, links in the theme's colour."""
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, Qt.GlobalColor.transparent)
        palette.setColor(QPalette.ColorRole.Link, QColor(colours.link))
        self.setPalette(palette)

    # -- sizing ----------------------------------------------------------------------------------

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        margins = self.contentsMargins()
        text_width = width - margins.left() - margins.right()
        if self._laid_width is None and text_width > 0:
            # The first question is the message list's, at its width. Take that width first:
            # QTextEdit lays its document out again at the widget's own width (100 px before
            # a layout has placed it), and a page laid out once would stay that narrow.
            self.resize(width, self.height())
            self._lay_out(text_width)
        # Other widths are Qt's trials (size hints' widths, minimum widths): answered with the
        # height as laid out. A real new width comes with a resize (resizeEvent lays out).
        return self._height + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        # Layouts ask every item's size hint: answer at the width laid out, never lay out.
        margins = self.contentsMargins()
        height = self._height + margins.top() + margins.bottom()
        return QSize(max(0, math.ceil(self.document().textWidth())), height)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, 0)

    def _lay_out(self, text_width: int) -> None:
        if text_width != self._laid_width:
            self._laid_width = text_width
            self.layout_count += 1
            self.document().setTextWidth(text_width)  # lays the whole document out
        self._height = math.ceil(self.document().size().height())

    def _on_size_changed(self) -> None:
        height = math.ceil(self.document().size().height())
        self._pin_scroll()
        if height != self._height:
            self._height = height
            self.updateGeometry()

    def resizeEvent(self, event: QResizeEvent) -> None:
        # Not QTextEdit's: it lays the whole document out again on every resize, at whatever
        # width the widget has at that moment; heightForWidth already did, at the right one.
        QAbstractScrollArea.resizeEvent(self, event)
        if self.viewport().width() > 0 and self.viewport().width() != self._laid_width:
            self._lay_out(self.viewport().width())
            self.updateGeometry()
        self._pin_scroll()

    def _pin_scroll(self) -> None:
        """The page is as tall as its document: it never scrolls inside itself."""
        bar = self.verticalScrollBar()
        if bar.maximum() != 0:
            bar.setRange(0, 0)

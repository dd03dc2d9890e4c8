"""Widgets showing Markdown blocks: word-wrapped prose, code blocks, and a streaming body."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import RADIUS_PX, current_palette, mute, named
from flarechat.ui.transcript.markdown import (
    Block,
    CodeBlock,
    ProseBlock,
    highlight,
    open_link,
    plain_code_html,
    render,
    split_settled,
)

__all__ = ["CodeBlockWidget", "MarkdownView", "ProseLabel", "WrappedLabel"]

#: Widths remembered per label (resizing the window walks through many).
_HEIGHT_CACHE_SIZE = 8
#: How long the Copy button says "Copied".
COPIED_FEEDBACK_MS = 1500
#: Vertical gap between blocks (prose, code) inside a message, px.
BLOCK_SPACING_PX = 8


class WrappedLabel(QLabel):
    """A word-wrapped QLabel that remembers its height for each width.

    Qt drops layout item caches whenever a sibling changes, and QLabel lays its text out
    again for every heightForWidth call: while a reply streams, every block of the message
    would be laid out several times per frame. Text, font or margins changes forget it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self._heights: dict[int, int] = {}

    def setText(self, text: str) -> None:
        self._heights.clear()
        super().setText(text)

    def heightForWidth(self, width: int) -> int:
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) >= _HEIGHT_CACHE_SIZE:
                self._heights.clear()
            height = self._heights[width] = super().heightForWidth(width)
        return height

    def changeEvent(self, event: QEvent) -> None:
        forget = (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.ContentsRectChange)
        if event.type() in forget:
            self._heights.clear()
        super().changeEvent(event)


class ProseLabel(WrappedLabel):
    """One prose block: selectable, word-wrapped rich text; links open in the browser."""

    def __init__(self, block: ProseBlock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proseLabel")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setOpenExternalLinks(False)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.linkActivated.connect(open_link)
        self.block = block
        self.setText(block.html)

    def set_block(self, block: Block) -> None:
        assert isinstance(block, ProseBlock)
        if block != self.block:
            self.block = block
            self.setText(block.html)


class CodeBlockWidget(QFrame):
    """A code block: a header (language, Copy) over a monospace body that scrolls sideways."""

    def __init__(self, block: CodeBlock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeBlock")
        self.block = block
        self._language = mute(named(QLabel(), "codeLanguage"))
        self._copy = named(QToolButton(), "actionButton")
        self._copy.setAutoRaise(True)
        self._copy.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._copy.setAccessibleName("Copy code")
        self._copy.setToolTip("Copy this code block to the clipboard")
        self._copy.clicked.connect(self.copy_code)
        self._body = named(QLabel(), "codeBody")
        self._body.setTextFormat(Qt.TextFormat.RichText)
        self._body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._body.setContentsMargins(10, 8, 10, 8)
        self._scroll = _CodeScroll(self._body)
        self._build_layout()
        self._show_copy_label("Copy", "copy")
        self._rendered_style = ""
        self._apply(force=True)

    def _build_layout(self) -> None:
        header = self._header = named(QWidget(), "codeHeader")
        row = QHBoxLayout(header)
        row.setContentsMargins(10, 2, 4, 2)
        row.addWidget(self._language)
        row.addStretch(1)
        row.addWidget(self._copy)
        column = QVBoxLayout(self)
        column.setContentsMargins(1, 1, 1, 1)
        column.setSpacing(0)
        column.addWidget(header)
        column.addWidget(self._scroll)

    def set_block(self, block: Block) -> None:
        assert isinstance(block, CodeBlock)
        if block != self.block:
            self.block = block
            self._apply(force=True)

    def _apply(self, *, force: bool = False) -> None:
        style = current_palette().pygments_style
        if not force and style == self._rendered_style:
            return
        self._rendered_style = style
        block = self.block
        self._language.setText(block.language or "text")
        code_html = (
            highlight(block.code, block.language) if block.closed else plain_code_html(block.code)
        )
        self._body.setText(code_html)
        self._scroll.fit()

    @property
    def code_html(self) -> str:
        return self._body.text()

    def copy_code(self) -> None:
        QGuiApplication.clipboard().setText(self.block.code)
        self._show_copy_label("Copied", "check")
        QTimer.singleShot(COPIED_FEEDBACK_MS, self, lambda: self._show_copy_label("Copy", "copy"))

    def _show_copy_label(self, text: str, icon_name: str) -> None:
        self._copy.setText(text)
        self._copy.setIcon(icon(icon_name, role="muted"))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange):
            self._apply()

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        outline = QPainterPath()
        inner = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        outline.addRoundedRect(inner, RADIUS_PX, RADIUS_PX)
        painter.fillPath(outline, QColor(palette.code_bg))
        painter.save()
        painter.setClipPath(outline)
        painter.fillRect(self._header.geometry(), QColor(palette.code_header_bg))
        painter.restore()
        painter.strokePath(outline, QPen(QColor(palette.code_border), 1))
        painter.end()


class _CodeScroll(QScrollArea):
    """Horizontal-only scroller whose height always fits the whole code (plus its scrollbar)."""

    def __init__(self, body: QLabel) -> None:
        super().__init__()
        self.setObjectName("codeScroll")
        self.setWidget(body)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.viewport().setAutoFillBackground(False)
        body.setAutoFillBackground(False)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def fit(self) -> None:
        body = self.widget()
        if body is None:
            return
        body.adjustSize()
        height = body.sizeHint().height()
        if body.sizeHint().width() > self.viewport().width() > 0:
            height += self.horizontalScrollBar().sizeHint().height()
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit()


BlockWidget = ProseLabel | CodeBlockWidget


def _make_widget(block: Block) -> BlockWidget:
    return ProseLabel(block) if isinstance(block, ProseBlock) else CodeBlockWidget(block)


class MarkdownView(QWidget):
    """A message body: settled blocks rendered once, only the streaming tail re-rendered.

    ``render_count`` counts calls that rendered anything (full or tail).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(BLOCK_SPACING_PX)
        self._widgets: list[BlockWidget] = []
        self._settled_text = ""
        self._settled_count = 0
        self._text = ""
        self._streaming = False
        self._palette = current_palette()
        self.render_count = 0

    @property
    def text(self) -> str:
        return self._text

    def block_widgets(self) -> list[BlockWidget]:
        return list(self._widgets)

    def set_markdown(self, text: str) -> None:
        """Final render: the whole text at once, every closed fence highlighted."""
        self._text, self._streaming = text, False
        self._settled_text, self._settled_count = "", 0
        self._palette = current_palette()
        self._reconcile(0, render(text))
        self.render_count += 1

    def stream_markdown(self, text: str) -> None:
        """Streaming render: new settled blocks once, then the open tail."""
        if not self._streaming or not text.startswith(self._settled_text):
            self._reconcile(0, [])
            self._settled_text, self._settled_count = "", 0
        self._text, self._streaming = text, True
        settled, tail = split_settled(text)
        if len(settled) > len(self._settled_text):
            fresh = render(settled[len(self._settled_text) :])
            self._reconcile(self._settled_count, fresh)
            self._settled_count += len(fresh)
            self._settled_text = settled
        self._reconcile(self._settled_count, render(tail) if tail.strip() else [])
        self.render_count += 1

    def _reconcile(self, start: int, blocks: list[Block]) -> None:
        """Make widgets[start:] show ``blocks``, reusing widgets of the same kind."""
        for offset, block in enumerate(blocks):
            index = start + offset
            if index < len(self._widgets) and _same_kind(self._widgets[index], block):
                self._widgets[index].set_block(block)
                continue
            widget = _make_widget(block)
            if index < len(self._widgets):
                old = self._widgets[index]
                self._layout.replaceWidget(old, widget)
                _dispose(old)
                self._widgets[index] = widget
            else:
                self._layout.addWidget(widget)
                self._widgets.append(widget)
        for old in self._widgets[start + len(blocks) :]:
            self._layout.removeWidget(old)
            _dispose(old)
        del self._widgets[start + len(blocks) :]

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        themed = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange)
        if themed and current_palette() != self._palette:
            self._palette = current_palette()
            if self._streaming:
                self._reconcile(0, [])
                self._settled_text, self._settled_count = "", 0
                self.stream_markdown(self._text)
            else:
                self.set_markdown(self._text)


def _same_kind(widget: BlockWidget, block: Block) -> bool:
    return isinstance(widget, ProseLabel) == isinstance(block, ProseBlock)


def _dispose(widget: QWidget) -> None:
    widget.hide()
    widget.deleteLater()

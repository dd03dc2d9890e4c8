"""Widgets showing Markdown blocks: word-wrapped prose, code blocks, and a streaming body."""

from __future__ import annotations

import bisect

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
from flarechat.ui.shared.theme import RADIUS_PX, current_palette, monospace_family, mute, named
from flarechat.ui.transcript.markdown import (
    Block,
    CodeBlock,
    ProseBlock,
    SettledScanner,
    highlight,
    hold_back_partial_row,
    open_link,
    plain_code_html,
    render,
)

__all__ = ["CodeBlockWidget", "MarkdownView", "ProseLabel", "RawChunk", "WrappedLabel"]

#: Widths remembered per label (resizing the window walks through many).
_HEIGHT_CACHE_SIZE = 8
#: How long the Copy button says "Copied".
COPIED_FEEDBACK_MS = 1500
#: Vertical gap between blocks (prose, code) inside a message, px.
BLOCK_SPACING_PX = 8
#: A text up to this long is rendered whole when final (longer: in bounded steps).
FULL_RENDER_MAX_CHARS = 24_000
#: Settled Markdown rendered per update (markdown-it is ~0.2-1 MB/s here; more is a stall).
SETTLE_BUDGET_CHARS = 6_000
#: One block (no blank line, or one code fence) longer than this is never parsed as Markdown:
#: it is shown as plain text chunks (and a code block this long is not highlighted).
BIG_BLOCK_CHARS = 8_000
#: The open tail is re-rendered as Markdown while at most this long, else shown raw.
TAIL_RENDER_MAX_CHARS = 3_000
#: Prose HTML merged into one label, at most (fewer widgets, bounded re-layout per label).
PROSE_CHUNK_CHARS = 8_000
#: Plain text per RawChunk label (appending re-lays out one chunk at most).
RAW_CHUNK_CHARS = 4_000


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


class RawChunk(WrappedLabel):
    """A run of not-yet-rendered Markdown shown as plain text (a huge open block, or a huge
    block that Markdown would take too long to render); text is appended, never re-set whole."""

    def __init__(self, start: int, *, mono: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rawChunk")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        if mono:
            font = self.font()
            font.setFamily(monospace_family())
            self.setFont(font)
        self.start = start
        self.end = start

    def show_range(self, text: str, start: int, end: int) -> int:
        """Show text[start:end]; the characters handed to Qt."""
        if (start, end) == (self.start, self.end):
            return 0
        self.start, self.end = start, end
        self.setText(text[start:end])
        return end - start


BlockWidget = ProseLabel | CodeBlockWidget | RawChunk


def _make_widget(block: Block) -> BlockWidget:
    return ProseLabel(block) if isinstance(block, ProseBlock) else CodeBlockWidget(block)


class MarkdownView(QWidget):
    """A message body: settled blocks rendered once, only the streaming tail re-rendered.

    Work per update is bounded whatever the reply's size: the text is scanned once
    (SettledScanner), settled text is rendered at most SETTLE_BUDGET_CHARS per update (the
    rest on following loop turns), prose is merged into labels of at most PROSE_CHUNK_CHARS,
    and a tail longer than TAIL_RENDER_MAX_CHARS (one giant code block or paragraph) is shown
    as plain RawChunks that grow by appending until it closes. ``render_count`` counts
    updates; ``set_chars`` is the characters handed to Qt by the last one.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(BLOCK_SPACING_PX)
        self._widgets: list[BlockWidget] = []
        self._settled_count = 0
        self._raw: list[RawChunk] = []
        self._scanner = SettledScanner()
        self._done = 0
        self._text = ""
        self._streaming = False
        self._final = False
        self._palette = current_palette()
        self._more = QTimer(self)
        self._more.setSingleShot(True)
        self._more.setInterval(0)
        self._more.timeout.connect(self._step)
        self.render_count = 0
        self.set_chars = 0

    @property
    def text(self) -> str:
        return self._text

    def is_rendering(self) -> bool:
        """True while settled text is still being rendered on following loop turns."""
        return self._more.isActive()

    def block_widgets(self) -> list[BlockWidget]:
        return [*self._widgets, *self._raw]

    def set_markdown(self, text: str) -> None:
        """Final render, every closed fence highlighted: a reply that was streamed only
        renders its tail; a short text renders whole; a long one in bounded steps."""
        self._palette = current_palette()
        continues = self._streaming and text.startswith(self._text[: self._done])
        self._streaming = False
        if not continues and len(text) <= FULL_RENDER_MAX_CHARS:
            self._restart(keep_widgets=True)
            self._text = text
            self._reconcile(0, render(text))
            self._settled_count, self._done = len(self._widgets), len(text)
            self.render_count += 1
            return
        if not continues:
            self._restart()
        self._final = True
        self._update(text)

    def stream_markdown(self, text: str) -> None:
        """Streaming render: new settled blocks once, then the open tail."""
        if not self._streaming or self._final or not text.startswith(self._text):
            self._restart()
        self._streaming = True
        self._update(text)

    def _restart(self, *, keep_widgets: bool = False) -> None:
        """Start over; ``keep_widgets`` leaves block widgets for the next render to reuse."""
        self._more.stop()
        self._drop_raw(len(self._raw))
        if not keep_widgets:
            self._reconcile(0, [])
        self._scanner = SettledScanner()
        self._settled_count = self._done = 0
        self._text, self._final = "", False

    def _update(self, text: str) -> None:
        self._text = text
        self.set_chars = 0
        self._scanner.feed(text)
        self._step()

    def _step(self) -> None:
        end = len(self._text) if self._final else self._scanner.settled_end
        self._render_settled(end)
        self._show_tail()
        if self._done < end:
            self._more.start()
        self.render_count += 1

    # -- settled text ----------------------------------------------------------------------------

    def _render_settled(self, end: int) -> None:
        """Render text[done:end] in whole-block pieces, about SETTLE_BUDGET_CHARS at most."""
        budget = SETTLE_BUDGET_CHARS
        while self._done < end and budget > 0:
            stop = self._next_stop(end, limit=self._done + budget)
            piece = self._text[self._done : stop]
            if len(piece) > BIG_BLOCK_CHARS:
                self._append_raw_settled(piece, start=self._done)
            else:
                self._append_settled(render(piece))
            self.set_chars += len(piece)
            budget -= len(piece)
            self._done = stop

    def _next_stop(self, end: int, *, limit: int) -> int:
        """The furthest block boundary <= limit, else the first one after done (or end)."""
        boundaries = self._scanner.boundaries
        low = bisect.bisect_right(boundaries, self._done)
        high = bisect.bisect_right(boundaries, min(limit, end))
        if high > low:
            return boundaries[high - 1]
        if end <= limit:
            return end
        return boundaries[low] if low < len(boundaries) and boundaries[low] <= end else end

    def _append_settled(self, blocks: list[Block]) -> None:
        """Add rendered blocks after the settled ones; prose joins the last prose label
        until it holds PROSE_CHUNK_CHARS (thousands of labels would make layout slow)."""
        self._drop_tail()
        for block in blocks:
            last = self._widgets[-1] if self._widgets else None
            if (
                isinstance(block, ProseBlock)
                and isinstance(last, ProseLabel)
                and len(last.block.html) + len(block.html) <= PROSE_CHUNK_CHARS
            ):
                last.set_block(ProseBlock(f"{last.block.html}\n{block.html}"))
                continue
            widget = _make_widget(block)
            self._layout.addWidget(widget)
            self._widgets.append(widget)
        self._settled_count = len(self._widgets)

    def _append_raw_settled(self, piece: str, *, start: int) -> None:
        """A block too big to render as Markdown in one go: kept as plain text chunks."""
        self._drop_tail()
        mono = _fence_start(piece)
        for offset in range(0, len(piece), RAW_CHUNK_CHARS):
            chunk = RawChunk(start + offset, mono=mono)
            chunk.show_range(
                self._text, start + offset, start + min(len(piece), offset + RAW_CHUNK_CHARS)
            )
            self._layout.addWidget(chunk)
            self._widgets.append(chunk)
        self._settled_count = len(self._widgets)

    # -- the open tail ---------------------------------------------------------------------------

    def _show_tail(self) -> None:
        tail = self._text[self._done :]
        if len(tail) > TAIL_RENDER_MAX_CHARS:
            self._reconcile(self._settled_count, [])
            self._show_raw_tail()
            return
        self._drop_raw(len(self._raw))
        shown = tail if self._final else hold_back_partial_row(tail)
        blocks = render(shown) if shown.strip() else []
        self.set_chars += len(shown)
        self._reconcile(self._settled_count, blocks)

    def _show_raw_tail(self) -> None:
        """text[done:] as RawChunks of RAW_CHUNK_CHARS: earlier chunks untouched, only the
        last one (and any new ones) set."""
        start, end = self._done, len(self._text)
        gone = sum(1 for chunk in self._raw if chunk.end <= start)
        self._drop_raw(gone, front=True)
        if self._raw and self._raw[0].start < start:
            self.set_chars += self._raw[0].show_range(self._text, start, self._raw[0].end)
        if not self._raw:
            self._add_raw(start, mono=_fence_start(self._text[start : start + RAW_CHUNK_CHARS]))
        while True:
            last = self._raw[-1]
            stop = min(end, last.start + RAW_CHUNK_CHARS)
            self.set_chars += last.show_range(self._text, last.start, stop)
            if stop >= end:
                break
            self._add_raw(stop, mono=bool(last.property("mono")))

    def _add_raw(self, start: int, *, mono: bool) -> None:
        chunk = RawChunk(start, mono=mono)
        chunk.setProperty("mono", mono)
        self._layout.addWidget(chunk)
        self._raw.append(chunk)

    def _drop_raw(self, count: int, *, front: bool = True) -> None:
        doomed = self._raw[:count] if front else self._raw[-count:]
        for chunk in doomed:
            self._layout.removeWidget(chunk)
            _dispose(chunk)
        self._raw = self._raw[count:] if front else self._raw[: len(self._raw) - count]

    def _drop_tail(self) -> None:
        """Forget the tail's widgets before settled ones are added in front of them."""
        self._reconcile(self._settled_count, [])
        self._drop_raw(len(self._raw))

    def _reconcile(self, start: int, blocks: list[Block]) -> None:
        """Make widgets[start:] show ``blocks``, reusing widgets of the same kind."""
        for offset, block in enumerate(blocks):
            index = start + offset
            if index < len(self._widgets) and _same_kind(self._widgets[index], block):
                widget = self._widgets[index]
                assert not isinstance(widget, RawChunk)
                widget.set_block(block)
                continue
            widget = _make_widget(block)
            if index < len(self._widgets):
                old = self._widgets[index]
                self._layout.replaceWidget(old, widget)
                _dispose(old)
                self._widgets[index] = widget
            else:
                self._layout.insertWidget(index, widget)
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
            text, streaming = self._text, self._streaming
            self._restart(keep_widgets=not streaming)
            if streaming:
                self.stream_markdown(text)
            else:
                self.set_markdown(text)


def _fence_start(text: str) -> bool:
    """Does ``text`` start with a code fence (so its raw chunks are shown in monospace)?"""
    first = text.lstrip("\n").split("\n", 1)[0].strip()
    return first.startswith(("```", "~~~"))


def _same_kind(widget: BlockWidget, block: Block) -> bool:
    if isinstance(widget, RawChunk):
        return False
    return isinstance(widget, ProseLabel) == isinstance(block, ProseBlock)


def _dispose(widget: QWidget) -> None:
    widget.hide()
    widget.deleteLater()

"""A message body as text documents: settled Markdown appended once, the open tail
re-rendered as the document's last part."""

from __future__ import annotations

import bisect
import html
import math
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QCursor,
    QGuiApplication,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QVBoxLayout, QWidget

from flarechat.ui.shared.theme import Palette, current_palette, monospace_family
from flarechat.ui.transcript.document_page import DocumentPage
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
from flarechat.ui.transcript.paint_pacer import STEP_AFTER_FRAME_MS, ms_since_frame, step_done

__all__ = ["COPY_CODE_HREF", "MarkdownView", "blocks_html", "copy_code_index"]

#: How long the "Copied" tip shows after a code block's Copy link is clicked.
COPIED_FEEDBACK_MS = 1500
#: A text up to this long is rendered whole when final (longer: in bounded steps).
FULL_RENDER_MAX_CHARS = 24_000
#: Settled Markdown rendered per update: markdown-it, highlighting, Qt's insertHtml and layout
#: cost ~6-10 us a character of reply Markdown here, and the paint after it ~5 ms more, so this
#: keeps an update and its paint within a 16 ms frame (2,000 made the longest CPU stalls of an
#: unpaced reply ~25 ms, 6,000 ~40 ms); the rest follows on later turns.
SETTLE_BUDGET_CHARS = 1_000
#: Settled text at least this long left to render is parsed (markdown-it and pygments, pure
#: Python, ~3 ms a step) in one loop pass and inserted into the document (Qt's insertHtml and
#: layout, then the paint) in the next: no pass holds both. Less is parsed and inserted at once.
SPLIT_MIN_CHARS = 400
#: One block (no blank line, or one code fence) longer than this is never parsed as Markdown:
#: it is shown as plain text (and a code block this long is not highlighted).
BIG_BLOCK_CHARS = 8_000
#: The open tail is re-rendered as Markdown while at most this long, else shown raw.
TAIL_RENDER_MAX_CHARS = 3_000
#: A code block's Copy link: this prefix and the block's number in the document.
COPY_CODE_HREF = "flarechat:copy-code/"
#: Between a code block's language and its Copy link.
CODE_HEADER_GAP = "&nbsp;" * 4 + "·" + "&nbsp;" * 4
#: Space under a code block, px.
CODE_GAP_PX = 8
#: Tables on one page of a body before the next settled text starts a new page: few enough
#: that a change stays cheap, many enough that a table-heavy reply is few widgets.
TABLES_PER_PAGE = 128
#: Merged into the document's last block, then deleted: lets an HTML fragment's first block
#: keep its own format (QTextCursor.insertHtml would give it the block it lands in).
_JOIN_MARK = "<p>\u2063</p>"
FENCE_CHARS = "`~"


@dataclass(frozen=True, slots=True)
class _Piece:
    """Settled text[start:stop] made ready to insert: its HTML and the code of its code
    blocks; ``html`` None: a block too big for Markdown, kept as plain text."""

    start: int
    stop: int
    html: str | None
    codes: tuple[str, ...] = ()


def code_html(block: CodeBlock, *, index: int, palette: Palette) -> str:
    """A code block as two shaded document blocks: language and a Copy link over the code
    (wrapped; highlighted once its fence has closed). Blocks, not a table: every table is a
    frame, and Qt's layout visits every frame of a document on each change."""
    style = f"background-color:{palette.code_bg}; margin-bottom:{CODE_GAP_PX}px;"
    body = (
        highlight(block.code, block.language, palette=palette, block_style=style)
        if block.closed
        else plain_code_html(block.code, block_style=style)
    )
    language = html.escape(block.language or "text")
    return (
        f'<p style="background-color:{palette.code_header_bg}; margin-top:0px; '
        f'margin-bottom:0px;"><span style="color:{palette.muted};">{language}</span>'
        f'{CODE_HEADER_GAP}<a href="{COPY_CODE_HREF}{index}">Copy</a></p>{body}'
    )


def blocks_html(
    blocks: list[Block], *, palette: Palette, first_code: int = 0
) -> tuple[str, list[str]]:
    """Rendered blocks as one HTML fragment (code blocks with their Copy links numbered from
    ``first_code``), and the code of those code blocks, in order."""
    parts: list[str] = []
    codes: list[str] = []
    for block in blocks:
        if isinstance(block, ProseBlock):
            parts.append(block.html)
        else:
            parts.append(code_html(block, index=first_code + len(codes), palette=palette))
            codes.append(block.code)
    return "\n".join(parts), codes


def copy_code_index(href: str, count: int) -> int | None:
    """The code block a Copy link ``href`` names, if one of ``count`` shown; else None."""
    index = href.removeprefix(COPY_CODE_HREF)
    if href.startswith(COPY_CODE_HREF) and index.isdigit() and int(index) < count:
        return int(index)
    return None


class MarkdownView(QWidget):
    """A message body: its text in one document (a new page only after TABLES_PER_PAGE
    tables), so a reply of any length is a handful of widgets and Qt lays out only what was
    appended.

    Work per update is bounded whatever the reply's size: the text is scanned once
    (SettledScanner); settled text is rendered at most SETTLE_BUDGET_CHARS per update (the rest
    on following loop turns; a piece of SPLIT_MIN_CHARS or more is parsed on one turn and
    inserted on the next) and appended at the document's end, in one edit block; only the
    open tail (the part after the settled text) is replaced. An open code fence is rendered
    once and then grows by appended text; a tail longer than TAIL_RENDER_MAX_CHARS (one giant
    paragraph) is shown as plain text that grows the same way. Code blocks carry a Copy link
    (``code_copied`` says which one was copied).

    Work counters: ``render_count`` updates; ``set_chars`` characters handed to Qt by the
    last one; ``layout_count`` whole-document layouts (one per page and width).
    """

    code_copied = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markdownBody")
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setAttribute(Qt.WidgetAttribute.WA_StaticContents)  # grows at its bottom only
        self._column = QVBoxLayout(self)
        self._column.setContentsMargins(0, 0, 0, 0)
        self._column.setSpacing(0)
        self._palette = current_palette()
        self._pages: list[DocumentPage] = []
        self._page = self._add_page()
        self._codes: list[str] = []
        self._scanner = SettledScanner()
        self._done = 0
        self._text = ""
        self._tail_pos = 0
        self._raw_end: int | None = None  # the tail is plain text[done:raw_end]
        self._raw_format = QTextCharFormat()
        self._code_tail: tuple[int, str] | None = None  # (done, code shown) of an open fence
        self._tail_shown: str | None = None  # the Markdown the rendered tail shows
        self._parsed: _Piece | None = None  # the next settled piece, parsed in an earlier pass
        self._streaming = False
        self._final = False
        self._more = QTimer(self)
        self._more.setSingleShot(True)
        self._more.setInterval(0)
        self._more.timeout.connect(self._step)
        self.render_count = 0
        self.set_chars = 0

    # -- queries ---------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self._text

    @property
    def layout_count(self) -> int:
        return sum(page.layout_count for page in self._pages)

    def is_rendering(self) -> bool:
        """True while settled text is still being rendered on following loop turns."""
        return self._more.isActive()

    def documents(self) -> list[QTextDocument]:
        """The body's documents, in order (one unless the reply has many tables)."""
        return [page.document() for page in self._pages]

    def plain_text(self) -> str:
        """What the user reads, as plain text."""
        return "\n".join(doc.toPlainText() for doc in self.documents())

    def code_blocks(self) -> list[str]:
        """The code of each code block shown, in order (what its Copy link copies)."""
        return list(self._codes)

    def copy_code(self, index: int) -> None:
        """Put code block ``index`` on the clipboard (its Copy link)."""
        QGuiApplication.clipboard().setText(self._codes[index])
        QToolTip.showText(QCursor.pos(), "Copied", self, self.rect(), COPIED_FEEDBACK_MS)
        self.code_copied.emit(index)

    # -- pages -----------------------------------------------------------------------------------

    def _add_page(self) -> DocumentPage:
        page = DocumentPage(self._palette, self)
        page.viewport().setCursor(Qt.CursorShape.IBeamCursor)
        # A page only grows at its bottom while a reply streams: Qt then repaints just the
        # newly shown strip, not the whole visible page on every resize (~5 ms a paint).
        for grows in (page, page.viewport()):
            grows.setAttribute(Qt.WidgetAttribute.WA_StaticContents)
        page.anchorClicked.connect(self._on_anchor)
        self._column.addWidget(page)
        self._pages.append(page)
        return page

    def _doc(self) -> QTextDocument:
        return self._page.document()

    def _turn_page(self) -> None:
        """Settled text goes on a new page once this one holds TABLES_PER_PAGE tables: each
        table is a frame, and Qt's layout visits every frame of a document on each change."""
        if len(self._doc().rootFrame().childFrames()) >= TABLES_PER_PAGE:
            self._drop_tail()
            self._page = self._add_page()
            self._tail_pos = 0

    # -- rendering -------------------------------------------------------------------------------

    def set_markdown(self, text: str) -> None:
        """Final render, every closed fence highlighted: a reply that was streamed only
        renders its tail; a short text renders whole; a long one in bounded steps."""
        continues = self._streaming and text.startswith(self._text[: self._done])
        self._streaming = False
        if not continues:
            self._restart()
        if not continues and len(text) <= FULL_RENDER_MAX_CHARS:
            self._text, self._done = text, len(text)
            fragment, codes = self._blocks_html(render(text))
            self.set_chars = self._append_html(fragment)
            self._codes.extend(codes)
            self._tail_pos = self._end()
            self.render_count += 1
            return
        self._final = True
        self._update(text)

    def stream_markdown(self, text: str) -> None:
        """Streaming render: new settled blocks once, then the open tail."""
        if not self._streaming or self._final or not text.startswith(self._text):
            self._restart()
        self._streaming = True
        self._update(text)

    def _restart(self) -> None:
        self._more.stop()
        self._palette = current_palette()
        for page in self._pages[1:]:
            self._column.removeWidget(page)
            page.hide()
            page.deleteLater()
        del self._pages[1:]
        self._page = self._pages[0]
        self._page.apply_palette(self._palette)
        cursor = QTextCursor(self._doc())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.removeSelectedText()
        cursor.setBlockFormat(QTextBlockFormat())
        self._codes.clear()
        self._scanner = SettledScanner()
        self._done = self._tail_pos = 0
        self._raw_end = None
        self._code_tail = None
        self._tail_shown = None
        self._parsed = None
        self._text, self._final = "", False

    def _update(self, text: str) -> None:
        self._text = text
        self.set_chars = 0
        self._scanner.feed(text)
        if self._streaming and self._more.isActive():
            # Still catching up: the step already due renders this text too. Stepping now as
            # well would put two frames' work (a flush's and the catch-up's) in one loop pass.
            return
        self._step()

    def _step(self) -> None:
        since_frame = ms_since_frame(self)
        if self._streaming and not self._final and since_frame < STEP_AFTER_FRAME_MS:
            # A frame is painting in this loop pass: let the loop have a turn first.
            self._more.start(math.ceil(STEP_AFTER_FRAME_MS - since_frame))
            return
        end = len(self._text) if self._final else self._scanner.settled_end
        if self._parsed is None and end - self._done >= SPLIT_MIN_CHARS:
            # This pass parses the next piece; the next one inserts it (and is painted).
            self._parsed = self._parse(end, limit=self._done + SETTLE_BUDGET_CHARS)
            self._more.start(0)
            return
        # One edit block: Qt lays the changed end out once, not after each insert or removal.
        edit = QTextCursor(self._doc())
        edit.beginEditBlock()
        try:
            self._render_settled(end)
            if self._done >= end:  # behind, the tail would be thrown away by the next step
                self._show_tail()
        finally:
            edit.endEditBlock()
        if self._done < end:
            self._more.start(0)
        self.render_count += 1
        step_done()

    # -- settled text ----------------------------------------------------------------------------

    def _render_settled(self, end: int) -> None:
        """Append text[done:end] in whole-block pieces, about SETTLE_BUDGET_CHARS at most; or
        only the piece an earlier pass parsed (parsing more here would rejoin the two)."""
        parsed = self._take_parsed()
        if parsed is not None:
            self._insert(parsed)
            return
        budget = SETTLE_BUDGET_CHARS
        while self._done < end and budget > 0:
            piece = self._parse(end, limit=self._done + budget)
            self._insert(piece)
            budget -= piece.stop - piece.start

    def _insert(self, piece: _Piece) -> None:
        if piece.html is None:
            self._settle_raw(piece.stop)
        else:
            self._drop_tail()
            self.set_chars += self._append_html(piece.html)
            self._codes.extend(piece.codes)
        self._done = piece.stop
        self._tail_pos = self._end()
        self._turn_page()

    def _parse(self, end: int, *, limit: int) -> _Piece:
        """The settled text from done up to the block boundary _next_stop picks, as HTML."""
        stop = self._next_stop(end, limit=limit)
        if stop - self._done > BIG_BLOCK_CHARS:
            return _Piece(self._done, stop, None)
        fragment, codes = self._blocks_html(render(self._text[self._done : stop]))
        return _Piece(self._done, stop, fragment, tuple(codes))

    def _take_parsed(self) -> _Piece | None:
        """The piece parsed by an earlier pass, if it starts where the document ends."""
        piece, self._parsed = self._parsed, None
        return piece if piece is not None and piece.start == self._done else None

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

    def _settle_raw(self, stop: int) -> None:
        """A block too big to render as Markdown: kept as the plain text the tail showed."""
        if self._raw_end is None:
            self._drop_tail()
            self._raw_end = self._done
            self.set_chars += self._append_plain_block(self._text[self._done : stop])
        elif stop > self._raw_end:
            self.set_chars += self._append_plain(self._text[self._raw_end : stop])
        else:
            self._trim_raw(stop)
        self._raw_end = None

    # -- the open tail ---------------------------------------------------------------------------

    def _show_tail(self) -> None:
        tail = self._text[self._done :]
        if self._show_code_tail(tail):
            return
        if len(tail) > TAIL_RENDER_MAX_CHARS:
            self._show_raw_tail()
            return
        shown = tail if self._final else hold_back_partial_row(tail)
        if shown == self._tail_shown:
            return  # e.g. a table row still arriving: held back, so nothing new to show
        self._drop_tail()
        if shown.strip():
            self._show_tail_html(shown)
            self._tail_shown = shown

    def _show_code_tail(self, tail: str) -> bool:
        """A tail that is one open code fence: rendered once (language, Copy, plain code),
        then new code is appended as text, never parsed or re-rendered. False otherwise."""
        if self._final or not self._scanner.in_fence:
            return False
        code = _open_fence_code(tail)
        if code is None or not code:
            return False
        shown = self._code_tail
        if shown is not None and shown[0] == self._done and code.startswith(shown[1]):
            self.set_chars += self._append_plain(code[len(shown[1]) :], keep_format=True)
        else:
            self._show_tail_html(tail)
        self._code_tail = (self._done, code)
        return True

    def _show_tail_html(self, shown: str) -> None:
        self._drop_tail()
        fragment, _codes = self._blocks_html(render(shown))  # may still change: not copyable
        self.set_chars += self._append_html(fragment)

    def _show_raw_tail(self) -> None:
        """text[done:] as plain text: only what arrived since the last update is appended."""
        if self._raw_end is None:
            self._drop_tail()
            self._raw_end = self._done
            self.set_chars += self._append_plain_block(self._text[self._done :])
        else:
            self.set_chars += self._append_plain(self._text[self._raw_end :])
        self._raw_end = len(self._text)

    def _drop_tail(self) -> None:
        """Delete the document after the settled part (the tail's last rendering)."""
        self._raw_end = None
        self._code_tail = None
        self._tail_shown = None
        if self._end() <= self._tail_pos:
            return
        cursor = QTextCursor(self._doc())
        cursor.setPosition(self._tail_pos)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()

    def _trim_raw(self, stop: int) -> None:
        """Cut the raw tail back to text[..stop] (never happens while text only grows)."""
        self._drop_tail()
        self.set_chars += self._append_plain_block(self._text[self._done : stop])

    # -- the document ----------------------------------------------------------------------------

    def _end(self) -> int:
        return self._doc().characterCount() - 1

    def _blocks_html(self, blocks: list[Block]) -> tuple[str, list[str]]:
        """The blocks as one HTML fragment, and the code of its code blocks (their Copy links
        number them on from the code blocks already shown)."""
        return blocks_html(blocks, palette=self._palette, first_code=len(self._codes))

    def _append_html(self, fragment: str) -> int:
        """Insert HTML at the document's end as blocks of their own; the characters handed
        to Qt."""
        if not fragment:
            return 0
        cursor = QTextCursor(self._doc())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if self._doc().isEmpty():
            cursor.insertHtml(fragment)
            return len(fragment)
        start = cursor.position()
        cursor.insertHtml(_JOIN_MARK + fragment)
        cursor.setPosition(start)
        cursor.setPosition(start + 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        return len(fragment)

    def _append_plain_block(self, text: str) -> int:
        """Start a new block at the end holding ``text`` as plain text (monospace if it is
        a code fence)."""
        cursor = QTextCursor(self._doc())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if not self._doc().isEmpty():
            cursor.insertBlock(QTextBlockFormat(), self._plain_format(mono=False))
        mono = _fence_start(text)
        self._raw_format = self._plain_format(mono=mono)
        cursor.insertText(text, self._raw_format)
        return len(text)

    def _append_plain(self, text: str, *, keep_format: bool = False) -> int:
        """Append ``text`` to the last block (``keep_format``: in the format of the text
        before it, e.g. an open code block's)."""
        if not text:
            return 0
        cursor = QTextCursor(self._doc())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, cursor.charFormat() if keep_format else self._raw_format)
        return len(text)

    def _plain_format(self, *, mono: bool) -> QTextCharFormat:
        fmt = QTextCharFormat()
        if mono:
            fmt.setFontFamilies([monospace_family()])
            fmt.setFontFixedPitch(True)
        return fmt

    # -- links and theme -------------------------------------------------------------------------

    def _on_anchor(self, url: QUrl) -> None:
        href = url.toString()
        if href.startswith(COPY_CODE_HREF):
            if (index := copy_code_index(href, len(self._codes))) is not None:
                self.copy_code(index)
            return
        open_link(href)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        themed = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.StyleChange)
        if themed and current_palette() != self._palette:
            text, streaming = self._text, self._streaming
            self._restart()
            if streaming:
                self.stream_markdown(text)
            else:
                self.set_markdown(text)


def _fence_start(text: str) -> bool:
    """Does ``text`` start with a code fence (so it is shown in monospace)?"""
    first = text.lstrip("\n").split("\n", 1)[0].strip()
    return first.startswith(("```", "~~~"))


def _open_fence_code(tail: str) -> str | None:
    """The code of ``tail`` if it is nothing but one open code fence (as a rendered CodeBlock
    shows it: no final newline), else None."""
    body = tail.lstrip("\n")
    first, newline, code = body.partition("\n")
    if not newline or not first.strip().startswith(("```", "~~~")) or first != first.lstrip():
        return None
    last = code.rsplit("\n", 1)[-1]
    if last.strip() and set(last.strip()) <= set(FENCE_CHARS):
        code = code[: len(code) - len(last)]  # may be the closing fence, still arriving
    return code[:-1] if code.endswith("\n") else code

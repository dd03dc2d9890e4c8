"""Markdown for the transcript: blocks, Qt rich-text HTML, highlighting, the settled/tail split.

The widgets that show these blocks live in flarechat.ui.transcript.markdown_view.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from flarechat.ui.shared.theme import Palette, current_palette, monospace_family

# markdown-it and pygments are imported on first use, not at start-up (first paint, issue #12).
if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = [
    "HIGHLIGHT_MAX_CHARS",
    "PARSE_STATS",
    "Block",
    "CodeBlock",
    "ParseStats",
    "ProseBlock",
    "SettledScanner",
    "highlight",
    "hold_back_partial_row",
    "open_link",
    "plain_code_html",
    "render",
    "split_settled",
]

#: Link schemes handed to the desktop (everything else is ignored: no file:, no javascript:).
SAFE_LINK_SCHEMES = frozenset({"http", "https", "mailto"})
#: Rendered documents remembered (history paging re-creates widgets for the same text).
RENDER_CACHE_SIZE = 512
#: Space below paragraphs, lists and tables inside one prose block, px.
PARAGRAPH_GAP_PX = 8
#: Space above headings (they start a new section), px.
HEADING_GAP_PX = 14
#: Cell padding of Markdown tables, px.
TABLE_CELL_PADDING_PX = 5
#: Width of a Markdown table's grid lines (the spacing between its cells), px.
GRID_LINE_PX = 1
#: Heading sizes (CSS keywords Qt understands), h1..h3; deeper levels use the body size.
HEADING_SIZES = ("x-large", "large", "medium")

#: Code longer than this stays plain (pygments on a huge block would freeze the window).
HIGHLIGHT_MAX_CHARS = 40_000
#: Pads inline code inside its background; non-breaking (a hair space is a break opportunity,
#: so the background's edge could wrap away from the code) and in every font.
_INLINE_CODE_PAD = "&nbsp;"

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
_TABLE_DELIMITER = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")


@dataclass(slots=True)
class ParseStats:
    """Work counter for markdown-it: calls and characters parsed (tests bound per-flush work)."""

    calls: int = 0
    chars: int = 0


#: Counts every markdown-it parse (cache hits parse nothing and are not counted).
PARSE_STATS = ParseStats()


@dataclass(frozen=True, slots=True)
class ProseBlock:
    """Everything between code fences, as Qt rich-text HTML."""

    html: str


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A top-level fenced (or indented) code block; ``closed`` is False while it still streams."""

    language: str
    code: str
    closed: bool


Block = ProseBlock | CodeBlock


def split_settled(text: str) -> tuple[str, str]:
    """Split ``text`` into (settled, tail): settled ends at the last blank line outside a code
    fence or right after a closed fence; appending text never changes the settled part."""
    settled_end = 0
    fence: tuple[str, int] | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # the last line may still grow: always tail
        pos += len(line)
        stripped = line.strip()
        if fence is None:
            fence = _fence_opener(stripped)
            if fence is None and not stripped:
                settled_end = pos
        elif _closes_fence(stripped, fence):
            fence = None
            settled_end = pos
    return text[:settled_end], text[settled_end:]


class SettledScanner:
    """split_settled for a growing text, scanning each complete line once.

    ``boundaries`` lists every settled end found so far (ascending): each run between two of
    them is whole Markdown blocks, so it can be rendered on its own.
    """

    def __init__(self) -> None:
        self.boundaries: list[int] = []
        self._scanned = 0
        self._fence: tuple[str, int] | None = None

    @property
    def settled_end(self) -> int:
        return self.boundaries[-1] if self.boundaries else 0

    @property
    def in_fence(self) -> bool:
        return self._fence is not None

    def feed(self, text: str) -> None:
        """Scan the complete lines of ``text`` not scanned yet (``text`` only ever grows)."""
        pos = self._scanned
        while True:
            newline = text.find("\n", pos)
            if newline < 0:
                break
            stripped = text[pos:newline].strip()
            pos = newline + 1
            if self._fence is None:
                self._fence = _fence_opener(stripped)
                if self._fence is None and not stripped and pos != self.settled_end:
                    self.boundaries.append(pos)
            elif _closes_fence(stripped, self._fence):
                self._fence = None
                self.boundaries.append(pos)
        self._scanned = pos


def hold_back_partial_row(tail: str) -> str:
    """The streaming tail without a half-received table: Markdown would show it as a paragraph
    with literal pipes. Held back: the unfinished last line if it starts with "|", and trailing
    "|" lines that have no delimiter row under them yet (a header waiting for its "|---|")."""
    lines = tail.split("\n")
    ended = lines[-1] == ""  # the tail ends with a newline: every line is complete
    if ended:
        lines.pop()
    cut = len(lines)
    while cut > 0 and lines[cut - 1].lstrip().startswith("|"):
        cut -= 1
    if cut == len(lines):
        return tail
    complete = lines[cut:] if ended else lines[cut:-1]
    if any(_TABLE_DELIMITER.fullmatch(row.strip()) for row in complete):
        keep = len(lines) if ended else len(lines) - 1  # a table: its unfinished row waits
    else:
        keep = cut
    return "".join(f"{line}\n" for line in lines[:keep])


def _fence_opener(stripped: str) -> tuple[str, int] | None:
    match = _FENCE_OPEN.fullmatch(stripped)
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)[0], len(match.group(1))


def _closes_fence(stripped: str, fence: tuple[str, int]) -> bool:
    char, length = fence
    return len(stripped) >= length and stripped == char * len(stripped)


def render(markdown: str, *, palette: Palette | None = None) -> list[Block]:
    """Markdown -> blocks: prose as Qt rich-text HTML, top-level code fences as CodeBlocks."""
    palette = palette or current_palette()
    return list(_render_cached(markdown, palette=palette, mono=monospace_family()))


@functools.lru_cache(maxsize=RENDER_CACHE_SIZE)
def _render_cached(markdown: str, *, palette: Palette, mono: str) -> tuple[Block, ...]:
    md = _parser(palette, mono)
    PARSE_STATS.calls += 1
    PARSE_STATS.chars += len(markdown)
    tokens = md.parse(markdown)
    lines = markdown.splitlines()
    blocks: list[Block] = []
    prose: list[Token] = []
    for token in tokens:
        if token.level == 0 and token.type in ("fence", "code_block"):
            _flush_prose(md, prose, into=blocks)
            prose = []
            blocks.append(_code_block(token, lines))
        else:
            prose.append(token)
    _flush_prose(md, prose, into=blocks)
    return tuple(blocks)


def _flush_prose(md: MarkdownIt, tokens: list[Token], *, into: list[Block]) -> None:
    if tokens:
        _style_tokens(tokens, palette=md.options["flarechat_palette"])
        text = md.renderer.render(tokens, md.options, {}).strip()
        if text:
            into.append(ProseBlock(text))


def _code_block(token: Token, lines: Sequence[str]) -> CodeBlock:
    code = token.content[:-1] if token.content.endswith("\n") else token.content
    if token.type == "code_block":
        return CodeBlock(language="", code=code, closed=True)
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    closed = False
    if token.map is not None and token.map[1] - 1 > token.map[0]:
        last = lines[token.map[1] - 1] if token.map[1] - 1 < len(lines) else ""
        closed = _closes_fence(last.strip(), (token.markup[0], len(token.markup)))
    return CodeBlock(language=language, code=code, closed=closed)


@functools.cache
def _parser(palette: Palette, mono: str) -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.options["flarechat_palette"] = palette
    md.options["flarechat_mono"] = mono
    md.add_render_rule("code_inline", _render_code_inline)
    md.add_render_rule("fence", _render_nested_code)
    md.add_render_rule("code_block", _render_nested_code)
    md.add_render_rule("image", _render_image)
    return md


def _style_tokens(tokens: list[Token], *, palette: Palette) -> None:
    """Attributes Qt's rich text understands (it has no stylesheet for these fragments)."""
    gap = f"margin-top:0px; margin-bottom:{PARAGRAPH_GAP_PX}px;"
    for token in tokens:
        if token.nesting != 1:
            continue
        if token.type in ("paragraph_open", "bullet_list_open", "ordered_list_open"):
            token.attrSet("style", gap)
        elif token.type == "heading_open":
            level = int(token.tag[1])
            size = HEADING_SIZES[level - 1] if level <= len(HEADING_SIZES) else "medium"
            token.attrSet(
                "style",
                f"margin-top:{HEADING_GAP_PX}px; margin-bottom:6px; font-size:{size};",
            )
        elif token.type == "table_open":
            _style_table(token, palette)
        elif token.type in ("th_open", "td_open"):
            _style_cell(token, palette)
        elif token.type == "blockquote_open":
            token.attrSet("style", f"color:{palette.muted}; margin-left:12px; {gap}")


def _style_table(token: Token, palette: Palette) -> None:
    """A 1 px grid: the table is filled with the border colour and its cells (GRID_LINE_PX
    apart, and from its edge) with the text's background, so the gaps are the lines.

    Not collapsed borders (``border-collapse:collapse``), which look the same: Qt paints
    those by looking up every cell's neighbours on each paint, more than half of painting a
    screen of a reply with tables (a frame of a streaming reply, a step of a scroll).
    """
    token.attrSet("border", "0")
    token.attrSet("cellspacing", str(GRID_LINE_PX))
    token.attrSet("cellpadding", str(TABLE_CELL_PADDING_PX))
    token.attrSet("bgcolor", palette.border)
    token.attrSet("style", f"margin-top:{PARAGRAPH_GAP_PX}px; margin-bottom:{PARAGRAPH_GAP_PX}px;")


def _style_cell(token: Token, palette: Palette) -> None:
    style = str(token.attrGet("style") or "")
    token.attrs.pop("style", None)
    if "text-align:" in style:
        token.attrSet("align", style.split("text-align:", 1)[1].strip(" ;"))
    token.attrSet("bgcolor", palette.alt_base if token.type == "th_open" else palette.base)


def _render_code_inline(
    _self: object, tokens: Sequence[Token], idx: int, options: dict[str, object], _env: object
) -> str:
    palette = options["flarechat_palette"]
    assert isinstance(palette, Palette)
    code = html.escape(tokens[idx].content).replace(" ", "&nbsp;")
    return (
        f"<code style=\"font-family:'{options['flarechat_mono']}'; "
        f'background-color:{palette.inline_code_bg};">{_INLINE_CODE_PAD}{code}{_INLINE_CODE_PAD}'
        "</code>"
    )


def _render_nested_code(
    _self: object, tokens: Sequence[Token], idx: int, options: dict[str, object], _env: object
) -> str:
    palette = options["flarechat_palette"]
    assert isinstance(palette, Palette)
    code = html.escape(tokens[idx].content.rstrip("\n"))
    return (
        f"<pre style=\"font-family:'{options['flarechat_mono']}'; "
        f"background-color:{palette.code_bg}; white-space:pre-wrap; "
        f'margin-bottom:{PARAGRAPH_GAP_PX}px;">{code}</pre>'
    )


def _render_image(
    _self: object, tokens: Sequence[Token], idx: int, _options: object, _env: object
) -> str:
    # Qt would try to load the image from disk; show a link instead of fetching anything.
    token = tokens[idx]
    src = html.escape(str(token.attrGet("src") or ""), quote=True)
    alt = html.escape(token.content or "image")
    return f'<a href="{src}">[image: {alt}]</a>'


def highlight(
    code: str, language: str, *, palette: Palette | None = None, block_style: str = ""
) -> str:
    """``code`` as Qt rich-text HTML with pygments' inline-styled spans (theme's style);
    ``block_style`` is added to the ``<pre>``'s style (background, margins)."""
    if len(code) > HIGHLIGHT_MAX_CHARS:
        return plain_code_html(code, block_style=block_style)
    style = (palette or current_palette()).pygments_style
    return _highlight_cached(code, language, style=style, block_style=block_style)


@functools.lru_cache(maxsize=RENDER_CACHE_SIZE)
def _highlight_cached(code: str, language: str, *, style: str, block_style: str) -> str:
    # Pygments ships no type hints (types-Pygments is not a dependency).
    from pygments import highlight as pygments_highlight

    body = pygments_highlight(code, _lexer(language.lower()), _formatter(style))
    return _pre(body.rstrip("\n"), block_style=block_style)


@functools.cache
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language) if language else TextLexer()
    except ClassNotFound:
        return TextLexer()


@functools.cache
def _formatter(style: str) -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(noclasses=True, nowrap=True, style=style)


def plain_code_html(code: str, *, block_style: str = "") -> str:
    """Unhighlighted code (an open fence while streaming) in the same monospace ``<pre>``."""
    return _pre(html.escape(code), block_style=block_style)


def _pre(body: str, *, block_style: str = "") -> str:
    return (
        f"<pre style=\"margin:0px; white-space:pre-wrap; font-family:'{monospace_family()}'; "
        f'{block_style}">{body}</pre>'
    )


def open_link(url: str) -> bool:
    """Open ``url`` in the user's browser if its scheme is safe; True if handed over."""
    qurl = QUrl(url)
    if qurl.scheme().lower() not in SAFE_LINK_SCHEMES:
        return False
    return QDesktopServices.openUrl(qurl)

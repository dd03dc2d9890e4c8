"""Find-in-page marks inside one message: where a query occurs in its shown text, and those
places painted like a browser's find (every occurrence, the current one stronger)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit

from flarechat.core.find_text import find_ranges
from flarechat.ui.shared.theme import Palette

__all__ = ["find_ranges", "mark_page", "marked_html", "marked_ranges"]

#: The first code point that takes two UTF-16 units (Qt counts document positions in those).
_ASTRAL = 0x10000


def _utf16(text: str, ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Python string indices as Qt document positions (astral characters count twice)."""
    if not text or max(text) < chr(_ASTRAL):
        return list(ranges)
    units = [0]
    for char in text:
        units.append(units[-1] + (2 if ord(char) >= _ASTRAL else 1))
    return [(units[start], units[end]) for start, end in ranges]


def _format(background: str, foreground: str) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setBackground(QBrush(QColor(background)))
    fmt.setForeground(QBrush(QColor(foreground)))
    return fmt


def mark_page(
    page: QTextEdit, query: str, *, palette: Palette, current: int | None
) -> list[QTextCursor]:
    """Mark every occurrence of ``query`` in ``page`` with extra selections (the document is
    not changed); occurrence ``current`` (an index, or None) in the accent colour. The marked
    cursors, in order ([] clears the page's marks)."""
    text = page.document().toPlainText()
    cursors: list[QTextCursor] = []
    selections: list[QTextEdit.ExtraSelection] = []
    strong = _format(palette.accent, palette.accent_text)
    weak = _format(palette.match_bg, palette.match_text)
    for index, (start, end) in enumerate(_utf16(text, find_ranges(text, query))):
        cursor = QTextCursor(page.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        selection.format = strong if index == current else weak
        selections.append(selection)
        cursors.append(cursor)
    page.setExtraSelections(selections)
    return cursors


def marked_ranges(page: QTextEdit) -> list[tuple[int, int]]:
    """The [start, end) document positions of a page's marks, in order."""
    marks = page.extraSelections()
    return [(mark.cursor.selectionStart(), mark.cursor.selectionEnd()) for mark in marks]


def marked_html(
    text: str, ranges: Sequence[tuple[int, int]], *, palette: Palette, current: int | None = 0
) -> str:
    """Plain ``text`` as rich text with ``ranges`` marked, range ``current`` (an index, or
    None) in the accent colour (for a plain-text label, which has no extra selections)."""
    parts: list[str] = []
    done = 0
    for index, (start, end) in enumerate(ranges):
        background, color = (
            (palette.accent, palette.accent_text)
            if index == current
            else (palette.match_bg, palette.match_text)
        )
        parts.append(html.escape(text[done:start]))
        style = f"background-color:{background}; color:{color};"
        parts.append(f'<span style="{style}">{html.escape(text[start:end])}</span>')
        done = end
    parts.append(html.escape(text[done:]))
    return f'<span style="white-space:pre-wrap">{"".join(parts)}</span>'

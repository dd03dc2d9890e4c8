"""Find-in-page marks inside one message: where a query occurs in its shown text, and those
places painted like a browser's find (every occurrence, the current one stronger)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtGui import QBrush, QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit

from flarechat.ui.shared.theme import Palette

__all__ = ["find_ranges", "mark_page", "marked_html", "marked_ranges"]

#: The first code point that takes two UTF-16 units (Qt counts document positions in those).
_ASTRAL = 0x10000


def _folded(text: str) -> str:
    """``text`` lower-cased one character at a time, so every index keeps its meaning (a few
    characters, such as "İ", lower-case to two)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _occurrences(haystack: str, needle: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    start = haystack.find(needle)
    while start >= 0 and needle:
        found.append((start, start + len(needle)))
        start = haystack.find(needle, start + len(needle))
    return found


def find_ranges(text: str, query: str) -> list[tuple[int, int]]:
    """Where ``query`` occurs in ``text``, case-insensitively, as sorted [start, end) ranges.

    The whole query where it occurs as typed; otherwise each of its words (search matches a
    message holding all the words anywhere, so they are marked one by one).
    """
    words = query.split()
    if not words:
        return []
    haystack = _folded(text)
    phrase = _occurrences(haystack, _folded(" ".join(words)))
    if phrase or len(words) == 1:
        return phrase
    ranges = sorted({r for word in words for r in _occurrences(haystack, _folded(word))})
    merged: list[tuple[int, int]] = []
    for start, end in ranges:  # overlapping words ("ab", "b") make one mark
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


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


def marked_html(text: str, ranges: Sequence[tuple[int, int]], *, palette: Palette) -> str:
    """Plain ``text`` as rich text with ``ranges`` marked, the first in the accent colour (for
    a plain-text label, which has no extra selections)."""
    parts: list[str] = []
    done = 0
    for index, (start, end) in enumerate(ranges):
        background, color = (
            (palette.accent, palette.accent_text)
            if index == 0
            else (palette.match_bg, palette.match_text)
        )
        parts.append(html.escape(text[done:start]))
        style = f"background-color:{background}; color:{color};"
        parts.append(f'<span style="{style}">{html.escape(text[start:end])}</span>')
        done = end
    parts.append(html.escape(text[done:]))
    return f'<span style="white-space:pre-wrap">{"".join(parts)}</span>'

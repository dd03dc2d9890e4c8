"""Where a find query occurs in a message's text: the ranges find marks and counts (Qt-free,
so the controller counts matches and the message view marks them by one rule)."""

from __future__ import annotations

__all__ = ["find_ranges"]


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

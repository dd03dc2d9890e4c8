"""Search snippets as plain text: the Markdown syntax a reply was written in, taken out.

A snippet is a window of about a dozen words cut from a message, so it rarely holds whole
Markdown constructs; a parser would misread the fragments. These patterns remove the marks a
reader sees as noise (``##``, backticks, ``**``, list bullets, link targets) and keep the words,
and the store's match markers, in place.
"""

from __future__ import annotations

import re

__all__ = ["plain_snippet"]

#: Start-of-line marks: headings, quotes, bullets, numbered items, fences (with a language).
_LINE_START = re.compile(r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\d{1,3}[.)][ \t]+)")
_FENCE = re.compile(r"(?:```|~~~)[\w+-]*")
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)?")
#: Emphasis runs (** __ ~~) anywhere, and single * or _ only at a word's edge (snake_case stays).
_STRONG = re.compile(r"\*\*|__|~~")
_SINGLE_EMPHASIS = re.compile(r"(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
_BACKTICKS = re.compile(r"`+")
_SPACES = re.compile(r"[ \t]*\n[ \t\n]*|[ \t]{2,}")


def plain_snippet(snippet: str) -> str:
    """``"## Setup\\nRun `pip install` **now**"`` -> ``"Setup Run pip install now"``."""
    text = _FENCE.sub(" ", snippet)
    text = _LINE_START.sub("", text)
    text = _IMAGE_OR_LINK.sub(r"\1", text)
    text = _BACKTICKS.sub("", text)
    text = _STRONG.sub("", text)
    text = _SINGLE_EMPHASIS.sub("", text)
    return _SPACES.sub(" ", text).strip()

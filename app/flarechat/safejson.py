"""The one JSON reader for untrusted text: a server's bodies and chunks, and the user's files.

``json.loads`` trusts its input three ways that a hostile server or file turns into a crash:
nesting (100,000 ``[`` raise ``RecursionError``, which no ``except ValueError`` catches, and a
shallower value still recurses in whatever walks it next), size, and text (a lone surrogate
escape such as ``"\\ud800"`` decodes to a string that UTF-8 cannot encode, so it cannot be
stored, printed or exported). :func:`loads` bounds the first two before parsing and turns a lone
surrogate escape into U+FFFD, so every value it returns can be walked, stored and printed.

Every failure is a :class:`JSONInputError`, a :class:`json.JSONDecodeError` (so a
``ValueError``) with a line and column; nothing else escapes.

Top level and standard library only, like ``gateway_limits``: the api, settings, core and the
emulator (which imports nothing else of the app) all read untrusted JSON through it.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "JSONInputError",
    "JSONTooDeep",
    "JSONTooLarge",
    "JSONValueUnreadable",
    "ended_early",
    "loads",
    "scrub_surrogates",
]

#: Deeper than any schema, tool call or envelope a real server or user writes, and shallow
#: enough that a value can be walked recursively (redaction, jsonschema, the store's codec).
MAX_DEPTH = 64
#: Characters (bytes for bytes input) of one document: far above any real reply or file.
MAX_CHARS = 32 * 1024 * 1024

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SPACES = frozenset(" \t\n\r") | {""}
# A string (taken whole, so brackets inside it do not count) or one bracket.
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPENERS = frozenset("[{")
# An escaped backslash (taken whole so "\\\\ud800" stays text), a valid surrogate pair, or a
# lone surrogate escape: only the last is replaced.
_SURROGATE_ESCAPE = re.compile(
    r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT_ESCAPE = "\\ufffd"
#: What a cut may leave of a literal or a number where a value was expected (see ended_early).
_LITERALS = ("true", "false", "null")
_NUMBER_PART = re.compile(r"-?\d*\.?\d*(?:[eE][-+]?\d*)?")
_NUMBER_FIRST = frozenset("-0123456789")


class JSONInputError(json.JSONDecodeError):
    """Text that is not JSON this app will read: malformed, too deep, too large, a number
    Python will not convert. ``msg``, ``lineno`` and ``colno`` say what and where."""


class JSONTooDeep(JSONInputError):
    """Arrays and objects nested deeper than the limit (``pos`` is the first one too deep)."""


class JSONTooLarge(JSONInputError):
    """Text longer than the limit: refused before any of it is parsed."""


class JSONValueUnreadable(JSONInputError):
    """Well-formed JSON holding a value Python will not convert (a number of 10,000 digits)."""


def loads(
    text: str | bytes | bytearray,
    *,
    max_depth: int = MAX_DEPTH,
    max_chars: int = MAX_CHARS,
) -> Any:
    """``text`` parsed as one JSON document, as ``json.loads`` would, within the limits.

    Raises :class:`JSONInputError` (and nothing else) for text deeper than ``max_depth``
    levels of arrays and objects, longer than ``max_chars``, or not valid JSON. Bytes are read
    as UTF-8, an undecodable byte becoming U+FFFD. A lone surrogate escape reads as U+FFFD.
    """
    if len(text) > max_chars:
        raise JSONTooLarge(f"longer than {max_chars:,} characters", "", 0)
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8", errors="replace").removeprefix("\ufeff")
    _check_depth(text, max_depth)
    if "\\u" in text:
        text = _SURROGATE_ESCAPE.sub(_keep_pairs, text)
    try:
        start = _WHITESPACE.match(text, 0).end() if text[:1] in _SPACES else 0  # type: ignore[union-attr]
        value, end = _DECODER.raw_decode(text, start)
    except JSONInputError:
        raise
    except json.JSONDecodeError as error:
        raise JSONInputError(error.msg, text, error.pos) from None
    except (ValueError, RecursionError) as error:  # digits beyond int's limit; a C-stack guard
        raise JSONValueUnreadable(f"holds a value that cannot be read ({error})", text, 0) from None
    if end != len(text):
        end = _WHITESPACE.match(text, end).end()  # type: ignore[union-attr]
        if end != len(text):
            raise JSONInputError("Extra data", text, end)
    return value


def ended_early(error: json.JSONDecodeError) -> bool:
    """Whether the text is JSON cut off (the start of a document, not all of it): it failed
    where the text ends, in a string never closed, or in a literal or number the end cut
    short (``tr``, ``12.``). Empty text is not a cut-off document."""
    text = error.doc.rstrip(" \t\n\r")
    if not text or isinstance(error, JSONTooDeep | JSONTooLarge | JSONValueUnreadable):
        return False
    rest = text[error.pos :]
    number = rest[:1] in _NUMBER_FIRST or text[error.pos - 1 : error.pos].isdigit()
    return (
        not rest
        or error.msg.startswith("Unterminated string")
        or any(literal.startswith(rest) for literal in _LITERALS)
        or (number and _NUMBER_PART.fullmatch(rest) is not None)
    )


def scrub_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\N{REPLACEMENT CHARACTER}", text)
    return text


def _check_depth(text: str, max_depth: int) -> None:
    # The common case in two C calls: too few brackets to be too deep.
    if text.count("[") + text.count("{") <= max_depth:
        return
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if len(token) != 1:
            continue
        if token in _OPENERS:
            depth += 1
            if depth > max_depth:
                raise JSONTooDeep(f"nested more than {max_depth} levels deep", text, match.start())
        elif depth:
            depth -= 1


def _keep_pairs(match: re.Match[str]) -> str:
    escape = match.group()
    return escape if len(escape) != 6 else _REPLACEMENT_ESCAPE

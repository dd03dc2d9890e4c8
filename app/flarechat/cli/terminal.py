"""What reaches the terminal: control characters a server sent are never printed raw.

A model name, a reply or an error message holding ``ESC ]0;…BEL`` or ``ESC [2J`` retitles or
clears the user's terminal (and C1 controls such as ``\\x9b`` do the same on terminals that read
them); a lone ``\\r`` overwrites what was printed. Every write of the command line goes through
:class:`TerminalStream`, which drops them; the command line's own styling (dim reasoning) is
written with :meth:`TerminalStream.write_styled`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TextIO

__all__ = ["TerminalStream", "printable"]

# C0 but tab and newline, DEL, C1, and the bidirectional overrides and isolates (they reorder
# what is shown, so a name can pass for another).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without the control characters a terminal would act on."""
    if text.isascii() and text.isprintable():  # the common case in two C calls
        return text
    return _CONTROL.sub("", text)


class TerminalStream:
    """A text stream (stdout, stderr) whose writes are :func:`printable`."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(printable(text))

    def writelines(self, lines: Iterable[str]) -> None:
        self.stream.writelines(printable(line) for line in lines)

    def write_styled(self, before: str, text: str, after: str) -> None:
        """``text`` (made printable) between the command line's own escape sequences."""
        self.stream.write(before + printable(text) + after)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

"""The system-prompt library: saved system prompts the composer offers by name."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SavedPrompt", "prompt_title"]

#: A prompt saved without a name is called by its first words, this many characters at most.
TITLE_CHARS = 40
_ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"


@dataclass(frozen=True, slots=True)
class SavedPrompt:
    """A saved system prompt; ``auto_name``: its name is made from its first words (and
    follows its text when that is edited) until the user names it."""

    id: str
    name: str
    text: str
    auto_name: bool = False


def prompt_title(text: str) -> str:
    """A name for a prompt from its first line: "You are a terse reviewer…"."""
    line = " ".join(text.split())
    if len(line) <= TITLE_CHARS:
        return line or "Untitled prompt"
    return line[: TITLE_CHARS - 1].rstrip() + _ELLIPSIS

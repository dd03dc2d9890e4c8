"""Inline reasoning: split a leading ``<think>…</think>`` block out of streamed text."""

from __future__ import annotations

from enum import Enum

from flarechat.api.events import ReasoningDelta, TextDelta

__all__ = ["CLOSE_TAG", "OPEN_TAG", "ThinkSplitter"]

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


class _State(Enum):
    START = "start"  # nothing visible yet: a <think> may still open
    THINKING = "thinking"
    ANSWER = "answer"


class ThinkSplitter:
    """An incremental state machine; tags may arrive split across chunks, even mid-tag.

    Only a ``<think>`` that opens the reply (after optional whitespace) starts a reasoning block,
    as DeepSeek-R1-style models emit it; a ``<think>`` later in the answer (say, inside a code
    sample) is ordinary text. Text that could still be the start of a tag is held back until
    the next chunk (or :meth:`flush`) decides.
    """

    def __init__(self) -> None:
        self._state = _State.START
        self._pending = ""

    def feed(self, text: str) -> list[TextDelta | ReasoningDelta]:
        self._pending += text
        out: list[TextDelta | ReasoningDelta] = []
        while self._pending and self._step(out):
            pass
        return out

    @property
    def unclosed(self) -> bool:
        """A ``<think>`` opened and no ``</think>`` has come (yet): all of it was reasoning."""
        return self._state is _State.THINKING

    def flush(self) -> list[TextDelta | ReasoningDelta]:
        """Release whatever is held back (the reply ended)."""
        text, self._pending = self._pending, ""
        if not text:
            return []
        if self._state is _State.THINKING:
            return [ReasoningDelta(text)]
        return [TextDelta(text)]

    def _step(self, out: list[TextDelta | ReasoningDelta]) -> bool:
        """Consume what can be decided now; return True to keep going."""
        if self._state is _State.ANSWER:
            out.append(TextDelta(self._pending))
            self._pending = ""
            return False
        if self._state is _State.START:
            return self._step_start()
        return self._step_thinking(out)

    def _step_start(self) -> bool:
        stripped = self._pending.lstrip()
        if stripped.startswith(OPEN_TAG):
            self._state = _State.THINKING
            self._pending = stripped[len(OPEN_TAG) :]
            return True
        if OPEN_TAG.startswith(stripped):  # blank, or a partial "<thi": wait for more
            return False
        self._state = _State.ANSWER
        return True

    def _step_thinking(self, out: list[TextDelta | ReasoningDelta]) -> bool:
        end = self._pending.find(CLOSE_TAG)
        if end >= 0:
            if end:
                out.append(ReasoningDelta(self._pending[:end]))
            self._pending = self._pending[end + len(CLOSE_TAG) :]
            self._state = _State.ANSWER
            return True
        keep = _partial_tag_suffix(self._pending, CLOSE_TAG)
        cut = len(self._pending) - keep
        if cut:
            out.append(ReasoningDelta(self._pending[:cut]))
        self._pending = self._pending[cut:]
        return False


def _partial_tag_suffix(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that is a proper start of ``tag``."""
    for size in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0

"""WrappedLabel: the word-wrapped label that remembers its height per width (message headers,
meta lines, reasoning; kept apart from the Markdown body so the first frame loads no Markdown)."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["WrappedLabel"]

#: Widths remembered per label (resizing the window walks through many).
_HEIGHT_CACHE_SIZE = 8


class WrappedLabel(QLabel):
    """A word-wrapped QLabel that remembers its height for each width.

    Qt drops layout item caches whenever a sibling changes, and QLabel lays its text out
    again for every heightForWidth call. Text, font or margins changes forget it.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self._heights: dict[int, int] = {}

    def setText(self, text: str) -> None:
        self._heights.clear()
        super().setText(text)

    def heightForWidth(self, width: int) -> int:
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) >= _HEIGHT_CACHE_SIZE:
                self._heights.clear()
            height = self._heights[width] = super().heightForWidth(width)
        return height

    def changeEvent(self, event: QEvent) -> None:
        forget = (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.ContentsRectChange)
        if event.type() in forget:
            self._heights.clear()
        super().changeEvent(event)

"""Caps on what one message renders, never on what is stored: a text part shows at most
``RENDERED_CHARS`` characters and a list at most ``PAGE_ITEMS`` items, with a button for the rest.

A server decides how much text a reply holds (5 MB of reasoning, a tool call with 1 MB of
arguments, 10,000 calls); a label lays its whole text out again whenever it changes, so what
is rendered is bounded here and the work per update with it. "Show all" opens the whole text
in :class:`TextViewer`, a plain-text view that lays out only the lines on screen, with Copy all
for the exact text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.theme import mute, named

__all__ = [
    "PAGE_ITEMS",
    "RENDERED_CHARS",
    "VIEWER_LINE_CHARS",
    "ShowAllButton",
    "TextViewer",
    "excerpt",
    "viewer_lines",
]

#: The most characters of one text part a message lays out (~2 ms of layout per change).
RENDERED_CHARS = 10_000
#: The most items of a list (tool call cards) a message shows at first, and per "Show more".
PAGE_ITEMS = 20
#: The viewer breaks longer lines: one unbroken megabyte takes a text view ~40 s to wrap.
VIEWER_LINE_CHARS = 1_000
#: A line end this close to the cap ends the excerpt there instead (no half line at the end).
_LINE_SLACK = 500
VIEWER_SIZE = (760, 560)


def excerpt(text: str, limit: int = RENDERED_CHARS) -> str:
    """The start of ``text`` a message renders: all of it up to ``limit`` characters, else
    the first ``limit`` (cut at a line end just before, when there is one)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", limit - _LINE_SLACK, limit)
    return text[: cut if cut > 0 else limit]


def viewer_lines(text: str, width: int = VIEWER_LINE_CHARS) -> str:
    """``text`` with every line longer than ``width`` broken into lines of ``width``."""
    lines = text.split("\n")
    if all(len(line) <= width for line in lines):
        return text
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
        else:
            out.extend(line[i : i + width] for i in range(0, len(line), width))
    return "\n".join(out)


class TextViewer(QDialog):
    """The whole of a text too long to render in a message, read-only, with Copy all."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = text
        self.setWindowTitle(title)
        self.setAccessibleName(title)
        self.resize(*VIEWER_SIZE)
        self.view = named(QPlainTextEdit(self), "textViewer")
        self.view.setReadOnly(True)
        self.view.setAccessibleName(title)
        self.view.setPlainText(viewer_lines(text))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton("Copy all", self)
        self.copy_button.setAccessibleName("Copy all of the text")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy_all)
        column = QVBoxLayout(self)
        column.addWidget(self.view, 1)
        column.addWidget(buttons)

    def set_font(self, font: QFont) -> None:
        self.view.setFont(font)

    def copy_all(self) -> None:
        """The exact text (the view's long lines are broken only for showing)."""
        QGuiApplication.clipboard().setText(self.text)


class ShowAllButton(QToolButton):
    """ "Show all 5,000,000 characters" under a capped text part; hidden while all of it shows.

    ``title`` names the viewer it opens; ``font`` (optional) gives the viewer's font, read when
    it opens (a monospace part's viewer is monospace too).
    """

    def __init__(
        self,
        title: str,
        *,
        font: Callable[[], QFont] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("showAllButton")
        mute(self)
        self.setAutoRaise(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._title, self._font = title, font
        self._text = ""
        self.viewer: TextViewer | None = None
        self.clicked.connect(self.open_viewer)
        self.hide()

    @property
    def full_text(self) -> str:
        return self._text

    def set_text(self, text: str, *, shown: int) -> None:
        """Remember ``text`` (its first ``shown`` characters are on screen): cheap, for every
        streamed update."""
        self._text = text
        hidden = len(text) - shown
        self.setVisible(hidden > 0)
        if hidden > 0:
            label = f"Show all {len(text):,} characters ({hidden:,} not shown)"
            if label != self.text():
                self.setText(label)
                self.setAccessibleName(f"{self._title}: {label}")
                self.setToolTip("Open the whole text in a viewer, with Copy all")

    def open_viewer(self) -> TextViewer:
        if self.viewer is not None:
            self.viewer.close()
            self.viewer.deleteLater()
        self.viewer = TextViewer(self._title, self._text, self.window())
        if self._font is not None:
            self.viewer.set_font(self._font())
        self.viewer.show()
        return self.viewer

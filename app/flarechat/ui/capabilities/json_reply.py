"""A reply asked for as JSON: shown pretty-printed in a monospace panel, under a mark that says
whether it parsed and followed the schema (and how it came, e.g. without streaming)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from flarechat.ui.shared.theme import current_palette, fill_rounded, monospace_family, mute, named

if TYPE_CHECKING:  # core.session is the chat engine's, built after the first paint (issue #12)
    from flarechat.core.session.structured import JsonVerdict

__all__ = ["JSON_SCHEMA", "JsonReplyView", "mark_text"]

JSON_SCHEMA = "json_schema"
VALID_MARK = "\N{CHECK MARK} JSON"
FOLLOWS_SCHEMA = "follows the schema"
NOT_JSON = "\N{WARNING SIGN} Not valid JSON"
NOT_FOLLOWING = "\N{WARNING SIGN} JSON, but not what the schema asks"
NOT_OBJECT = "\N{WARNING SIGN} JSON, but not an object"


def mark_text(verdict: JsonVerdict, *, kind: str) -> str:
    """The one-line verdict above the JSON: what is right, or what is wrong and where."""
    if not verdict.parses:
        return f"{NOT_JSON} \N{EM DASH} {verdict.problem}" if verdict.problem else NOT_JSON
    if not verdict.valid:
        return f"{NOT_FOLLOWING} \N{EM DASH} {verdict.problem}"
    if kind != JSON_SCHEMA and not isinstance(verdict.parsed, dict):
        return NOT_OBJECT  # JSON mode promises an object
    return f"{VALID_MARK} \N{MIDDLE DOT} {FOLLOWS_SCHEMA}" if kind == JSON_SCHEMA else VALID_MARK


class JsonReplyView(QFrame):
    """The verdict mark, the reply's note (if any) and the JSON, pretty and selectable."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("jsonReply")
        self._ok = True
        self.mark = named(QLabel(self), "jsonMark")
        self.mark.setWordWrap(True)
        self.mark.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = mute(named(QLabel(self), "jsonNote"))
        self.note.setWordWrap(True)
        self.text = named(QLabel(self), "jsonText")
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAccessibleName("JSON reply")
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 8, 10, 8)
        column.setSpacing(4)
        column.addWidget(self.mark)
        column.addWidget(self.note)
        column.addWidget(self.text)
        self._apply_font()

    @property
    def ok(self) -> bool:
        """Whether the reply parsed and followed what was asked (the mark is not a warning)."""
        return self._ok

    def set_verdict(self, verdict: JsonVerdict, *, kind: str, note: str = "") -> None:
        mark = mark_text(verdict, kind=kind)
        self._ok = not mark.startswith("\N{WARNING SIGN}")
        self.mark.setText(mark)
        self.mark.setAccessibleName(mark)
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self.text.setText(verdict.pretty)
        self._colour_mark()

    def _colour_mark(self) -> None:
        palette = current_palette()
        colour = palette.muted if self._ok else palette.danger
        self.mark.setStyleSheet(f"color: {colour}")

    def _apply_font(self) -> None:
        font = QFont(self.font())
        font.setFamily(monospace_family())
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._apply_font()
        elif event.type() == QEvent.Type.PaletteChange:
            self._colour_mark()

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        painter = QPainter(self)
        border = palette.code_border if self._ok else palette.danger
        fill_rounded(painter, QRectF(self.rect()), fill=palette.code_bg, border=border)
        painter.end()
        super().paintEvent(event)

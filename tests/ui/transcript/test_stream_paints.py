"""A streaming body repaints only what its new text shows, not the whole visible page."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QScrollArea, QWidget
from pytestqt.qtbot import QtBot
from transcript_helpers import PaintCounter

from flarechat.ui.transcript.markdown_view import MarkdownView

PARAGRAPH = "A settled paragraph {n} with enough words to wrap once or twice in the page.\n\n"
#: Well over the scroll area's height, so text appended at the end is out of sight.
SCREENS_OF_TEXT = 60


def paragraphs(first: int, count: int) -> str:
    return "".join(PARAGRAPH.format(n=n) for n in range(first, first + count))


def test_text_appended_out_of_sight_repaints_nothing_on_screen(qtbot: QtBot) -> None:
    """A page grows at its bottom: with the reader scrolled up, a streamed update must not
    repaint the visible page (Qt repaints a resized widget whole unless told its contents
    stay put)."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    view = MarkdownView()
    area.setWidget(view)
    area.resize(600, 200)
    qtbot.addWidget(area)
    area.show()
    qtbot.waitExposed(area)
    text = paragraphs(0, SCREENS_OF_TEXT)
    view.stream_markdown(text)
    qtbot.waitUntil(lambda: not view.is_rendering())
    QApplication.processEvents()
    assert area.verticalScrollBar().value() == 0  # the reader is at the top
    (page,) = view.findChildren(QWidget, "markdownPage")
    painted = PaintCounter(page.viewport())  # type: ignore[attr-defined]
    for batch in range(3):
        text += paragraphs(SCREENS_OF_TEXT + batch * 5, 5)
        view.stream_markdown(text)
        qtbot.waitUntil(lambda: not view.is_rendering())
        QApplication.processEvents()
    assert view.plain_text().count("settled paragraph") == SCREENS_OF_TEXT + 15
    assert painted.count == 0

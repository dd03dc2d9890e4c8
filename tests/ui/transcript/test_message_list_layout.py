"""Opening a conversation lays each message body out once, at the column's real width: not
first at Qt's default width (640 px) and again when placed, nor again when the scroll bar
appears after the first page (issue #12, switching.jump_4000_back)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.document_page import DocumentPage
from flarechat.ui.transcript.transcript import TranscriptView

HISTORY = 400
SHORT = 2
BODY = "A reply long enough to wrap over several lines at any width. " * 8
CODE = "\n\n```python\nprint('hello')\n```\n\nAnd a closing paragraph after the code."


def numbered(position: int) -> MessageData:
    """User and assistant turns; the replies are Markdown bodies of a few blocks."""
    if position % 2 == 0:
        return MessageData(id=f"m{position}", role="user", content=f"Question {position}")
    return MessageData(id=f"m{position}", role="assistant", content=BODY + CODE)


def history(count: int, *, focus: str | None = None) -> PathView:
    return PathView([f"m{i}" for i in range(count)], numbered, focus=focus)


def pages(transcript: TranscriptView) -> list[DocumentPage]:
    return transcript.findChildren(DocumentPage)


@pytest.mark.parametrize("focus", [None, "m41"])
def test_each_body_is_laid_out_once_when_a_long_history_opens(
    qtbot: QtBot, transcript: TranscriptView, focus: str | None
) -> None:
    transcript.set_history(history(SHORT))  # the scroll bar hidden: the column is wider
    qtbot.waitUntil(lambda: not transcript.is_loading())
    before = set(pages(transcript))
    transcript.set_history(history(HISTORY, focus=focus))
    qtbot.waitUntil(lambda: not transcript.is_loading())
    opened = [page for page in pages(transcript) if page not in before]
    assert opened
    assert [page.layout_count for page in opened] == [1] * len(opened)
    widths = [(page.document().textWidth(), page.viewport().width()) for page in opened]
    assert all(laid == shown for laid, shown in widths), widths  # not stuck at 100 px


def test_a_short_history_keeps_the_scroll_bar_hidden(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(history(SHORT))
    qtbot.waitUntil(lambda: not transcript.is_loading())
    policy = transcript.scroll_area.verticalScrollBarPolicy()
    assert policy == Qt.ScrollBarPolicy.ScrollBarAsNeeded
    assert not transcript.scroll_area.verticalScrollBar().isVisible()


def tall_last(count: int) -> PathView:
    """A history whose newest reply is most of a viewport tall."""
    last = count - 1

    def make(position: int) -> MessageData:
        if position == last:
            return MessageData(id=f"m{position}", role="assistant", content=BODY * 3)
        return numbered(position)

    return PathView([f"m{i}" for i in range(count)], make)


def test_a_long_history_whose_last_reply_nearly_fills_the_viewport_can_be_scrolled_up(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    """Its page was counted at the wider width a body was first laid out at (or before the
    scroll bar narrowed the column): filling in stopped at the last reply alone, with no
    scroll range for the wheel to page in the rest."""
    transcript.set_history(history(SHORT))
    qtbot.waitUntil(lambda: not transcript.is_loading())
    transcript.set_history(tall_last(HISTORY))
    qtbot.waitUntil(lambda: not transcript.is_loading())
    bar = transcript.scroll_area.verticalScrollBar()
    assert bar.maximum() > 0
    assert transcript.view_for(f"m{HISTORY - 2}") is not None

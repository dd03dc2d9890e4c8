"""Following a streaming reply, the transcript scrolls by copying what stays on screen and
repaints only the strip the reply grew by: not the whole viewport on every update (~150
times a long reply; issue #12, streaming.p99_stall)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.transcript import FLUSH_INTERVAL_MS, TranscriptView

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
#: Enough history to fill the viewport, so the reply scrolls it from its first line.
HISTORY = 12
PARAGRAPH = "Streamed paragraph {n} has enough words to wrap over two lines of the column.\n\n"
#: The last paragraph is the open tail: re-rendered (so repainted) when the next comes.
TAIL_PX = 60
#: Flushes measured, after WARM_FLUSHES (the reply's first updates also change its header).
WARM_FLUSHES, FLUSHES = 5, 4
#: While a reply streams, paints are paced, one per frame (FLUSH_INTERVAL_MS): after a flush
#: the test waits this long, so every paint that flush causes has come.
SETTLE_MS = 3 * FLUSH_INTERVAL_MS


class PaintRegions(QObject):
    """The heights of the regions a widget's paint events repaint."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.heights: list[int] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.heights.append(event.region().boundingRect().height())  # type: ignore[attr-defined]
        return super().eventFilter(watched, event)


def numbered(position: int) -> MessageData:
    role = "user" if position % 2 == 0 else "assistant"
    text = f"Message {position}: " + "words that wrap over a few lines. " * 12
    return MessageData(id=f"m{position}", role=role, content=text)


def test_following_a_reply_repaints_only_the_strip_it_grew_by(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(PathView([f"m{i}" for i in range(HISTORY)], numbered))
    transcript.begin_reply("a1", model=MODEL)
    for n in range(WARM_FLUSHES):
        transcript.append_text("a1", PARAGRAPH.format(n=n))
        transcript.flush()
        qtbot.wait(SETTLE_MS)
    bar = transcript.scroll_area.verticalScrollBar()
    assert bar.maximum() > 0
    content = transcript.scroll_area.widget()
    assert content is not None
    viewport = transcript.scroll_area.viewport()
    for n in range(WARM_FLUSHES, WARM_FLUSHES + FLUSHES):
        behind, painted = PaintRegions(viewport), PaintRegions(content)
        before = bar.maximum()
        transcript.append_text("a1", PARAGRAPH.format(n=n))
        transcript.flush()
        qtbot.wait(SETTLE_MS)
        grown = bar.maximum() - before
        assert grown > 0
        assert bar.value() == bar.maximum()  # still following the reply
        assert behind.heights == []  # the content covers the viewport: nothing behind it shows
        assert painted.heights, "the new text is painted"
        # The strip scrolled in, and the open paragraph before it (re-rendered as the tail).
        assert max(painted.heights) <= grown + TAIL_PX, (painted.heights, grown)
        behind.deleteLater()
        painted.deleteLater()

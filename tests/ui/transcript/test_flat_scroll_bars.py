"""The chat's panes have flat scroll bars: a rounded handle in the theme's colour on the pane's
background, no arrow buttons. The transcript's repaints with every frame of a streaming reply,
and Fusion's bar cost ~2 ms a paint against ~0.03 ms for these (issue #12, streaming)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QApplication, QScrollBar
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.shared.theme import DARK, LIGHT, SCROLL_BAR_PX, Palette, apply_theme
from flarechat.ui.sidebar.sidebar import Sidebar
from flarechat.ui.transcript.transcript import TranscriptView
from support.widgets import shown

#: Enough messages for the transcript's bar to have a handle well short of its length.
MESSAGES = 40
CONVERSATIONS = 80


def _colours(bar: QScrollBar, rows: int | None = None) -> set[str]:
    """The colours of the bar's pixels (of its first ``rows`` pixel rows: where Fusion draws
    its up arrow)."""
    image = bar.grab().toImage()
    height = image.height() if rows is None else rows
    return {image.pixelColor(x, y).name() for x in range(image.width()) for y in range(height)}


def _is_flat(bar: QScrollBar, palette: Palette, groove: str) -> bool:
    """The handle in the theme's colour, and nothing but the groove above it (no arrow)."""
    return (
        palette.scroll_handle in _colours(bar)
        and bar.width() == SCROLL_BAR_PX
        and _colours(bar, rows=SCROLL_BAR_PX) <= {groove, palette.scroll_handle}
    )


def test_the_transcripts_bar_is_flat_in_both_themes(
    qtbot: QtBot,
    themed_app: QApplication,
    transcript: TranscriptView,
    make: Callable[[int], MessageData],
) -> None:
    transcript.set_history(PathView([f"m{i}" for i in range(MESSAGES)], make))
    bar = transcript.scroll_area.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.isVisible() and bar.maximum() > 0)
    bar.setValue(bar.maximum() // 2)  # the handle away from the ends
    assert _is_flat(bar, LIGHT, LIGHT.base)
    apply_theme(themed_app, "dark")  # Qt posts the palette change to every widget
    try:
        qtbot.waitUntil(lambda: _is_flat(bar, DARK, DARK.base))
        assert LIGHT.scroll_handle not in _colours(bar)
    finally:
        apply_theme(themed_app, "light")
    qtbot.waitUntil(lambda: _is_flat(bar, LIGHT, LIGHT.base))


def test_the_conversation_lists_bar_is_flat_like_the_transcripts(
    qtbot: QtBot, themed_app: QApplication
) -> None:
    sidebar = shown(qtbot, Sidebar(), size=(260, 400))
    for n in range(CONVERSATIONS):
        sidebar.conversations.addItem(f"Conversation {n}")
    bar = sidebar.conversations.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.isVisible() and bar.maximum() > 0)
    bar.setValue(bar.maximum() // 2)
    assert _is_flat(bar, LIGHT, LIGHT.window)

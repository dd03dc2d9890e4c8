"""TranscriptView.scroll_to: opening a long conversation at any message, within the widget bound."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.message_view import MessageData, MessageView
from flarechat.ui.transcript.transcript import (
    MAX_LIVE_MESSAGES,
    PAGE_SIZE,
    TranscriptView,
)

HISTORY = 5000


def conversation(count: int) -> list[MessageData]:
    return [
        MessageData(id=f"m{i}", role="user", content=f"Question {i}")
        if i % 2 == 0
        else MessageData(id=f"m{i}", role="assistant", content=f"Answer {i}\n\nMore words.")
        for i in range(count)
    ]


def settle(qtbot: QtBot, transcript: TranscriptView) -> None:
    qtbot.waitUntil(lambda: not transcript.is_loading())


def top_in_viewport(transcript: TranscriptView, message_id: str) -> int | None:
    """Where the message's widget starts in the viewport (None: no widget, or not on screen)."""
    view = transcript.view_for(message_id)
    if view is None or not view.isVisible():
        return None
    viewport = transcript.scroll_area.viewport()
    top = view.mapTo(viewport, view.rect().topLeft()).y()
    return top if 0 <= top < viewport.height() else None


def widgets_alive(transcript: TranscriptView) -> int:
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return len([v for v in transcript.findChildren(MessageView) if not v.isHidden()])


def test_a_message_far_back_is_loaded_shown_and_marked(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(HISTORY))
    settle(qtbot, transcript)
    assert transcript.view_for("m7") is None  # only the last page has widgets
    assert transcript.scroll_to("m7", query="WORDS")
    assert top_in_viewport(transcript, "m7") is not None  # at once, before the page fills in
    settle(qtbot, transcript)
    top = top_in_viewport(transcript, "m7")
    assert top is not None
    assert top < transcript.scroll_area.viewport().height() // 2  # near the top, not clipped
    assert transcript.view_for("m9") is not None  # the page below it was filled in
    assert transcript.view_for(f"m{HISTORY - 1}") is None  # the old window was dropped
    bar = transcript.scroll_area.verticalScrollBar()
    for _ in range(PAGE_SIZE):  # scrolling up pages in the messages above it
        bar.setValue(0)
        settle(qtbot, transcript)
    assert transcript.view_for("m0") is not None
    assert transcript.live_count <= PAGE_SIZE + 1
    assert widgets_alive(transcript) == transcript.live_count
    view = transcript.view_for("m7")
    assert view is not None
    words = view.body.plain_text().index("words")
    assert transcript.marked("m7") == [(words, words + len("words"))]  # still, after the load
    assert transcript.findChildren(QWidget, "flashFrame") == []  # no whole-message frame
    assert not transcript.is_at_bottom()
    assert transcript.jump_button.isVisible()


def test_marks_move_to_the_next_message_and_stay_until_cleared(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(60))
    settle(qtbot, transcript)
    assert transcript.scroll_to("m55", query="answer")
    assert transcript.marked("m55") == [(0, len("answer"))]
    qtbot.wait(100)  # no timer takes them away
    assert transcript.marked("m55") == [(0, len("answer"))]
    assert transcript.scroll_to("m57", query="answer")
    assert transcript.marked("m55") == []  # one message marked at a time
    assert transcript.marked("m57") == [(0, len("answer"))]
    transcript.clear_matches()
    assert transcript.marked("m57") == []


def test_scrolled_to_without_a_query_nothing_is_marked(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(60))
    settle(qtbot, transcript)
    assert transcript.scroll_to("m55")
    assert transcript.marked("m55") == []
    assert transcript.findChildren(QWidget, "flashFrame") == []


def test_jumps_back_and_forth_keep_the_widget_count_bounded(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(HISTORY))
    settle(qtbot, transcript)
    for target in ("m2000", "m12", "m4990", "m2001", "m3500", "m0", "m4999"):
        assert transcript.scroll_to(target)
        settle(qtbot, transcript)
        assert top_in_viewport(transcript, target) is not None, target
        assert transcript.live_count <= MAX_LIVE_MESSAGES
        assert widgets_alive(transcript) == transcript.live_count


def test_a_message_already_on_screen_is_scrolled_to_without_a_jump(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(HISTORY))
    settle(qtbot, transcript)
    last_page = [m.id for m in transcript.messages() if transcript.view_for(m.id) is not None]
    target = last_page[1]
    kept = transcript.view_for(target)
    assert transcript.scroll_to(target)
    settle(qtbot, transcript)
    assert transcript.view_for(target) is kept  # same widget: the window did not move
    assert top_in_viewport(transcript, target) is not None


def test_after_a_jump_scrolling_pages_in_and_jump_to_latest_returns(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(HISTORY))
    settle(qtbot, transcript)
    transcript.scroll_to("m3000")
    settle(qtbot, transcript)
    bar = transcript.scroll_area.verticalScrollBar()
    for _ in range(PAGE_SIZE):  # the user scrolls down: later messages page in
        bar.setValue(bar.maximum())
        settle(qtbot, transcript)
        if transcript.view_for("m3021") is not None:
            break
    assert transcript.view_for("m3021") is not None
    assert transcript.live_count <= MAX_LIVE_MESSAGES
    transcript.scroll_to_latest()
    settle(qtbot, transcript)
    assert top_in_viewport(transcript, f"m{HISTORY - 1}") is not None
    assert transcript.is_at_bottom()


def test_an_unknown_message_is_refused(qtbot: QtBot, transcript: TranscriptView) -> None:
    transcript.set_history(conversation(10))
    settle(qtbot, transcript)
    assert not transcript.scroll_to("not-here")
    assert transcript.is_at_bottom()

"""A long history opens with data and widgets for the pages shown only (PathView)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.transcript import MAX_LIVE_MESSAGES, PAGE_SIZE, TranscriptView

HISTORY = 5000


def make(position: int) -> MessageData:
    if position % 2 == 0:
        return MessageData(id=f"m{position}", role="user", content=f"Question {position}")
    return MessageData(id=f"m{position}", role="assistant", content=f"Answer {position}\n\nMore.")


def history(count: int = HISTORY) -> PathView:
    return PathView([f"m{i}" for i in range(count)], make)


def settle(qtbot: QtBot, transcript: TranscriptView) -> None:
    qtbot.waitUntil(lambda: not transcript.is_loading())


def test_path_view_reads_like_a_list_and_makes_data_once() -> None:
    path = history(10)
    assert len(path) == 10
    assert path.made_count == 0
    assert path.id_at(3) == "m3"
    assert path.position_of("m7") == 7
    assert path.position_of("elsewhere") is None
    assert path[-1] == make(9)
    assert path[-1] is path.data_at(9)  # kept, not made again
    assert path.made_count == 1
    tail = path[8:]
    assert isinstance(tail, PathView)
    assert [m.id for m in tail] == ["m8", "m9"]
    assert path.made_count == 2
    assert path == [make(i) for i in range(10)]
    assert PathView.empty() == []


def test_opening_a_long_history_makes_data_for_the_last_page_only(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    path = history()
    transcript.set_history(path)
    settle(qtbot, transcript)
    assert transcript.message_count() == HISTORY
    assert 0 < path.made_count <= PAGE_SIZE
    assert path.made_count == transcript.live_count


def test_a_jump_far_back_makes_data_around_the_message_only(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    path = history()
    transcript.set_history(path)
    settle(qtbot, transcript)
    before = path.made_count
    assert transcript.scroll_to("m1000")
    settle(qtbot, transcript)
    assert transcript.view_for("m1000") is not None
    assert path.made_count - before <= PAGE_SIZE + 1
    assert transcript.live_count <= MAX_LIVE_MESSAGES

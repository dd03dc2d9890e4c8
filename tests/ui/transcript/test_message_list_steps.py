"""How many loop turns (and so window paints) filling the message column takes: an open's
first page is made in the call that asks for it, and pages that come in while the user
scrolls are made one widget per turn, so no turn outlasts a frame (issue #12, switching:
open_5000, jump_4000_back, wheel_to_top_stall)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript import message_list
from flarechat.ui.transcript.message_list import PAGE_STEP, SCROLL_STEP, MessageList
from flarechat.ui.transcript.message_view import MessageView
from support.widgets import shown

HISTORY = 400
#: Long enough for any machine to make a page's widgets in it: the test counts turns.
GENEROUS_BUDGET_S = 60.0
#: The column's size in the test that counts its own widgets (the conftest's column's).
COLUMN_SIZE = (720, 480)


def live_views(column: MessageList) -> list[MessageView]:
    return [v for mid in column.ids() if (v := column.view_for(mid)) is not None]


def history(make: Callable[[int], MessageData], *, focus: str | None = None) -> PathView:
    return PathView([f"m{i}" for i in range(HISTORY)], make, focus=focus)


@pytest.fixture
def generous(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(message_list, "COVER_BUDGET_S", GENEROUS_BUDGET_S)


@pytest.mark.usefixtures("generous")
def test_an_opened_conversation_covers_the_viewport_before_the_next_loop_turn(
    make: Callable[[int], MessageData], column: MessageList
) -> None:
    """Its newest message alone used to be painted first, then the page, a turn later."""
    column.set_items(history(make))
    assert not column.is_loading()
    views = live_views(column)
    assert len(views) > PAGE_STEP  # more than one turn's worth of the old steps
    bar = column.scroll_area.verticalScrollBar()
    assert views[0].y() <= bar.value()  # covered to the top
    assert views[-1].data.id == f"m{HISTORY - 1}"
    assert column.is_at_bottom()


@pytest.mark.usefixtures("generous")
def test_a_far_message_and_the_viewport_below_it_come_in_the_same_call(
    make: Callable[[int], MessageData], qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(history(make))
    qtbot.waitUntil(lambda: not column.is_loading())
    column.scroll_to("m100")
    assert not column.is_loading()
    views = live_views(column)
    bar = column.scroll_area.verticalScrollBar()
    bottom = bar.value() + column.scroll_area.viewport().height()
    assert views[-1].geometry().bottom() >= bottom


def test_scrolling_up_pages_in_one_widget_per_later_loop_turn(
    make: Callable[[int], MessageData], qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(history(make))
    qtbot.waitUntil(lambda: not column.is_loading())
    bar = column.scroll_area.verticalScrollBar()
    before = column.live_count
    bar.setValue(0)  # near the top: the page above is asked for
    assert column.is_loading()
    assert column.live_count == before  # not in the scroll's own turn: it paints already
    made = [column.live_count]
    timer = column.findChild(QTimer, "transcriptPageFillTimer")
    assert timer is not None
    timer.timeout.connect(lambda: made.append(column.live_count))
    qtbot.waitUntil(lambda: not column.is_loading())
    steps = [b - a for a, b in itertools.pairwise(made)]
    assert steps
    assert all(step <= SCROLL_STEP for step in steps), steps
    assert column.live_count > before + SCROLL_STEP


@pytest.mark.usefixtures("generous")
def test_an_opened_page_asks_for_no_further_loop_turn(
    make: Callable[[int], MessageData], column: MessageList
) -> None:
    column.set_items(history(make))
    timer = column.findChild(QTimer, "transcriptPageFillTimer")
    assert timer is not None
    assert not timer.isActive()


def test_scrolling_up_makes_a_widget_on_one_loop_turn_and_places_it_on_the_next(
    make: Callable[[int], MessageData], qtbot: QtBot
) -> None:
    """A widget's making (its body rendered) and its placing (layout, anchor, paint) take a
    loop turn each: together they were the wheel's longest stall (issue #12)."""
    built: list[str] = []

    def build(data: MessageData, parent: QWidget) -> MessageView:
        built.append(data.id)
        return MessageView(data, parent=parent)

    column = shown(qtbot, MessageList(build), size=COLUMN_SIZE)
    column.set_items(history(make))
    qtbot.waitUntil(lambda: not column.is_loading())
    before = column.live_count
    column.scroll_area.verticalScrollBar().setValue(0)
    turns = [(len(built), column.live_count)]
    timer = column.findChild(QTimer, "transcriptPageFillTimer")
    assert timer is not None
    timer.timeout.connect(lambda: turns.append((len(built), column.live_count)))
    qtbot.waitUntil(lambda: not column.is_loading())
    steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(turns)]
    assert all(made == 0 or placed == 0 for made, placed in steps), steps
    assert any(made for made, _placed in steps)
    assert column.live_count > before

"""Opening a conversation (or a message far back) makes the widgets that cover the viewport and
no more: what lies beyond pages in as the user scrolls (issue #12, switching: every widget
made before the first paint delays it, and a margin made at once was mostly thrown away)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript import message_list
from flarechat.ui.transcript.message_list import (
    FOCUS_TOP_PX,
    MESSAGE_SPACING_PX,
    NEAR_EDGE_PX,
    MessageList,
)
from flarechat.ui.transcript.message_view import MessageView

HISTORY = 400
#: Long enough for any machine to make a page's widgets in it (tests that count loop turns).
GENEROUS_BUDGET_S = 60.0


def live_views(column: MessageList) -> list[MessageView]:
    return [v for mid in column.ids() if (v := column.view_for(mid)) is not None]


def test_an_opened_page_covers_the_viewport_and_no_more(
    make: Callable[[int], MessageData], qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(PathView([f"m{i}" for i in range(HISTORY)], make))
    qtbot.waitUntil(lambda: not column.is_loading())
    viewport = column.scroll_area.viewport()
    bar = column.scroll_area.verticalScrollBar()
    views = live_views(column)
    assert views[0].y() <= bar.value()  # covered to the top
    assert views[-1].data.id == f"m{HISTORY - 1}"
    assert column.is_at_bottom()
    # The first widget alone did not cover it: without it the rest would not reach the top.
    assert sum(v.height() + MESSAGE_SPACING_PX for v in views[1:]) < viewport.height()
    at_open = column.live_count
    bar.setValue(bar.value() - 1)  # the user scrolls up: the page above comes in
    qtbot.waitUntil(lambda: column.live_count > at_open)


def test_a_far_message_gets_the_widgets_that_cover_the_viewport_below_it(
    make: Callable[[int], MessageData], qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(PathView([f"m{i}" for i in range(HISTORY)], make))
    qtbot.waitUntil(lambda: not column.is_loading())
    column.scroll_to("m100")
    qtbot.waitUntil(lambda: not column.is_loading())
    hit = column.view_for("m100")
    assert hit is not None
    bar = column.scroll_area.verticalScrollBar()
    assert hit.y() - bar.value() == FOCUS_TOP_PX
    views = live_views(column)
    assert len([v for v in views if v.y() < hit.y()]) == 1  # the strip above it is on screen
    bottom = bar.value() + column.scroll_area.viewport().height()
    assert views[-1].geometry().bottom() >= bottom  # covered to the bottom
    assert views[-2].geometry().bottom() < bottom  # and no further
    bar.setValue(bar.value() - 1)
    qtbot.waitUntil(lambda: column.view_for("m98") is not None)


def test_scrolling_down_from_a_far_message_pages_in_below_though_the_top_is_near(
    make: Callable[[int], MessageData], qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(PathView([f"m{i}" for i in range(HISTORY)], make))
    qtbot.waitUntil(lambda: not column.is_loading())
    column.scroll_to("m100")
    qtbot.waitUntil(lambda: not column.is_loading())
    after = live_views(column)[-1].data.id
    bar = column.scroll_area.verticalScrollBar()
    assert bar.value() <= NEAR_EDGE_PX  # a short page: near both of its edges
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: not column.is_loading())
    following = f"m{int(after[1:]) + 1}"
    assert column.view_for(following) is not None


def test_a_jump_far_back_covers_the_viewport_before_the_next_paint(
    make: Callable[[int], MessageData],
    qtbot: QtBot,
    column: MessageList,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A budget no machine runs out of: what is checked is that no loop turn comes between.
    monkeypatch.setattr(message_list, "COVER_BUDGET_S", GENEROUS_BUDGET_S)
    column.set_items(PathView([f"m{i}" for i in range(HISTORY)], make))
    qtbot.waitUntil(lambda: not column.is_loading())
    column.scroll_to("m100")  # no loop turn in between: nothing could paint the hit alone
    assert not column.is_loading()
    hit = column.view_for("m100")
    assert hit is not None
    assert column.view_for("m99") is not None  # the strip above it
    bar = column.scroll_area.verticalScrollBar()
    assert hit.y() - bar.value() == FOCUS_TOP_PX
    bottom = bar.value() + column.scroll_area.viewport().height()
    assert live_views(column)[-1].geometry().bottom() >= bottom

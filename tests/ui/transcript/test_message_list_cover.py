"""Opening a conversation (or a message far back) counts as loaded once its widgets cover the
viewport: that page is painted first, the widgets beyond it are made after (issue #12,
switching: every widget made before the first paint delays it)."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.message_list import FOCUS_TOP_PX, MessageList
from flarechat.ui.transcript.message_view import MessageView

HISTORY = 400


def make(position: int) -> MessageData:
    role = "user" if position % 2 == 0 else "assistant"
    return MessageData(id=f"m{position}", role=role, content=f"Message {position}\n\nMore.")


@pytest.fixture
def column(qtbot: QtBot) -> MessageList:
    view = MessageList(lambda data, parent: MessageView(data, parent=parent))
    qtbot.addWidget(view)
    view.resize(720, 480)
    view.show()
    qtbot.waitExposed(view)
    return view


def live_views(column: MessageList) -> list[MessageView]:
    return [v for mid in column.ids() if (v := column.view_for(mid)) is not None]


def test_an_opened_page_is_loaded_once_it_covers_the_viewport(
    qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(PathView([f"m{i}" for i in range(HISTORY)], make))
    qtbot.waitUntil(lambda: not column.is_loading())
    viewport = column.scroll_area.viewport()
    views = live_views(column)
    assert views[0].y() <= column.scroll_area.verticalScrollBar().value()  # covered to the top
    assert views[-1].data.id == f"m{HISTORY - 1}"
    # The first widget alone did not cover it: without it the rest would not reach the top.
    assert sum(v.height() for v in views[1:]) < viewport.height()
    at_paint = column.live_count
    assert column.is_filling()  # the margin to scroll into comes after the paint
    qtbot.waitUntil(lambda: not column.is_filling())
    assert column.live_count > at_paint
    assert column.is_at_bottom()


def test_a_far_message_is_loaded_once_the_viewport_below_it_is_covered(
    qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(PathView([f"m{i}" for i in range(HISTORY)], make))
    qtbot.waitUntil(lambda: not column.is_filling())
    column.scroll_to("m100")
    qtbot.waitUntil(lambda: not column.is_loading())
    views = live_views(column)
    hit = column.view_for("m100")
    assert hit is not None
    bar = column.scroll_area.verticalScrollBar()
    assert hit.y() - bar.value() == FOCUS_TOP_PX
    above = [v for v in views if v.y() < hit.y()]
    assert len(above) <= 1  # only the strip above the hit is on screen
    assert views[-1].geometry().bottom() >= bar.value() + column.scroll_area.viewport().height()
    at_paint = column.live_count
    qtbot.waitUntil(lambda: not column.is_filling())
    assert column.live_count > at_paint
    assert hit.y() - bar.value() == FOCUS_TOP_PX  # held in place while the margin came

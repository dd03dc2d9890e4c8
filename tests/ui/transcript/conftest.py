"""Transcript test setup: a TranscriptView or a MessageList shown at a window's size, and
numbered messages to fill them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData
from flarechat.ui.transcript.message_list import MessageList
from flarechat.ui.transcript.message_view import MessageView
from flarechat.ui.transcript.transcript import TranscriptView
from support.widgets import shown

#: A small window's transcript: a few messages tall, so paging and scrolling happen.
TRANSCRIPT_SIZE = (720, 480)


@pytest.fixture
def transcript(qtbot: QtBot) -> TranscriptView:
    """An empty TranscriptView, shown and exposed."""
    return shown(qtbot, TranscriptView(), size=TRANSCRIPT_SIZE)


def _numbered(position: int) -> MessageData:
    """Message ``m<position>``: the user's at even positions, two short paragraphs."""
    role = "user" if position % 2 == 0 else "assistant"
    return MessageData(id=f"m{position}", role=role, content=f"Message {position}\n\nMore.")


@pytest.fixture
def make() -> Callable[[int], MessageData]:
    """Makes message ``m<position>`` (a PathView's ``make``)."""
    return _numbered


@pytest.fixture
def column(qtbot: QtBot) -> MessageList:
    """An empty MessageList of plain MessageViews, shown and exposed."""
    return shown(
        qtbot,
        MessageList(lambda data, parent: MessageView(data, parent=parent)),
        size=TRANSCRIPT_SIZE,
    )

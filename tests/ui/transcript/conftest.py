"""Transcript test setup: a TranscriptView shown at a window's size."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.transcript import TranscriptView
from support.widgets import shown

#: A small window's transcript: a few messages tall, so paging and scrolling happen.
TRANSCRIPT_SIZE = (720, 480)


@pytest.fixture
def transcript(qtbot: QtBot) -> TranscriptView:
    """An empty TranscriptView, shown and exposed."""
    return shown(qtbot, TranscriptView(), size=TRANSCRIPT_SIZE)

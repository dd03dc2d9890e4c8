"""Chat pane test setup: a ComposerWidget shown at a pane's width."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.chat.composer import ComposerWidget
from support.widgets import shown

COMPOSER_SIZE = (600, 80)


@pytest.fixture
def composer(qtbot: QtBot) -> ComposerWidget:
    """An empty ComposerWidget, shown and exposed."""
    return shown(qtbot, ComposerWidget(), size=COMPOSER_SIZE)

"""Markdown and highlighting load in the background once the first message is being written."""

from __future__ import annotations

import gc
import sys
import threading

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.chat import composer as composer_module
from flarechat.ui.chat.composer import ComposerWidget
from flarechat.ui.transcript import warm_up


def test_typing_the_first_message_starts_the_warm_up_once(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(composer_module, "warm_up_in_background", lambda: started.append("warm"))
    composer = ComposerWidget()
    qtbot.addWidget(composer)
    composer.show()
    assert started == []  # nothing loads at start-up
    qtbot.keyClicks(composer.editor, "Hi there")
    assert started == ["warm"]


def test_the_warm_up_thread_loads_markdown_and_the_common_lexers() -> None:
    thread = warm_up.warm_up_in_background()
    assert thread is warm_up.warm_up_in_background()  # one per process
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert thread is not threading.main_thread()
    assert "markdown_it" in sys.modules
    assert "pygments.lexers.python" in sys.modules
    assert gc.get_freeze_count() > 0  # a full collection no longer walks what the app keeps

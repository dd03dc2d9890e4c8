"""A message's actions (copy, edit, regenerate, view as code): shown on hover and keyboard focus,
always under the latest reply, in a place kept for them so the text never moves."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QEnterEvent, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.message_view import MessageData, MessageView
from flarechat.ui.transcript.transcript import TranscriptView
from support.widgets import shown

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
ACTION_NAMES = {"Copy message", "Edit and resend", "Regenerate", "View as code"}


class Window(QWidget):
    """A field before the transcript, as the sidebar's search is in the real window."""

    def __init__(self) -> None:
        super().__init__()
        self.field = QLineEdit(self)
        self.transcript = TranscriptView(self)
        column = QVBoxLayout(self)
        column.addWidget(self.field)
        column.addWidget(self.transcript)


@pytest.fixture
def window(qtbot: QtBot) -> Window:
    return shown(qtbot, Window(), size=(720, 520), active=True)


def conversation(transcript: TranscriptView) -> tuple[MessageView, MessageView, MessageView]:
    """Question, answer, follow-up question, answer: the first three views."""
    for index in range(2):
        transcript.add_message(MessageData(id=f"u{index}", role="user", content=f"Q{index}"))
        transcript.add_message(
            MessageData(id=f"r{index}", role="assistant", content=f"A{index}", model=MODEL)
        )
    QApplication.sendPostedEvents()
    QTest.qWait(0)  # the latest reply is pinned on the next loop turn
    return tuple(_view(transcript, i) for i in ("u0", "r0", "u1"))  # type: ignore[return-value]


def _view(transcript: TranscriptView, message_id: str) -> MessageView:
    view = transcript.view_for(message_id)
    assert view is not None
    return view


def actions(view: MessageView) -> list[QToolButton]:
    """The message's action buttons, left to right."""
    found = [b for b in view.findChildren(QToolButton) if b.accessibleName() in ACTION_NAMES]
    return sorted(found, key=lambda b: b.x())


def drawn(view: MessageView) -> QImage:
    """What the message's header looks like (its actions' row)."""
    buttons = [b for b in actions(view) if b.isVisibleTo(view)]
    top = min(b.y() for b in buttons)
    bottom = max(b.geometry().bottom() for b in buttons)
    return view.grab().toImage().copy(0, top, view.width(), bottom - top + 1)


def enter(view: MessageView) -> None:
    point = QPointF(10, 10)
    QApplication.sendEvent(view, QEnterEvent(point, point, view.mapToGlobal(point)))


def leave(view: MessageView) -> None:
    QApplication.sendEvent(view, QEvent(QEvent.Type.Leave))


def test_actions_are_hidden_until_the_pointer_is_over_the_message(window: Window) -> None:
    question, answer, _ = conversation(window.transcript)
    for view in (question, answer):
        assert not view.actions_revealed()
        hidden = drawn(view)
        enter(view)
        assert view.actions_revealed()
        assert drawn(view) != hidden  # the icons are painted now
        leave(view)
        assert not view.actions_revealed()
        assert drawn(view) == hidden


def test_showing_the_actions_moves_nothing(window: Window) -> None:
    _, answer, _ = conversation(window.transcript)
    before = [(w.objectName(), w.geometry()) for w in answer.findChildren(QWidget)]
    enter(answer)
    assert [(w.objectName(), w.geometry()) for w in answer.findChildren(QWidget)] == before


def test_tab_reaches_the_actions_and_shows_them(window: Window) -> None:
    question, answer, _ = conversation(window.transcript)
    edit, copy = (b for b in actions(question) if b.isVisibleTo(question))
    assert [edit.accessibleName(), copy.accessibleName()] == ["Edit and resend", "Copy message"]
    edit.setFocus(Qt.FocusReason.TabFocusReason)
    assert edit.hasFocus()
    assert question.actions_revealed()
    QTest.keyClick(edit, Qt.Key.Key_Tab)
    assert copy.hasFocus()  # from one action to the next: still shown
    assert question.actions_revealed()
    window.field.setFocus(Qt.FocusReason.TabFocusReason)
    assert not question.actions_revealed()
    assert not answer.actions_revealed()


def test_focus_in_the_text_shows_the_actions_too(window: Window) -> None:
    _, answer, _ = conversation(window.transcript)
    page = answer.body.findChild(QTextBrowser)
    assert page is not None
    page.setFocus(Qt.FocusReason.TabFocusReason)
    assert answer.actions_revealed()


def test_tab_from_the_field_before_lands_on_the_first_action(window: Window) -> None:
    question, _, _ = conversation(window.transcript)
    window.transcript.scroll_area.verticalScrollBar().setValue(0)
    window.field.setFocus(Qt.FocusReason.OtherFocusReason)
    focused: QWidget | None = window.field
    for _ in range(4):  # past the scroll area, if it takes focus itself
        assert focused is not None
        QTest.keyClick(focused, Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        if isinstance(focused, QToolButton):
            break
    assert focused is actions(question)[0]  # Edit, the leftmost
    assert question.actions_revealed()


def test_a_focused_action_acts_on_the_keyboard(qtbot: QtBot, window: Window) -> None:
    _, answer, _ = conversation(window.transcript)
    regenerate = next(b for b in actions(answer) if b.accessibleName() == "Regenerate")
    regenerate.setFocus(Qt.FocusReason.TabFocusReason)
    with qtbot.waitSignal(window.transcript.regenerate_requested) as asked:
        QTest.keyClick(regenerate, Qt.Key.Key_Space)
    assert asked.args == ["r0"]


def test_the_latest_reply_keeps_its_actions_shown(window: Window) -> None:
    transcript = window.transcript
    _, answer, _ = conversation(transcript)
    latest = _view(transcript, "r1")
    assert latest.actions_revealed()  # without hover or focus
    assert not answer.actions_revealed()
    transcript.add_message(MessageData(id="u2", role="user", content="Q2"))
    transcript.begin_reply("r2", model=MODEL)
    QTest.qWait(0)
    assert not latest.actions_revealed()  # no longer the latest
    streaming = _view(transcript, "r2")
    assert not streaming.actions_revealed()  # nothing to act on while it streams
    transcript.finish_reply("r2", MessageData(id="r2", role="assistant", content="A2"))
    assert streaming.actions_revealed()


def test_accessible_names_are_unchanged_while_hidden(window: Window) -> None:
    question, answer, _ = conversation(window.transcript)
    assert not answer.actions_revealed()
    names = {b.accessibleName() for b in actions(answer) if b.isVisibleTo(answer)}
    assert names == {"Copy message", "Regenerate", "View as code"}
    assert {b.accessibleName() for b in actions(question) if b.isVisibleTo(question)} == {
        "Copy message",
        "Edit and resend",
    }


def test_the_max_tokens_note_shows_the_hint_it_is_given(qtbot: QtBot) -> None:
    from flarechat.ui.transcript.message_parts import ContinueRow

    hint = "Stopped at the 7-token limit set in this chat's Conversation settings: raise it there."
    data = MessageData(
        id="a1", role="assistant", content="Cut", finish_reason="length", continue_hint=hint
    )
    view = shown(qtbot, MessageView(data), size=(720, 240))
    row = view.findChild(ContinueRow, "continueRow")
    assert row is not None
    assert row.isVisible()
    assert row.hint.text() == hint
    assert "go on with this reply" in row.button.toolTip()

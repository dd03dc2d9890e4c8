"""Messages appended in one loop turn get their widgets at the turn's end: a conversation
replaced in the same turn (four chats opened and sent to at once) never builds any."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.message_view import MessageData
from flarechat.ui.transcript.transcript import TranscriptView

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
CONVERSATIONS = 4


class ViewsMade(QObject):
    """The widgets put into a column (Qt's ChildAdded, sent as each is made)."""

    def __init__(self, column: QWidget) -> None:
        super().__init__(column)
        self.added: list[QObject] = []
        column.installEventFilter(self)

    def message_views(self) -> int:
        """How many of them are message widgets (asked before any was deleted)."""
        return sum(child.objectName() == "messageView" for child in self.added)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ChildAdded:
            self.added.append(event.child())  # type: ignore[attr-defined]
        return super().eventFilter(watched, event)


def send(transcript: TranscriptView, number: int) -> None:
    """What the chat pane does for a new chat sent to: the history, the question, the reply."""
    transcript.set_history([])
    transcript.add_message(MessageData(id=f"u{number}", role="user", content=f"Q{number}"))
    transcript.begin_reply(f"r{number}", model=MODEL)


def test_chats_replaced_in_the_same_turn_make_no_widgets(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    column = transcript.scroll_area.widget()
    assert column is not None
    made = ViewsMade(column)
    for number in range(CONVERSATIONS):
        send(transcript, number)
    assert made.message_views() == 0  # nothing built inside the turn
    last = CONVERSATIONS - 1
    qtbot.waitUntil(lambda: made.message_views() == 2)  # at the turn's end
    assert transcript.view_for(f"u{last}") is not None
    assert transcript.view_for(f"r{last}") is not None
    assert made.message_views() == 2  # the last chat's question and reply only
    assert [m.id for m in transcript.messages()] == [f"u{last}", f"r{last}"]


def test_a_message_asked_about_in_its_turn_is_there_at_once(transcript: TranscriptView) -> None:
    send(transcript, 0)
    view = transcript.view_for("r0")  # a caller in the same turn sees what it appended
    assert view is not None
    assert view.data.status == "waiting"
    assert [m.id for m in transcript.messages()] == ["u0", "r0"]
    transcript.append_text("r0", "Hello")
    transcript.flush()
    assert transcript.messages()[-1].content == "Hello"


def test_the_users_message_is_scrolled_to_once_it_is_in(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    for number in range(12):  # more than a viewport: the column scrolls
        transcript.add_message(
            MessageData(id=f"a{number}", role="assistant", content="Words.\n\n" * 6, model=MODEL)
        )
    bar = transcript.scroll_area.verticalScrollBar()
    bar.setValue(0)
    QApplication.processEvents()
    transcript.add_message(MessageData(id="u", role="user", content="A question"))
    qtbot.waitUntil(lambda: transcript.view_for("u") is not None)
    assert bar.maximum() > 0
    assert bar.value() == bar.maximum()

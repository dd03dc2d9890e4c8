"""TranscriptView and MessageView: streaming, coalescing, markers, actions, scrolling, paging."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot
from transcript_helpers import is_highlighted

from flarechat.ui.transcript import warm_up
from flarechat.ui.transcript.message_list import NEAR_EDGE_PX
from flarechat.ui.transcript.message_view import MessageData, MessageView
from flarechat.ui.transcript.transcript import (
    FLUSH_INTERVAL_MS,
    MAX_LIVE_MESSAGES,
    PAGE_SIZE,
    PAGE_STEP,
    TranscriptView,
)

FindButton = Callable[[QWidget, str], QAbstractButton]
MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
#: Long enough for the flush timer to fire once inside qtbot.wait.
FLUSH_WAIT_MS = FLUSH_INTERVAL_MS * 3


def user(message_id: str, text: str = "Hello") -> MessageData:
    return MessageData(id=message_id, role="user", content=text)


def reply(message_id: str, text: str = "Hi there.", **fields: object) -> MessageData:
    data = MessageData(id=message_id, role="assistant", content=text, model=MODEL)
    return MessageData(**{**_fields(data), **fields})  # type: ignore[arg-type]


def _fields(data: MessageData) -> dict[str, object]:
    return {name: getattr(data, name) for name in MessageData.__dataclass_fields__}


def live_view(transcript: TranscriptView, message_id: str) -> MessageView:
    view = transcript.view_for(message_id)
    assert view is not None
    return view


def label_text(view: QWidget, name: str) -> str:
    label = view.findChild(QLabel, name)  # parts are created on first use
    return label.text() if label is not None and label.isVisibleTo(view) else ""


def settle(qtbot: QtBot, transcript: TranscriptView) -> None:
    """Wait until the page being filled in (PAGE_STEP widgets per loop turn) is complete."""
    qtbot.waitUntil(lambda: not transcript.is_loading())


def conversation(count: int) -> list[MessageData]:
    return [
        user(f"m{i}", f"Question {i}") if i % 2 == 0 else reply(f"m{i}", f"Answer {i}\n\nMore.")
        for i in range(count)
    ]


# --- streaming -----------------------------------------------------------------------------------


def test_thousand_deltas_are_painted_in_a_bounded_number_of_renders(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.begin_reply("a1", model=MODEL)
    waits = 0
    for i in range(1000):
        transcript.append_text("a1", f"w{i} ")
        if i % 100 == 99:
            qtbot.wait(FLUSH_WAIT_MS)
            waits += 1
    qtbot.waitUntil(lambda: transcript.messages()[-1].content.endswith("w999 "))
    # Deltas arrive only between waits, so each wait sees at most one flush, and each flush
    # re-renders the one open message once.
    assert transcript.flush_count <= waits + 1
    assert transcript.render_count == transcript.flush_count
    assert transcript.render_count < 1000 / 50
    assert live_view(transcript, "a1").body.text == "".join(f"w{i} " for i in range(1000))


def test_a_reply_begun_without_typing_starts_the_markdown_warm_up(
    transcript: TranscriptView, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_up, "_thread", None)  # as in a window where nothing was typed
    transcript.begin_reply("a1", model=MODEL)  # e.g. Regenerate on an old conversation
    thread = warm_up._thread
    assert thread is not None
    thread.join(timeout=60)
    assert not thread.is_alive()


def test_only_the_open_message_is_re_rendered(qtbot: QtBot, transcript: TranscriptView) -> None:
    for message in (user("u1"), reply("a1", "Done already."), user("u2")):
        transcript.add_message(message)
    before = {mid: live_view(transcript, mid).render_count for mid in ("u1", "a1", "u2")}
    transcript.begin_reply("a2", model=MODEL)
    for _ in range(3):
        transcript.append_text("a2", "more text ")
        qtbot.wait(FLUSH_WAIT_MS)
    assert {mid: live_view(transcript, mid).render_count for mid in before} == before
    assert live_view(transcript, "a2").render_count >= 2


def test_waiting_reply_shows_typing_indicator_until_text(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.begin_reply("a1", model=MODEL)
    view = live_view(transcript, "a1")
    assert view.data.status == "waiting"
    assert label_text(view, "typingIndicator")
    transcript.append_text("a1", "Hello")
    qtbot.waitUntil(lambda: view.body.text == "Hello")
    assert not label_text(view, "typingIndicator")
    assert view.data.status == "streaming"


def test_reasoning_is_live_then_collapses_when_the_answer_starts(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.begin_reply("a1", model=MODEL)
    transcript.append_reasoning("a1", "Let me think")
    view = live_view(transcript, "a1")
    qtbot.waitUntil(lambda: view.reasoning.text == "Let me think")
    assert view.reasoning.isVisibleTo(view)
    expanded_while_thinking = view.reasoning.expanded  # a local: append_text changes the field
    assert expanded_while_thinking
    transcript.append_text("a1", "The answer")
    qtbot.waitUntil(lambda: view.body.text == "The answer")
    assert not view.reasoning.expanded
    transcript.finish_reply("a1", reply("a1", "The answer", reasoning="Let me think"))
    assert view.reasoning.isVisibleTo(view)
    assert not view.reasoning.expanded


def test_finish_reply_highlights_code_and_shows_metadata(transcript: TranscriptView) -> None:
    transcript.begin_reply("a1", model=MODEL)
    transcript.append_text("a1", "```python\nx = 1\n")
    final = reply(
        "a1",
        "```python\nx = 1\n```\n",
        meta_line="TTFT 0.42 s · 38 tok/s · 152→418 tokens · cache HIT",
        log_id="01J8ZQ3K4M5N6P7Q8R9S",
    )
    transcript.finish_reply("a1", final)
    view = live_view(transcript, "a1")
    assert is_highlighted(view.body)
    assert view.body.code_blocks() == ["x = 1"]
    meta = label_text(view, "metaLabel")
    assert "TTFT 0.42 s" in meta
    assert "cache HIT" in meta
    assert "01J8ZQ3K4M" in meta
    assert transcript.messages()[-1] == final


def test_log_id_link_copies_it(qtbot: QtBot, transcript: TranscriptView) -> None:
    transcript.add_message(reply("a1", meta_line="TTFT 0.2 s", log_id="01J8ZQ3K4M5N6P7Q8R9S"))
    meta = live_view(transcript, "a1").findChild(QLabel, "metaLabel")
    assert meta is not None
    with qtbot.waitSignal(transcript.log_id_copied) as blocker:
        meta.linkActivated.emit("flarechat:copy-log-id")
    assert blocker.args == ["01J8ZQ3K4M5N6P7Q8R9S"]
    assert QGuiApplication.clipboard().text() == "01J8ZQ3K4M5N6P7Q8R9S"


def test_zooming_the_transcript_font_scales_small_and_bold_print(
    transcript: TranscriptView,
) -> None:
    transcript.add_message(reply("a1", meta_line="TTFT 0.2 s", sibling_count=2))
    view = live_view(transcript, "a1")
    meta = view.findChild(QLabel, "metaLabel")
    role = view.findChild(QLabel, "roleLabel")
    assert meta is not None
    assert role is not None
    before = meta.font().pointSizeF()
    assert before < view.font().pointSizeF()
    assert role.font().bold()
    bigger = QFont(transcript.font())
    bigger.setPointSizeF(transcript.font().pointSizeF() * 2)
    transcript.setFont(bigger)
    assert meta.font().pointSizeF() == pytest.approx(before * 2)
    assert role.font().bold()
    assert role.font().pointSizeF() == pytest.approx(bigger.pointSizeF())


# --- ends and markers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "note", "marker"),
    [
        ("stopped", None, "— stopped"),
        ("interrupted", "connection lost", "⚠ interrupted · connection lost"),
    ],
)
def test_stopped_and_interrupted_keep_partial_text_with_a_muted_marker(
    transcript: TranscriptView, status: str, note: str | None, marker: str
) -> None:
    transcript.begin_reply("a1", model=MODEL)
    transcript.append_text("a1", "Partial answer")
    transcript.set_status("a1", status, note)  # before the flush: buffered text is kept
    view = live_view(transcript, "a1")
    assert view.body.text == "Partial answer"
    assert label_text(view, "statusMarker") == marker
    assert all(marker not in w.text() for w in view.body.findChildren(QLabel))
    assert transcript.messages()[-1].status == status


def test_failure_text_is_never_shown_as_model_text(transcript: TranscriptView) -> None:
    transcript.begin_reply("a1", model=MODEL)
    transcript.update_message(
        MessageData(id="a1", role="assistant", model=MODEL, status="failed", error_text="HTTP 500")
    )
    view = live_view(transcript, "a1")
    assert "HTTP 500" in label_text(view, "errorText")
    assert label_text(view, "statusMarker") == "⚠ failed"
    assert view.body.text == ""


# --- actions -------------------------------------------------------------------------------------


def test_copy_puts_the_message_on_the_clipboard(
    transcript: TranscriptView, find_button: FindButton
) -> None:
    transcript.add_message(reply("a1", "**Copy** me"))
    find_button(live_view(transcript, "a1"), "Copy message").click()
    assert QGuiApplication.clipboard().text() == "**Copy** me"


def test_regenerate_and_edit_emit_the_message_id(
    qtbot: QtBot, transcript: TranscriptView, find_button: FindButton
) -> None:
    transcript.add_message(user("u1"))
    transcript.add_message(reply("a1"))
    with qtbot.waitSignal(transcript.edit_requested) as edit:
        find_button(live_view(transcript, "u1"), "Edit and resend").click()
    with qtbot.waitSignal(transcript.regenerate_requested) as regenerate:
        find_button(live_view(transcript, "a1"), "Regenerate").click()
    assert edit.args == ["u1"]
    assert regenerate.args == ["a1"]


@pytest.mark.parametrize(("finish_reason", "shown"), [("length", True), ("stop", False)])
def test_continue_is_offered_only_when_the_reply_hit_max_tokens(
    qtbot: QtBot,
    transcript: TranscriptView,
    find_button: FindButton,
    finish_reason: str,
    shown: bool,
) -> None:
    transcript.add_message(reply("a1", "Cut off mid", finish_reason=finish_reason))
    view = live_view(transcript, "a1")
    assert ("max-tokens limit" in label_text(view, "mutedLabel")) is shown
    if shown:
        with qtbot.waitSignal(transcript.continue_requested) as blocker:
            find_button(view, "Continue the reply").click()
        assert blocker.args == ["a1"]
    else:
        with pytest.raises(AssertionError):
            find_button(view, "Continue the reply")


def test_branch_switcher_shows_position_and_emits_direction(
    qtbot: QtBot, transcript: TranscriptView, find_button: FindButton
) -> None:
    transcript.add_message(reply("a1"))
    transcript.set_siblings("a1", 0, 2)
    view = live_view(transcript, "a1")
    assert label_text(view, "siblingLabel") == "1/2"
    assert not find_button(view, "Previous version").isEnabled()
    with qtbot.waitSignal(transcript.branch_requested) as blocker:
        find_button(view, "Next version").click()
    assert blocker.args == ["a1", 1]
    assert transcript.messages()[0].sibling_count == 2


def test_remove_from_drops_the_message_and_everything_after(transcript: TranscriptView) -> None:
    for message in conversation(6):
        transcript.add_message(message)
    transcript.remove_from("m3")
    assert [m.id for m in transcript.messages()] == ["m0", "m1", "m2"]
    assert transcript.live_count == 3
    assert transcript.view_for("m4") is None


# --- scrolling and paging ------------------------------------------------------------------------


def test_auto_scroll_follows_only_while_at_the_bottom(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    transcript.set_history(conversation(30))
    settle(qtbot, transcript)
    bar = transcript.scroll_area.verticalScrollBar()
    transcript.begin_reply("a1", model=MODEL)
    transcript.append_text("a1", "line\n\n" * 20)
    transcript.flush()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() > NEAR_EDGE_PX * 2)
    assert transcript.is_at_bottom()
    assert not transcript.jump_button.isVisible()

    bar.setValue(bar.maximum() // 2)
    parked = bar.value()
    transcript.append_text("a1", "more\n\n" * 20)
    qtbot.waitUntil(lambda: live_view(transcript, "a1").body.text.endswith("more\n\n"))
    assert bar.value() == parked
    assert transcript.jump_button.isVisible()


def test_jump_to_latest_scrolls_down_and_hides(qtbot: QtBot, transcript: TranscriptView) -> None:
    transcript.set_history(conversation(30))
    settle(qtbot, transcript)
    bar = transcript.scroll_area.verticalScrollBar()
    bar.setValue(bar.maximum() - 400)
    assert transcript.jump_button.isVisible()
    qtbot.mouseClick(transcript.jump_button, Qt.MouseButton.LeftButton)
    assert bar.value() == bar.maximum()
    assert not transcript.jump_button.isVisible()
    assert transcript.is_at_bottom()


def test_ctrl_end_jumps_to_the_latest_message(qtbot: QtBot, transcript: TranscriptView) -> None:
    transcript.set_history(conversation(30))
    settle(qtbot, transcript)
    bar = transcript.scroll_area.verticalScrollBar()
    bar.setValue(0)
    transcript.activateWindow()
    qtbot.waitActive(transcript)
    transcript.scroll_area.setFocus()
    qtbot.keyClick(transcript.scroll_area, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert bar.value() == bar.maximum()
    assert transcript.is_at_bottom()


def test_five_thousand_messages_open_with_one_page_and_page_in_both_ways(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    history = conversation(5000)
    transcript.set_history(history)
    assert 0 < transcript.live_count <= PAGE_SIZE  # the viewport's page at once (one paint)
    assert transcript.view_for("m4999") is not None
    assert transcript.is_at_bottom()
    settle(qtbot, transcript)
    # The last page: a screenful and a bit (at most PAGE_SIZE), not more before the paint.
    assert PAGE_STEP <= transcript.live_count <= PAGE_SIZE
    bar = transcript.scroll_area.verticalScrollBar()
    assert bar.maximum() > 0
    assert transcript.view_for("m4959") is None
    for _ in range(3 * MAX_LIVE_MESSAGES):  # scroll to the top again and again: pages load
        if transcript.view_for("m4999") is None:
            break
        anchor = next(m.id for m in transcript.messages() if transcript.view_for(m.id))
        view = live_view(transcript, anchor)
        top_y = view.y()  # where it shows once the user reaches the top
        bar.setValue(0)
        settle(qtbot, transcript)
        assert view.y() - bar.value() == top_y  # pages load above, what is seen stays put
        assert bar.value() > 0
        assert transcript.live_count <= MAX_LIVE_MESSAGES
    assert transcript.view_for("m4999") is None  # far end dropped
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    alive = [v for v in transcript.findChildren(MessageView) if not v.isHidden()]
    assert len(alive) == transcript.live_count <= MAX_LIVE_MESSAGES

    bar.setValue(bar.maximum())  # scrolling down pages the later messages back in
    settle(qtbot, transcript)
    assert transcript.live_count <= MAX_LIVE_MESSAGES
    transcript.scroll_to_latest()
    settle(qtbot, transcript)
    assert transcript.view_for("m4999") is not None
    assert transcript.is_at_bottom()
    assert transcript.message_count() == len(history)


def test_streaming_into_a_paged_out_reply_is_kept(qtbot: QtBot, transcript: TranscriptView) -> None:
    transcript.set_history(conversation(200))
    transcript.begin_reply("a1", model=MODEL)
    settle(qtbot, transcript)
    bar = transcript.scroll_area.verticalScrollBar()
    for _ in range(MAX_LIVE_MESSAGES):  # scroll up until the reply's widget is dropped
        bar.setValue(0)
        settle(qtbot, transcript)
        if transcript.view_for("a1") is None:
            break
    assert transcript.view_for("a1") is None
    transcript.append_text("a1", "kept while off screen")
    qtbot.waitUntil(lambda: transcript.messages()[-1].content == "kept while off screen")
    transcript.scroll_to_latest()
    settle(qtbot, transcript)
    assert live_view(transcript, "a1").body.text == "kept while off screen"

"""While replies stream, the window repaints once a frame, however often the text changes
(issue #12: a fast reply changed the transcript ~60 times a second, each change a paint of the
whole viewport); what changed in between is painted by the frame, and nothing is lost."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot
from transcript_helpers import PaintCounter

from flarechat.ui.control.view_data import MessageData
from flarechat.ui.transcript.markdown_view import MarkdownView
from flarechat.ui.transcript.paint_pacer import (
    STEP_AFTER_FRAME_MS,
    PaintPacer,
    ms_since_frame,
    step_done,
)
from flarechat.ui.transcript.transcript import TranscriptView
from support.widgets import shown

#: Longer than any test takes: a paint held back stays held until the test lets it go.
NEVER_MS = 60_000
#: A frame short enough to wait for.
FRAME_MS = 20
MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"


def window_with_label(qtbot: QtBot) -> tuple[QWidget, QLabel]:
    """A shown window whose label has had its first paint (an expose's paint comes without an
    update request: on a busy machine it could land inside a test's counting)."""
    window = QWidget()
    label = QLabel("first", window)
    QVBoxLayout(window).addWidget(label)
    first = PaintCounter(label)
    shown(qtbot, window, size=(300, 100))
    qtbot.waitUntil(lambda: first.count >= 1)
    return window, label


def paint_now() -> None:
    """Let Qt deliver the paints asked for so far (one pass of the event loop)."""
    QApplication.processEvents()
    QApplication.processEvents()


def test_changes_within_a_frame_wait_for_it_and_stop_paints_them_at_once(qtbot: QtBot) -> None:
    window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=NEVER_MS)
    paints = PaintCounter(label)
    pacer.start()
    label.setText("second")  # the first request of the pacing: its frame is due
    paint_now()
    assert paints.count == 1
    label.setText("third")  # within the frame: held, the dirty region kept
    paint_now()
    assert paints.count == 1
    assert pacer.held >= 1
    pacer.stop()  # the reply ended: what changed is painted now, not a frame later
    qtbot.waitUntil(lambda: paints.count == 2)
    assert not pacer.is_pacing()
    assert window.grab().toImage() == _fresh_grab(qtbot, "third")


def test_a_held_paint_comes_with_the_next_frame(qtbot: QtBot) -> None:
    _window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=FRAME_MS)
    paints = PaintCounter(label)
    pacer.start()
    for text in ("a", "b", "c", "d"):
        label.setText(text)
        paint_now()
    qtbot.waitUntil(lambda: pacer.frames >= 2 and not pacer.is_holding())
    assert pacer.held >= 1  # changes came faster than frames
    assert paints.count == pacer.frames  # each frame is one paint of everything changed
    pacer.stop()


def _fresh_grab(qtbot: QtBot, text: str) -> object:
    """What an unpaced window showing ``text`` looks like."""
    window, label = window_with_label(qtbot)
    label.setText(text)
    paint_now()
    return window.grab().toImage()


def test_the_transcript_paces_while_a_reply_streams_and_stops_when_it_ends(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    assert not transcript.is_pacing_paints()
    transcript.begin_reply("a1", model=MODEL)
    transcript.append_text("a1", "Streaming text.")
    assert transcript.is_pacing_paints()
    transcript.flush()
    transcript.finish_reply(
        "a1", MessageData(id="a1", role="assistant", content="Streaming text.", model=MODEL)
    )
    assert not transcript.is_pacing_paints()
    view = transcript.view_for("a1")
    assert view is not None
    assert "Streaming text." in view.body.plain_text()


def test_finish_keeps_the_frames_paced_while_busy_then_paints_at_once(qtbot: QtBot) -> None:
    window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=FRAME_MS)
    paints = PaintCounter(label)
    pacer.start()
    busy = [True]
    pacer.finish(lambda: busy[0])  # the reply ended; its Markdown still catches up
    for n in range(12):  # catch-up steps, faster than frames: still one paint a frame
        label.setText(f"step {n:02d}")
        paint_now()
        qtbot.wait(2)
    qtbot.waitUntil(lambda: not pacer.is_holding())
    assert pacer.is_pacing()
    assert pacer.held >= 1
    assert paints.count == pacer.frames
    busy[0] = False
    label.setText("caught up")  # the first frame after: paints, and the pacing ends
    qtbot.waitUntil(lambda: not pacer.is_pacing())
    paint_now()
    assert window.grab().toImage() == _fresh_grab(qtbot, "caught up")


def test_finish_when_nothing_is_busy_stops_at_once(qtbot: QtBot) -> None:
    _window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=NEVER_MS)
    pacer.start()
    pacer.finish(lambda: False)
    assert not pacer.is_pacing()
    pacer.start()  # a new reply paces anew, not finishing the last one's catch-up
    pacer.finish(lambda: True)
    pacer.start()
    label.setText("a frame of the new reply")
    paint_now()
    assert pacer.is_pacing()
    pacer.stop()


def test_the_transcript_paces_a_finished_reply_until_its_markdown_has_caught_up(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    text = "".join(f"Paragraph {n} of a long reply, streamed fast.\n\n" for n in range(400))
    transcript.begin_reply("a1", model=MODEL)
    transcript.append_text("a1", text[:200])
    transcript.flush()
    transcript.finish_reply("a1", MessageData(id="a1", role="assistant", content=text, model=MODEL))
    view = transcript.view_for("a1")
    assert view is not None
    assert view.is_rendering()  # ~19,000 characters: rendered a budget a loop turn
    assert transcript.is_pacing_paints()
    qtbot.waitUntil(lambda: not view.is_rendering(), timeout=10_000)
    qtbot.waitUntil(lambda: not transcript.is_pacing_paints())
    assert "Paragraph 399 of a long reply" in view.body.plain_text()


# -- a frame and a settled Markdown step keep apart ---------------------------------------------

SETTLED = "A settled paragraph of the reply.\n\n" * 20  # well over SPLIT_MIN_CHARS


def test_a_frame_waits_until_a_step_that_just_ended_is_a_few_ms_behind(qtbot: QtBot) -> None:
    _window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=FRAME_MS)
    paints = PaintCounter(label)
    pacer.start()
    qtbot.wait(FRAME_MS * 2)  # the frame interval alone would let the next paint through
    before, frames = paints.count, pacer.frames
    step_done()
    label.setText("after a step")
    paint_now()
    assert paints.count == before  # held: the step and the paint are not one long wait
    assert pacer.is_holding()
    qtbot.waitUntil(lambda: paints.count == before + 1)  # painted once the step is behind
    assert pacer.frames == frames + 1
    assert ms_since_frame(label) < NEVER_MS
    pacer.stop()


def test_steps_back_to_back_hold_a_frame_back_by_one_frame_at_most(qtbot: QtBot) -> None:
    _window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=FRAME_MS)
    pacer.start()
    label.update()
    paint_now()
    frames = pacer.frames
    for n in range(40):  # ~4 frames' time of steps with no gap after any of them
        step_done()
        label.setText(f"step {n}")
        QApplication.processEvents()
        qtbot.wait(2)
        step_done()
    assert pacer.frames > frames  # frames still came (at most a frame late), not none
    pacer.stop()
    qtbot.wait(FRAME_MS)  # the next test's first frame is not held by these steps


def test_a_step_due_just_after_a_frame_of_its_window_waits_then_renders(qtbot: QtBot) -> None:
    body = shown(qtbot, MarkdownView(), size=(400, 300))
    pacer = PaintPacer(body, interval_ms=FRAME_MS)
    pacer.start()
    body.update()
    paint_now()  # a frame of the body's window was let through just now
    assert ms_since_frame(body) < STEP_AFTER_FRAME_MS
    body.stream_markdown(SETTLED)
    assert body.plain_text() == ""  # the step waits for the loop to have had a turn
    assert body.is_rendering()
    qtbot.waitUntil(lambda: not body.is_rendering())
    assert body.plain_text().count("A settled paragraph") >= 19  # the last may be the tail
    pacer.stop()


def test_a_frame_of_another_window_or_a_final_render_never_holds_a_step(qtbot: QtBot) -> None:
    _window, label = window_with_label(qtbot)
    pacer = PaintPacer(label, interval_ms=FRAME_MS)
    pacer.start()
    label.update()
    paint_now()  # a frame of the label's window, not the body's
    body = shown(qtbot, MarkdownView(), size=(400, 300))
    assert ms_since_frame(body) == float("inf")
    body.stream_markdown("Short.")
    assert "Short." in body.plain_text()  # rendered at once, as without pacing
    pacer.stop()
    other = shown(qtbot, MarkdownView(), size=(400, 300))
    other_pacer = PaintPacer(other, interval_ms=FRAME_MS)
    other_pacer.start()
    other.update()
    paint_now()
    other.set_markdown("The whole reply.")
    assert other.plain_text() == "The whole reply."  # a final render is never held
    other_pacer.stop()

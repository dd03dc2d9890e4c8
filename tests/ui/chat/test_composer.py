"""ComposerWidget: keys (Enter, Shift+Enter, Esc, Up, IME), busy Stop button, growth."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from flarechat.ui.chat.composer import MAX_LINES, ComposerWidget
from flarechat.ui.shared.theme import Scheme, apply_theme
from flarechat.ui.window.main_window import ZOOM_STEP


def type_text(qtbot: QtBot, composer: ComposerWidget, text: str) -> None:
    qtbot.keyClicks(composer.editor, text)


def test_enter_sends_the_text_and_clears_the_box(qtbot: QtBot, composer: ComposerWidget) -> None:
    type_text(qtbot, composer, "Hello there")
    with qtbot.waitSignal(composer.send_requested) as blocker:
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert blocker.args == ["Hello there"]
    assert composer.text() == ""


def test_keypad_enter_sends_too(qtbot: QtBot, composer: ComposerWidget) -> None:
    type_text(qtbot, composer, "hi")
    with qtbot.waitSignal(composer.send_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)


def test_shift_enter_inserts_a_newline(qtbot: QtBot, composer: ComposerWidget) -> None:
    type_text(qtbot, composer, "line one")
    with qtbot.assertNotEmitted(composer.send_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    type_text(qtbot, composer, "line two")
    assert composer.text() == "line one\nline two"


def test_blank_text_is_not_sent(qtbot: QtBot, composer: ComposerWidget) -> None:
    type_text(qtbot, composer, "   ")
    with qtbot.assertNotEmitted(composer.send_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert not composer.send_button.isEnabled()


def test_enter_does_not_send_while_an_input_method_composes(
    qtbot: QtBot, composer: ComposerWidget
) -> None:
    preedit = QInputMethodEvent("にほん", [])
    QApplication.sendEvent(composer.editor, preedit)
    with qtbot.assertNotEmitted(composer.send_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    commit = QInputMethodEvent("", [])
    commit.setCommitString("日本")
    QApplication.sendEvent(composer.editor, commit)
    with qtbot.waitSignal(composer.send_requested) as blocker:
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert blocker.args == ["日本"]


def test_escape_requests_stop(qtbot: QtBot, composer: ComposerWidget) -> None:
    composer.set_busy(True)
    with qtbot.waitSignal(composer.stop_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Escape)


def test_up_in_an_empty_box_asks_to_edit_the_last_message(
    qtbot: QtBot, composer: ComposerWidget
) -> None:
    with qtbot.waitSignal(composer.edit_last_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Up)
    type_text(qtbot, composer, "draft")
    with qtbot.assertNotEmitted(composer.edit_last_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Up)


def test_busy_turns_send_into_stop_and_keeps_the_box_editable(
    qtbot: QtBot, composer: ComposerWidget
) -> None:
    composer.set_busy(True)
    button = composer.send_button
    assert button.accessibleName() == "Stop generating"
    assert button.isEnabled()
    type_text(qtbot, composer, "next question")
    with qtbot.assertNotEmitted(composer.send_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert composer.text() == "next question"  # kept for when the reply is done
    with qtbot.waitSignal(composer.stop_requested):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    composer.set_busy(False)
    assert button.accessibleName() == "Send message"
    with qtbot.waitSignal(composer.send_requested) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["next question"]


def test_box_grows_from_one_to_max_lines_then_scrolls(
    qtbot: QtBot, composer: ComposerWidget
) -> None:
    one_line = composer.editor.height()
    composer.set_text("a\nb\nc")
    three_lines = composer.editor.height()
    composer.set_text("\n".join("x" * MAX_LINES * 3))
    capped = composer.editor.height()
    composer.set_text("\n".join("y" * (MAX_LINES + 5)))
    assert one_line < three_lines < capped
    assert composer.editor.height() == capped
    line = composer.editor.fontMetrics().lineSpacing()
    assert three_lines - one_line == 2 * line


#: The window's text zoom steps (View > Zoom in) from 100 % to ~130 % (1.1 ** 3).
ZOOMS = tuple(ZOOM_STEP**step for step in range(4))


@pytest.fixture(params=["light", "dark"])
def scheme(request: pytest.FixtureRequest, qapp: QApplication) -> Iterator[Scheme]:
    apply_theme(qapp, request.param)
    yield request.param
    apply_theme(qapp, "light")  # what the rest of the suite expects


def zoom(qtbot: QtBot, composer: ComposerWidget, factor: float) -> None:
    """What MainWindow.zoom does: a scaled font set on the composer."""
    font = QApplication.font()
    font.setPointSizeF(font.pointSizeF() * factor)
    composer.setFont(font)
    qtbot.waitUntil(lambda: composer.editor.font().pointSizeF() == font.pointSizeF())


def fits_without_scrolling(qtbot: QtBot, composer: ComposerWidget) -> bool:
    """No scroll bar, and none would be needed: even with the bar allowed, nothing scrolls."""
    editor, bar = composer.editor, composer.editor.verticalScrollBar()
    hidden = editor.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    shown_before = bar.isVisible()
    editor.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    QApplication.processEvents()
    fits = bar.maximum() == 0 and not bar.isVisible()
    composer.set_text(composer.text())  # the composer sets its own policy again
    return hidden and not shown_before and fits


@pytest.mark.parametrize("factor", ZOOMS)
@pytest.mark.parametrize("lines", [1, 3, MAX_LINES])
def test_no_scroll_bar_until_the_text_really_exceeds_max_lines(
    qtbot: QtBot, composer: ComposerWidget, scheme: Scheme, factor: float, lines: int
) -> None:
    zoom(qtbot, composer, factor)
    composer.set_text("\n".join(f"line {i}" for i in range(lines)) if lines > 1 else "")
    assert fits_without_scrolling(qtbot, composer), (scheme, factor, lines)
    if lines == 1:  # and the one-line box is exactly one line tall
        composer.set_text("one line")
        assert fits_without_scrolling(qtbot, composer)


@pytest.mark.parametrize("factor", ZOOMS)
def test_a_long_paragraph_wraps_without_a_scroll_bar(
    qtbot: QtBot, composer: ComposerWidget, scheme: Scheme, factor: float
) -> None:
    zoom(qtbot, composer, factor)
    composer.set_text(" ".join(["wrapping"] * 30))  # a few wrapped lines, no newline
    lines = composer.editor.document().documentLayout().documentSize().height()
    assert 1 < lines <= MAX_LINES
    assert fits_without_scrolling(qtbot, composer)


@pytest.mark.parametrize("factor", ZOOMS)
def test_ten_lines_scroll(
    qtbot: QtBot, composer: ComposerWidget, scheme: Scheme, factor: float
) -> None:
    zoom(qtbot, composer, factor)
    composer.set_text("\n".join(f"line {i}" for i in range(MAX_LINES + 2)))
    bar = composer.editor.verticalScrollBar()
    qtbot.waitUntil(bar.isVisible)
    assert composer.editor.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAsNeeded
    assert bar.maximum() > 0


def test_zooming_refits_the_box_to_the_new_line_height(
    qtbot: QtBot, composer: ComposerWidget
) -> None:
    composer.set_text("a\nb\nc")
    before = composer.editor.height()
    zoom(qtbot, composer, 1.3)
    assert composer.editor.height() > before
    assert fits_without_scrolling(qtbot, composer)
    zoom(qtbot, composer, 1.0)
    assert composer.editor.height() == before


def test_set_text_and_placeholder(composer: ComposerWidget) -> None:
    composer.set_model("@cf/meta/llama-3.3-70b-instruct-fp8-fast")
    assert composer.editor.placeholderText() == (
        "Message llama-3.3-70b-instruct-fp8-fast — Enter to send, Shift+Enter for a new line"
    )
    composer.set_text("edit me")
    assert composer.text() == "edit me"
    assert composer.editor.textCursor().position() == len("edit me")
    assert composer.editor.accessibleName() == "Message"
    assert "Enter" in composer.send_button.toolTip()

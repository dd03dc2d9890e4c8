"""A long paste in the composer: held on a card (never laid out in the box), sent whole."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt
from pytestqt.qtbot import QtBot

from flarechat.ui.chat.composer import LONG_TEXT_CHARS, ComposerWidget

MEGABYTE = 1024 * 1024
PASTE = ("All work and no play makes a long paste. " * (MEGABYTE // 41 + 1))[:MEGABYTE]


def _paste(composer: ComposerWidget, text: str) -> None:
    mime = QMimeData()
    mime.setText(text)
    composer.editor.insertFromMimeData(mime)


def test_a_megabyte_paste_is_held_on_a_card_not_in_the_box(composer: ComposerWidget) -> None:
    _paste(composer, PASTE)
    assert composer.editor.toPlainText() == ""
    assert composer.pasted.isVisible()
    assert "1,048,576 characters" in composer.pasted.summary.text()
    assert composer.text() == PASTE
    assert composer.send_button.isEnabled()


def test_a_short_paste_goes_into_the_box(composer: ComposerWidget) -> None:
    _paste(composer, "short")
    assert composer.editor.toPlainText() == "short"
    assert not composer.pasted.isVisible()


def test_the_held_text_is_sent_whole_before_what_is_typed(
    qtbot: QtBot, composer: ComposerWidget
) -> None:
    _paste(composer, PASTE)
    qtbot.keyClicks(composer.editor, "Summarise this")
    with qtbot.waitSignal(composer.send_requested) as blocker:
        qtbot.keyClick(composer.editor, Qt.Key.Key_Return)
    assert blocker.args == [PASTE + "\n\nSummarise this"]
    assert composer.text() == ""
    assert not composer.pasted.isVisible()


def test_a_long_text_set_back_into_the_composer_is_held_too(composer: ComposerWidget) -> None:
    text = "x" * (LONG_TEXT_CHARS + 1)
    composer.set_text(text)  # an edit, or a message refused before sending
    assert composer.editor.toPlainText() == ""
    assert composer.text() == text
    composer.set_text("short again")
    assert composer.text() == "short again"
    assert not composer.pasted.isVisible()


def test_removing_the_card_drops_the_held_text(composer: ComposerWidget) -> None:
    _paste(composer, PASTE)
    composer.pasted.remove_button.click()
    assert composer.text() == ""
    assert not composer.send_button.isEnabled()


def test_up_with_a_held_text_does_not_replace_it(qtbot: QtBot, composer: ComposerWidget) -> None:
    _paste(composer, PASTE)
    with qtbot.assertNotEmitted(composer.edit_last_requested):
        qtbot.keyClick(composer.editor, Qt.Key.Key_Up)
    assert composer.text() == PASTE

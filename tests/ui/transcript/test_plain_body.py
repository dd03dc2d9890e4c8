"""A user message's text: a long one is shown collapsed, Show all lays it out in bounded
steps, and whatever is selected copies as the characters the user wrote."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QScrollArea
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.plain_body import (
    COLLAPSE_CHARS,
    COLLAPSE_LINES,
    PIECE_CHARS,
    STEP_CHARS,
    PlainBody,
    next_piece,
)

MEGABYTE = 1024 * 1024
PASTE = ("All work and no play makes a long paste. " * (MEGABYTE // 41 + 1))[:MEGABYTE]


@pytest.fixture
def body(qtbot: QtBot) -> Iterator[PlainBody]:
    """In a scroll area, as in the transcript: only what is in view is painted."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    widget = PlainBody()
    area.setWidget(widget)
    qtbot.addWidget(area)
    area.resize(600, 400)
    area.show()
    qtbot.waitExposed(area)
    yield widget  # the area lives until the test ends
    area.hide()


def _expanded(qtbot: QtBot, body: PlainBody, text: str) -> None:
    body.setText(text)
    body.expand()
    qtbot.waitUntil(lambda: not body.is_filling(), timeout=60_000)


def test_a_short_text_is_shown_whole_with_no_toggle(body: PlainBody) -> None:
    body.setText("Hello\nthere")
    assert body.shown_text() == "Hello\nthere"
    assert not body.is_collapsed()
    assert body.toggle is None


def test_a_megabyte_text_is_shown_collapsed_to_its_start(body: PlainBody) -> None:
    body.setText(PASTE)
    assert body.text() == PASTE
    assert body.is_collapsed()
    shown = body.shown_text()
    assert len(shown) < COLLAPSE_CHARS
    assert shown.endswith(" …")
    assert PASTE.startswith(shown.removesuffix(" …"))
    assert body.toggle is not None
    assert "1,048,576 characters" in body.toggle.text()


def test_many_short_lines_are_collapsed_too(body: PlainBody) -> None:
    body.setText("\n".join(f"line {n}" for n in range(COLLAPSE_LINES + 1)))
    assert body.is_collapsed()


def test_show_all_lays_a_megabyte_out_in_bounded_steps(qtbot: QtBot, body: PlainBody) -> None:
    body.setText(PASTE)
    body.expand()
    page = body.page
    assert page is not None
    first = page.document().characterCount()
    assert first <= STEP_CHARS + PIECE_CHARS + 1  # the first step only, the rest later
    assert body.is_filling()
    qtbot.waitUntil(lambda: not body.is_filling(), timeout=60_000)
    assert body.steps >= len(PASTE) // (STEP_CHARS + PIECE_CHARS)
    # Blocks are cut only after a space: the text reads the same, line breaks aside.
    assert page.document().toPlainText().replace("\n", "") == PASTE
    assert page.document().blockCount() >= len(PASTE) // PIECE_CHARS


def test_show_less_folds_the_text_again(qtbot: QtBot, body: PlainBody) -> None:
    _expanded(qtbot, body, PASTE[:50_000])
    assert body.toggle is not None
    assert body.toggle.text() == "Show less"
    body.toggle.click()
    assert body.is_collapsed()
    assert "Show all" in body.toggle.text()


def test_selecting_everything_copies_the_text_as_written(qtbot: QtBot, body: PlainBody) -> None:
    text = "First paragraph.\r\n\n" + PASTE[:30_000] + "\nLast line\n"
    _expanded(qtbot, body, text)
    page = body.page
    assert page is not None
    page.selectAll()
    page.copy()
    assert QApplication.clipboard().text() == text


def test_a_selection_across_a_cut_copies_no_line_break(qtbot: QtBot, body: PlainBody) -> None:
    _expanded(qtbot, body, PASTE[:30_000])
    page = body.page
    assert page is not None
    cursor = QTextCursor(page.document())
    second_block = page.document().findBlockByNumber(1)
    cursor.setPosition(second_block.position() - 11)  # 10 characters and the block break
    cursor.setPosition(second_block.position() + 10, QTextCursor.MoveMode.KeepAnchor)
    page.setTextCursor(cursor)
    page.copy()
    start = page.text_starts[1] - 10
    assert QApplication.clipboard().text() == PASTE[start : start + 20]


def test_the_same_text_again_keeps_the_message_expanded(qtbot: QtBot, body: PlainBody) -> None:
    _expanded(qtbot, body, PASTE[:50_000])
    body.setText(PASTE[:50_000])  # a status change re-sets the message's data
    assert body.is_expanded()


@pytest.mark.parametrize(
    ("text", "start", "expected"),
    [
        ("one\ntwo", 0, (3, 4)),
        ("one\r\ntwo", 0, (3, 5)),
        ("one", 0, (3, 3)),
        ("x" * (PIECE_CHARS + 5), 0, (PIECE_CHARS, PIECE_CHARS)),
        ("ab " * PIECE_CHARS, 0, (PIECE_CHARS - 2, PIECE_CHARS - 2)),
    ],
    ids=["newline", "crlf", "last", "no-space", "after-a-space"],
)
def test_next_piece_ends_at_a_break_or_after_a_space(
    text: str, start: int, expected: tuple[int, int]
) -> None:
    assert next_piece(text, start) == expected

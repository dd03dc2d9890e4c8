"""Find marks inside a message: every occurrence of the query highlighted in the shown text
(prose, code blocks, tables, a user's plain text), the first one stronger and in view."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QTextBrowser
from pytestqt.qtbot import QtBot

from flarechat.ui.shared.theme import current_palette
from flarechat.ui.transcript.markdown_view import FULL_RENDER_MAX_CHARS
from flarechat.ui.transcript.match_marks import find_ranges
from flarechat.ui.transcript.message_view import MessageData, MessageView
from flarechat.ui.transcript.transcript import TranscriptView

REPLY = """## Heron facts

The **Heron** waits. A heron is patient.

```python
heron = "grey heron"
print(heron)
```

| Bird | Note |
| --- | --- |
| Heron | tall |
| Egret | white |
"""


def shown(transcript: TranscriptView, data: MessageData) -> MessageView:
    transcript.add_message(data)
    view = transcript.view_for(data.id)
    assert view is not None
    return view


def positions(text: str, word: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(re.escape(word), text, re.IGNORECASE)]


def mark_colours(view: MessageView) -> list[str]:
    page = view.body.findChild(QTextBrowser)
    assert page is not None
    return [mark.format.background().color().name() for mark in page.extraSelections()]


def test_every_occurrence_in_prose_code_and_table_is_marked_the_first_stronger(
    transcript: TranscriptView,
) -> None:
    view = shown(transcript, MessageData(id="r", role="assistant", content=REPLY))
    assert transcript.scroll_to("r", query="HERON")
    plain = view.body.plain_text()
    wanted = positions(plain, "heron")
    assert len(wanted) == 7  # heading, prose x2, code x3, table
    assert view.match_ranges() == wanted
    palette = current_palette()
    strong, weak = QColor(palette.accent).name(), QColor(palette.match_bg).name()
    assert mark_colours(view) == [strong] + [weak] * 6
    assert "heron" in view.body.code_blocks()[0]  # the document itself is unchanged


def test_a_user_message_is_marked_in_its_plain_text(transcript: TranscriptView) -> None:
    text = "Tell me about <herons> & Herons"
    view = shown(transcript, MessageData(id="u", role="user", content=text))
    assert transcript.scroll_to("u", query="heron")
    assert view.match_ranges() == positions(text, "heron")
    label = view.findChild(QLabel, "userText")
    assert label is not None
    assert label.textFormat() == Qt.TextFormat.RichText
    assert "&lt;" in label.text()  # still the user's text, escaped, not markup
    assert f"background-color:{current_palette().accent}" in label.text()
    transcript.clear_matches()
    assert view.match_ranges() == []
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label.text() == text


def test_words_found_apart_are_marked_one_by_one(transcript: TranscriptView) -> None:
    view = shown(transcript, MessageData(id="r", role="assistant", content="grey bird, heron"))
    assert transcript.scroll_to("r", query="heron grey")
    assert view.match_ranges() == [(0, 4), (11, 16)]
    assert find_ranges("a grey heron", "GREY heron") == [(2, 12)]  # the phrase, when it occurs


def test_clearing_removes_every_mark(transcript: TranscriptView) -> None:
    view = shown(transcript, MessageData(id="r", role="assistant", content=REPLY))
    transcript.scroll_to("r", query="heron")
    transcript.clear_matches()
    assert view.match_ranges() == []
    assert mark_colours(view) == []


def test_a_match_deep_in_a_long_reply_is_scrolled_into_view(transcript: TranscriptView) -> None:
    filler = "\n\n".join(f"Paragraph {i} about nothing in particular." for i in range(120))
    view = shown(
        transcript,
        MessageData(id="r", role="assistant", content=f"{filler}\n\nThe kingfisher dives."),
    )
    transcript.add_message(MessageData(id="u", role="user", content="And then?"))
    transcript.scroll_to("r", query="kingfisher")
    page = view.body.findChild(QTextBrowser)
    assert page is not None
    (mark,) = page.extraSelections()
    rect = page.cursorRect(mark.cursor)
    viewport = transcript.scroll_area.viewport()
    top = page.viewport().mapTo(viewport, rect.topLeft()).y()
    assert 0 <= top < viewport.height() - rect.height()


def test_a_reply_still_rendering_is_marked_when_it_is_done(
    qtbot: QtBot, transcript: TranscriptView
) -> None:
    filler = "\n\n".join(f"Paragraph {i} about nothing in particular." for i in range(1500))
    assert len(filler) > FULL_RENDER_MAX_CHARS  # rendered in steps
    text = f"{filler}\n\nThe kingfisher dives."
    view = shown(transcript, MessageData(id="r", role="assistant", content=text))
    transcript.scroll_to("r", query="kingfisher")
    qtbot.waitUntil(lambda: not view.body.is_rendering())
    qtbot.waitUntil(lambda: bool(view.match_ranges()))
    assert view.match_ranges() == positions(view.body.plain_text(), "kingfisher")


def test_marks_survive_a_new_render_of_the_message(transcript: TranscriptView) -> None:
    view = shown(transcript, MessageData(id="r", role="assistant", content="A heron."))
    transcript.scroll_to("r", query="heron")
    transcript.update_message(MessageData(id="r", role="assistant", content="Two heron, heron"))
    assert view.match_ranges() == [(4, 9), (11, 16)]


def test_a_marked_user_message_given_a_new_text_is_marked_in_the_new_text(
    transcript: TranscriptView,
) -> None:
    view = shown(transcript, MessageData(id="u", role="user", content="one heron"))
    transcript.scroll_to("u", query="heron")
    text = "<b>heron</b>, then a heron"
    transcript.update_message(MessageData(id="u", role="user", content=text))
    assert view.match_ranges() == positions(text, "heron")
    label = view.findChild(QLabel, "userText")
    assert label is not None
    assert "&lt;b&gt;" in label.text()  # the new text, escaped

"""Long replies stream with bounded work per flush; tables and inline code render cleanly."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QTextDocument
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.markdown import (
    PARSE_STATS,
    ProseBlock,
    SettledScanner,
    render,
    split_settled,
)
from flarechat.ui.transcript.markdown_view import (
    BIG_BLOCK_CHARS,
    RAW_CHUNK_CHARS,
    SETTLE_BUDGET_CHARS,
    TAIL_RENDER_MAX_CHARS,
    CodeBlockWidget,
    MarkdownView,
    ProseLabel,
    RawChunk,
)
from flarechat.ui.transcript.message_view import MessageData
from flarechat.ui.transcript.transcript import TranscriptView

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
#: Big enough for hundreds of settled blocks and many flushes, small enough to stay fast.
LONG_REPLY_CHARS = 60_000
DELTA_CHARS = 700
#: Whatever the reply's length, one update parses at most this much Markdown.
PARSE_BOUND = SETTLE_BUDGET_CHARS + BIG_BLOCK_CHARS + TAIL_RENDER_MAX_CHARS

SECTION = """Paragraph {n} explains why a renderer keeps settled blocks and re-renders the tail.

- item {n} one
- item {n} two

```python
def step_{n}(x):
    return x + {n}
```

"""


def long_reply(size: int) -> str:
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        parts.append(SECTION.format(n=n))
        n += 1
    return "".join(parts)


def deltas(text: str, size: int = DELTA_CHARS) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def shown_text(view: MarkdownView) -> str:
    """What the user reads: prose as plain text, code and raw chunks as they are."""
    parts: list[str] = []
    for widget in view.block_widgets():
        if isinstance(widget, ProseLabel):
            doc = QTextDocument()
            doc.setHtml(widget.text())
            parts.append("\n" + doc.toPlainText())
        elif isinstance(widget, CodeBlockWidget):
            parts.append("\n" + widget.block.code)
        else:
            parts.append(widget.text())  # chunks of one block continue each other
    return "".join(parts)


def words(text: str) -> list[str]:
    return [w for w in text.replace("```python", " ").replace("```", " ").split() if w != "-"]


def test_scanner_agrees_with_split_settled_as_text_grows() -> None:
    text = long_reply(3_000) + "| a | b |\n|---|---|\n| 1 | 2 |\n\ntail"
    scanner = SettledScanner()
    for end in range(len(text) + 1):
        scanner.feed(text[:end])
        assert scanner.settled_end == len(split_settled(text[:end])[0])


def test_long_reply_parses_a_bounded_amount_per_update(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    text = long_reply(LONG_REPLY_CHARS)
    shown = ""
    for delta in deltas(text):
        shown += delta
        before = PARSE_STATS.chars
        view.stream_markdown(shown)
        assert PARSE_STATS.chars - before <= PARSE_BOUND
    # A label per code block, prose between them merged: not a widget per Markdown block.
    assert len(view.block_widgets()) <= 2 * text.count("```python") + 1
    before = PARSE_STATS.chars
    view.set_markdown(text)  # finishing a streamed reply renders only its tail
    assert PARSE_STATS.chars - before <= PARSE_BOUND
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert words(shown_text(view)) == words(text)


def test_giant_code_block_streams_by_appending_plain_chunks(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    code = "".join(f"value_{i} = compute({i})\n" for i in range(4_000))
    text = "Here:\n\n```python\n" + code
    parsed_before = PARSE_STATS.chars
    shown = ""
    for delta in deltas(text, 1_000):
        shown += delta
        view.stream_markdown(shown)
        assert view.set_chars <= RAW_CHUNK_CHARS + 1_000  # appended, never re-set whole
    assert PARSE_STATS.chars - parsed_before <= len(deltas(text, 1_000)) * PARSE_BOUND // 8
    assert any(isinstance(w, RawChunk) for w in view.block_widgets())
    view.stream_markdown(shown + "```\n\nAfter.")
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert words(shown_text(view)) == words(text + "\nAfter.")


def test_a_long_reply_streams_through_the_transcript_and_reads_exactly(qtbot: QtBot) -> None:
    transcript = TranscriptView()
    qtbot.addWidget(transcript)
    transcript.resize(720, 480)
    transcript.show()
    text = long_reply(LONG_REPLY_CHARS // 2)
    transcript.begin_reply("a1", model=MODEL)
    for index, delta in enumerate(deltas(text, 97)):
        transcript.append_text("a1", delta)
        if index % 20 == 0:
            transcript.flush()
    transcript.flush()
    transcript.finish_reply("a1", MessageData(id="a1", role="assistant", content=text, model=MODEL))
    view = transcript.view_for("a1")
    assert view is not None
    qtbot.waitUntil(lambda: not view.body.is_rendering())
    assert words(shown_text(view.body)) == words(text)


@pytest.mark.parametrize(
    "partial",
    [
        "Intro\n\n| Model | TTFT |",
        "Intro\n\n| Model | TTFT |\n",
        "Intro\n\n| Model | TTFT |\n|--",
        "Intro\n\n| Model | TTFT |\n|---|---|\n| llama | 0.4",
    ],
)
def test_half_received_table_rows_never_show_pipes(qtbot: QtBot, partial: str) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.stream_markdown(partial)
    assert "|" not in shown_text(view)
    assert "Intro" in shown_text(view)


def test_inline_code_padding_never_wraps_away_from_the_code(qtbot: QtBot) -> None:
    blocks = render("Call `self.client.stream_chat` now, or `x` later.")
    html = "".join(b.html for b in blocks if isinstance(b, ProseBlock))
    host = QWidget()
    qtbot.addWidget(host)
    for width in range(60, 400, 3):
        doc = QTextDocument()
        doc.setDefaultFont(QFont("DejaVu Sans", 9))
        doc.setHtml(html)
        doc.setTextWidth(width)
        doc.size()  # lays it out
        block = doc.begin()
        layout = block.layout()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            text = block.text()[line.textStart() : line.textStart() + line.textLength()]
            # A line ending in the opening pad leaves a sliver of code background behind.
            assert not text.rstrip(" ").endswith((" \u200a", " \xa0")), (width, text)

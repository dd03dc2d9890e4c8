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
    SETTLE_BUDGET_CHARS,
    TABLES_PER_PAGE,
    TAIL_RENDER_MAX_CHARS,
    MarkdownView,
)
from flarechat.ui.transcript.message_view import MessageData
from flarechat.ui.transcript.transcript import TranscriptView

MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
#: Big enough for hundreds of settled blocks and many flushes, small enough to stay fast.
LONG_REPLY_CHARS = 60_000
DELTA_CHARS = 700
#: Whatever the reply's length, one update parses at most this much Markdown.
PARSE_BOUND = SETTLE_BUDGET_CHARS + BIG_BLOCK_CHARS + TAIL_RENDER_MAX_CHARS
#: Settled Markdown parsed by one update of a burst: about a frame's work (~16 ms).
FRAME_PARSE_CHARS = 2_500

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


def words(text: str) -> list[str]:
    """The words a reader sees, from Markdown or from the body's plain text (fences, list
    bullets and each code block's "python | Copy" header aside)."""
    skipped = {"", "-", "\u00b7", "python", "Copy"}
    return [w.strip("`") for w in text.split() if w.strip("`") not in skipped]


def widget_count(view: QWidget) -> int:
    return len(view.findChildren(QWidget))


def test_scanner_agrees_with_split_settled_as_text_grows() -> None:
    text = long_reply(3_000) + "| a | b |\n|---|---|\n| 1 | 2 |\n\ntail"
    scanner = SettledScanner()
    for end in range(len(text) + 1):
        scanner.feed(text[:end])
        assert scanner.settled_end == len(split_settled(text[:end])[0])


def test_long_reply_parses_a_bounded_amount_per_update(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    text = long_reply(LONG_REPLY_CHARS)
    shown = ""
    widgets = widget_count(view)
    for delta in deltas(text):
        shown += delta
        before = PARSE_STATS.chars
        view.stream_markdown(shown)
        assert PARSE_STATS.chars - before <= PARSE_BOUND
        assert view.set_chars <= 2 * PARSE_BOUND  # HTML handed to Qt: new blocks and the tail
    # One document, whatever the reply's length: no widget per block, code block or chunk.
    assert widget_count(view) == widgets
    before = PARSE_STATS.chars
    view.set_markdown(text)  # finishing a streamed reply renders only its tail
    assert PARSE_STATS.chars - before <= PARSE_BOUND
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert words(view.plain_text()) == words(text)
    assert len(view.code_blocks()) == text.count("```python")


def test_a_burst_of_settled_text_is_rendered_about_a_frame_at_a_time(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    text = long_reply(20_000) + "tail"
    before = PARSE_STATS.chars
    view.stream_markdown(text)  # a network stall ends: 20 kB arrive in one update
    assert PARSE_STATS.chars - before <= FRAME_PARSE_CHARS + len("tail")
    assert view.is_rendering()  # the rest on the following loop turns
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert words(view.plain_text()) == words(text)
    assert len(view.code_blocks()) == text.count("```python")


def test_a_tail_waits_while_settled_text_is_still_being_rendered(qtbot: QtBot) -> None:
    """A burst renders a frame's worth of settled blocks; the open tail after them is not
    parsed and inserted on each of those updates only to be deleted by the next one."""
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    tail = "An open paragraph " * 30
    text = long_reply(SETTLE_BUDGET_CHARS + 600) + tail  # what is left: a Markdown tail
    parses = PARSE_STATS.chars
    view.stream_markdown(text)
    assert PARSE_STATS.chars - parses <= FRAME_PARSE_CHARS  # settled blocks only
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert PARSE_STATS.chars - parses <= len(text) + len(tail)  # the tail once, at the end
    assert words(view.plain_text()) == words(text)


def test_a_stream_update_while_catching_up_leaves_the_rendering_to_the_next_step(
    qtbot: QtBot,
) -> None:
    """A flush that comes while a burst is still being rendered a frame at a time only hands
    over the longer text: rendering it in the same loop pass as the catch-up step would
    double that pass's work."""
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    text = long_reply(SETTLE_BUDGET_CHARS * 4)
    view.stream_markdown(text)
    assert view.is_rendering()
    renders, parses = view.render_count, PARSE_STATS.chars
    more = text + long_reply(SETTLE_BUDGET_CHARS)
    view.stream_markdown(more)
    assert (view.render_count, PARSE_STATS.chars, view.set_chars) == (renders, parses, 0)
    assert view.is_rendering()  # the pending step goes on, now up to the longer text
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert words(view.plain_text()) == words(more)


def test_giant_code_block_streams_by_appending_plain_text(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    code = "".join(f"value_{i} = compute({i})\n" for i in range(4_000))
    text = "Here:\n\n```python\n" + code
    parsed_before = PARSE_STATS.chars
    shown = ""
    for delta in deltas(text, 1_000):
        shown += delta
        view.stream_markdown(shown)
        assert view.set_chars <= TAIL_RENDER_MAX_CHARS + 1_000  # appended, never re-set whole
    assert PARSE_STATS.chars - parsed_before <= len(deltas(text, 1_000)) * PARSE_BOUND // 8
    assert "value_3999 = compute(3999)" in view.plain_text()
    view.stream_markdown(shown + "```\n\nAfter.")
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert words(view.plain_text()) == words(text + "\nAfter.")


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
    assert words(view.body.plain_text()) == words(text)


def test_streaming_keeps_the_widget_count_and_never_lays_the_whole_body_out_again(
    qtbot: QtBot,
) -> None:
    transcript = TranscriptView()
    qtbot.addWidget(transcript)
    transcript.resize(720, 480)
    transcript.show()
    text = long_reply(LONG_REPLY_CHARS)
    transcript.begin_reply("a1", model=MODEL)
    counts: set[int] = set()
    for delta in deltas(text, 1_000):
        transcript.append_text("a1", delta)
        transcript.flush()
        qtbot.wait(1)  # layout and paint, as between two flushes
        counts.add(widget_count(transcript))
    view = transcript.view_for("a1")
    assert view is not None
    assert len(counts) == 1  # the message grows inside one document, not by widgets
    # Laid out whole once per width it had (first, real, after the scroll bar appeared):
    # never per flush (Qt also asks at trial widths; those are answered without a layout).
    assert view.body.layout_count <= 3 < len(deltas(text, 1_000))


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
    assert "|" not in view.plain_text()
    assert "Intro" in view.plain_text()


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


def test_a_reply_full_of_tables_starts_a_new_page_every_few_dozen_tables(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    table = "| Model | TTFT |\n|:--|--:|\n| llama | 0.4 s |\n\nSome words.\n\n"
    text = table * (TABLES_PER_PAGE * 3)
    shown = ""
    for delta in deltas(text, 300):
        shown += delta
        view.stream_markdown(shown)
    qtbot.waitUntil(lambda: not view.is_rendering())
    # Qt's layout visits every table (frame) of a document on each change: bounded per page.
    per_page = [len(doc.rootFrame().childFrames()) for doc in view.documents()]
    assert max(per_page) <= TABLES_PER_PAGE + SETTLE_BUDGET_CHARS // len(table)
    assert len(per_page) <= 4
    assert sum(per_page) == TABLES_PER_PAGE * 3
    assert view.plain_text().count("llama") == TABLES_PER_PAGE * 3


def test_a_table_row_still_arriving_does_not_render_the_tail_again(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    table = "Intro\n\n| Model | TTFT |\n|---|---|\n"
    view.stream_markdown(table)
    shown = view.plain_text()
    parses = PARSE_STATS.calls
    for piece in ("| lla", "| llama | 0.", "| llama | 0.4 s |"):
        view.stream_markdown(table + piece)
        assert view.set_chars == 0  # nothing handed to Qt: the row is held back
        assert view.plain_text() == shown
    assert PARSE_STATS.calls == parses
    view.stream_markdown(table + "| llama | 0.4 s |\n")
    assert view.set_chars > 0
    assert "0.4 s" in view.plain_text()


def test_the_final_render_shows_the_row_streaming_held_back(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    text = "Intro\n\n| Model | TTFT |\n|---|---|\n| llama | 0.4 s |"
    view.stream_markdown(text)
    assert "0.4 s" not in view.plain_text()
    view.set_markdown(text)
    assert "0.4 s" in view.plain_text()
    assert "|" not in view.plain_text()

"""Settled text caught up after a burst is parsed (markdown-it, pygments) in one loop pass and
inserted into the document in the next: no pass holds both, and the paint follows the insert
alone (issue #12, streaming.p99_stall). What is shown is the same as rendering it at once."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from flarechat.ui.transcript.markdown import PARSE_STATS
from flarechat.ui.transcript.markdown_view import (
    COPY_CODE_HREF,
    SETTLE_BUDGET_CHARS,
    SPLIT_MIN_CHARS,
    MarkdownView,
)

SECTION = """Section {n} says why a piece is parsed in one pass and inserted in the next.

```python
def piece_{n}():
    return {n}
```

"""


def sections(size: int, *, first: int = 0) -> str:
    parts: list[str] = []
    n = first
    while sum(map(len, parts)) < size:
        parts.append(SECTION.format(n=n))
        n += 1
    return "".join(parts)


def copy_links(document: QTextDocument) -> list[str]:
    """The Copy links' hrefs, in document order."""
    hrefs: list[str] = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            href = iterator.fragment().charFormat().anchorHref()
            if href.startswith(COPY_CODE_HREF) and (not hrefs or hrefs[-1] != href):
                hrefs.append(href)
            iterator += 1
        block = block.next()
    return hrefs


def shown_at_once(text: str, qtbot: QtBot) -> MarkdownView:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    view.set_markdown(text)
    return view


def test_a_burst_is_parsed_in_one_pass_and_inserted_in_the_next(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    document = view.documents()[0]
    parses_at_change: list[int] = []
    document.contentsChange.connect(lambda *_: parses_at_change.append(PARSE_STATS.calls))
    text = sections(SETTLE_BUDGET_CHARS * 3) + "An open tail"
    before = PARSE_STATS.calls
    view.stream_markdown(text)
    parsed = PARSE_STATS.calls
    assert parsed > before  # the first piece is parsed ...
    assert (view.set_chars, view.plain_text()) == (0, "")  # ... not shown
    assert view.is_rendering()
    parses_at_change.clear()  # (starting the stream emptied the document)
    qtbot.waitUntil(lambda: bool(parses_at_change))
    assert parses_at_change[0] == parsed  # the next pass inserts it without parsing first
    qtbot.waitUntil(lambda: not view.is_rendering())
    at_once = shown_at_once(text, qtbot)
    assert view.plain_text() == at_once.plain_text()
    assert view.code_blocks() == at_once.code_blocks()
    assert copy_links(document) == [f"{COPY_CODE_HREF}{i}" for i in range(text.count("```py"))]


def test_a_little_settled_text_is_parsed_and_inserted_at_once(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    text = "A short settled paragraph.\n\nAn open tail"
    assert len(text) < SPLIT_MIN_CHARS
    view.stream_markdown(text)
    assert not view.is_rendering()
    assert "short settled paragraph" in view.plain_text()
    assert "open tail" in view.plain_text()


def test_a_piece_parsed_for_text_that_was_replaced_is_never_inserted(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    view.stream_markdown(sections(SETTLE_BUDGET_CHARS * 2))  # a piece parsed, not inserted
    assert view.is_rendering()
    other = sections(SETTLE_BUDGET_CHARS * 2, first=100)  # e.g. the reply regenerated
    view.stream_markdown(other)
    qtbot.waitUntil(lambda: not view.is_rendering())
    view.set_markdown(other)
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert view.plain_text() == shown_at_once(other, qtbot).plain_text()
    assert "Section 0 " not in view.plain_text()


def test_a_final_render_uses_the_piece_the_stream_parsed(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(600, 100)
    text = sections(SETTLE_BUDGET_CHARS * 4)
    view.stream_markdown(text)  # a piece parsed, not inserted
    parsed = PARSE_STATS.chars
    view.set_markdown(text)  # the reply ends before the next pass
    qtbot.waitUntil(lambda: not view.is_rendering())
    assert PARSE_STATS.chars - parsed <= len(text)  # nothing parsed twice
    at_once = shown_at_once(text, qtbot)
    assert view.plain_text() == at_once.plain_text()
    assert copy_links(view.documents()[0]) == copy_links(at_once.documents()[0])

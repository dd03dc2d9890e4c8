"""A compare column shows a finished reply as the chat does: a styled table whose header row
is one line, highlighted code with a Copy link, the prompt quoted above it, in either theme."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication, QTextDocument, QTextTable
from PySide6.QtWidgets import QApplication, QTextBrowser, QToolButton
from pytestqt.qtbot import QtBot

from flarechat.api.models import ModelInfo
from flarechat.core.lab.compare import ColumnMetrics
from flarechat.ui.lab.compare_column import CompareColumn
from flarechat.ui.shared import theme
from flarechat.ui.transcript.markdown_view import COPY_CODE_HREF
from flarechat.ui.transcript.message_parts import ReasoningSection

BOLD = 600
MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
CODE = "def greet(name: str) -> str:\n    return name"
REPLY = f"""## Capacity

Some *prose*.

```python
{CODE}
```

| Shape | Text lives in | Streams |
|---|---|---|
| Think | `<think>` inline | yes |
| OpenAI | `choices[0].delta` | yes |

That is all.
"""


def _column(qtbot: QtBot) -> CompareColumn:
    column = CompareColumn(models=[ModelInfo(MODEL)], model=MODEL)
    qtbot.addWidget(column)
    column.resize(330, 700)  # a narrow column, as three or four side by side are
    column.show()
    column.begin_round("Why does a request get a 429?")
    for piece in ("Some ", "text"):
        column.append_text(piece)
    column.finish("done", REPLY, ColumnMetrics(status="done"))
    return column


def _reply_document(column: CompareColumn) -> QTextDocument:
    [document] = column.round_views()[-1].reply.documents()
    return document


def _table(column: CompareColumn) -> QTextTable:
    frames = _reply_document(column).rootFrame().childFrames()
    tables = [f for f in frames if isinstance(f, QTextTable)]
    assert len(tables) == 1
    return tables[0]


def test_the_table_header_is_one_bold_line_on_a_shaded_row(qtbot: QtBot) -> None:
    column = _column(qtbot)
    table = _table(column)
    layout = _reply_document(column).documentLayout()
    tops = []
    for col, name in enumerate(("Shape", "Text lives in", "Streams")):
        cell = table.cellAt(0, col)
        block = cell.firstCursorPosition().block()
        assert block.text() == name  # the name is the cell's first line, nothing above it
        assert cell.firstCursorPosition().blockNumber() == cell.lastCursorPosition().blockNumber()
        assert cell.firstCursorPosition().charFormat().fontWeight() >= BOLD
        assert cell.format().background().color().name() == theme.current_palette().alt_base
        tops.append(layout.blockBoundingRect(block).top())
    assert len(set(tops)) == 1, tops  # every header name on one baseline: none sits low


def test_code_is_highlighted_and_its_copy_link_copies_it(qtbot: QtBot) -> None:
    column = _column(qtbot)
    assert column.code_blocks() == [CODE]
    assert f"{COPY_CODE_HREF}0" in _reply_document(column).toHtml()
    assert "python" in column.reply_text()
    reply = column.round_views()[-1].reply
    page = reply.findChild(QTextBrowser)
    assert page is not None
    page.anchorClicked.emit(QUrl(f"{COPY_CODE_HREF}0"))
    assert QGuiApplication.clipboard().text() == CODE


def test_the_prompt_stays_quoted_above_the_reply(qtbot: QtBot) -> None:
    column = _column(qtbot)
    text = column.reply_text()
    assert text.index("Why does a request get a 429?") < text.index("Capacity")
    assert "Some text" not in text  # the streamed draft gave way to the finished reply


def test_a_theme_switch_renders_the_replies_in_the_new_colours(qtbot: QtBot) -> None:
    column = _column(qtbot)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply_theme(app, "dark")  # Qt posts the palette change to every widget
    try:
        qtbot.waitUntil(lambda: _header_colour(column) == theme.DARK.alt_base)
        assert column.code_blocks() == [CODE]
    finally:
        theme.apply_theme(app, "light")
    qtbot.waitUntil(lambda: _header_colour(column) == theme.LIGHT.alt_base)


def _header_colour(column: CompareColumn) -> str:
    return _table(column).cellAt(0, 0).format().background().color().name()


STREAMED = "## Streaming replies\n\nSome **bold** words.\n\n```python\nx = 1\n```\n\n| A | B |\n"


def _fresh_column(qtbot: QtBot) -> CompareColumn:
    column = CompareColumn(models=[ModelInfo(MODEL)], model=MODEL)
    qtbot.addWidget(column)
    column.resize(330, 700)
    column.show()
    column.begin_round("Explain streaming")
    return column


def test_a_streaming_reply_is_rendered_as_markdown_not_shown_raw(qtbot: QtBot) -> None:
    column = _fresh_column(qtbot)
    for piece in STREAMED.split(" "):
        column.append_text(piece + " ")
    reply = column.round_views()[-1].reply
    qtbot.waitUntil(lambda: "x = 1" in reply.plain_text())  # the next flush paints it
    shown = reply.plain_text()
    assert "Streaming replies" in shown
    for raw in ("## ", "**", "```"):
        assert raw not in shown, raw  # rendered, as the chat renders a streaming reply
    assert column.code_blocks() == ["x = 1"]
    first = reply.documents()[0].firstBlock()
    assert first.blockFormat().headingLevel() == 2


def _expanded(section: ReasoningSection) -> bool:
    """Read through a call: mypy keeps a property narrowed across the calls that change it."""
    return section.expanded


def _toggle_text(section: ReasoningSection) -> str:
    toggle = section.findChild(QToolButton)
    assert toggle is not None
    return toggle.text()


def test_reasoning_streams_open_in_a_thinking_section_then_folds(qtbot: QtBot) -> None:
    column = _fresh_column(qtbot)
    view = column.round_views()[-1]
    column.append_reasoning("The user wants a short answer.")
    qtbot.waitUntil(lambda: view.reasoning.text == "The user wants a short answer.")
    assert view.reasoning.isVisibleTo(column)
    assert _expanded(view.reasoning)  # open while the model thinks, as in the chat
    assert _toggle_text(view.reasoning) == "Thinking\N{HORIZONTAL ELLIPSIS}"
    column.append_text("Answer.")
    qtbot.waitUntil(lambda: "Answer." in view.reply.plain_text())
    assert not _expanded(view.reasoning)  # the answer came: folded, still there to open
    assert _toggle_text(view.reasoning) == "Thinking"  # no longer "Thinking…"
    column.finish(
        "done", "Answer.", ColumnMetrics(status="done"), reasoning="The user wants a short answer."
    )
    assert view.reasoning.isVisibleTo(column)
    assert _toggle_text(view.reasoning) == "Thinking"


def test_blind_figures_hide_cost_and_speed_until_shown(qtbot: QtBot) -> None:
    column = _fresh_column(qtbot)
    metrics = ColumnMetrics(
        status="done", ttft=0.42, tokens_per_second=55.0, prompt_tokens=12,
        completion_tokens=80, neurons=3.5, cost_usd=0.00012, queue_wait=1.5,
    )  # fmt: skip
    column.finish("done", "Answer.", metrics, hide_figures=True)
    hidden = column.metrics.text()
    assert "80" in hidden  # the tokens stay: they do not name the model
    for telling in ("$", "TTFT", "tok/s", "neurons", "queue"):
        assert telling not in hidden, telling
    assert "after your vote" in hidden
    column.show_figures(hidden=False)
    shown = column.metrics.text()
    for figure in ("$", "TTFT", "neurons", "queue"):
        assert figure in shown, figure

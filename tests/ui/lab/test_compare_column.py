"""A compare column shows a finished reply as the chat does: a styled table whose header row
is one line, highlighted code with a Copy link, the prompt quoted above it, in either theme."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication, QTextTable
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from flarechat.api.models import ModelInfo
from flarechat.core.lab.compare import ColumnMetrics
from flarechat.ui.lab.compare_column import CompareColumn
from flarechat.ui.shared import theme
from flarechat.ui.transcript.markdown_view import COPY_CODE_HREF

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


def _table(column: CompareColumn) -> QTextTable:
    tables = [
        f for f in column.body.document().rootFrame().childFrames() if isinstance(f, QTextTable)
    ]
    assert len(tables) == 1
    return tables[0]


def test_the_table_header_is_one_bold_line_on_a_shaded_row(qtbot: QtBot) -> None:
    column = _column(qtbot)
    table = _table(column)
    layout = column.body.document().documentLayout()
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
    html = column.body.toHtml()
    assert f"{COPY_CODE_HREF}0" in html
    assert "python" in column.reply_text()
    column.body.anchorClicked.emit(QUrl(f"{COPY_CODE_HREF}0"))
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

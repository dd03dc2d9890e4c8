"""Markdown rendering: blocks, Qt HTML, highlighting, settled/tail split, and the body document."""

from __future__ import annotations

import math
import re

import pytest
from PySide6.QtCore import QSize, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QPixmap, QTextTable
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from transcript_helpers import click_link, code_colours, is_highlighted

from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import (
    DARK,
    LIGHT,
    Scheme,
    apply_theme,
    current_palette,
    monospace_family,
)
from flarechat.ui.transcript.markdown import (
    GRID_LINE_PX,
    PARAGRAPH_GAP_PX,
    TABLE_CELL_PADDING_PX,
    CodeBlock,
    ProseBlock,
    highlight,
    open_link,
    render,
    split_settled,
)
from flarechat.ui.transcript.markdown_view import COPY_CODE_HREF, MarkdownView

OPAQUE = 255

REPLY = """# Plan

Some *prose* with `x = 1` and a [link](https://example.com/a?b=1).

| Name | Value |
|:-----|------:|
| a    | 1     |

- one
- two

```python
def f(x):
    return x * 2
```

Done.
"""


def prose_html(markdown: str) -> str:
    blocks = render(markdown)
    assert all(isinstance(block, ProseBlock) for block in blocks)
    return "".join(block.html for block in blocks if isinstance(block, ProseBlock))


def test_heading_list_link_and_inline_code_become_qt_html() -> None:
    html = prose_html("# Title\n\n- a\n- b\n\n1. c\n\nSee [docs](https://x.dev) and `run()`.\n")
    assert "<h1" in html
    assert "Title</h1>" in html
    assert "<ul" in html
    assert "<li>a</li>" in html
    assert "<ol" in html
    assert '<a href="https://x.dev">docs</a>' in html
    assert "<code" in html
    assert monospace_family() in html
    assert "run()" in html


def test_table_gets_a_grid_and_padding_qt_understands() -> None:
    html = prose_html("| a | b |\n|:--|--:|\n| 1 | 2 |\n")
    assert f'<table border="0" cellspacing="{GRID_LINE_PX}" cellpadding=' in html
    assert f'bgcolor="{LIGHT.border}"' in html  # the lines: the table's own fill
    assert re.search(f'<th [^>]*bgcolor="{LIGHT.alt_base}"', html)  # the header row shaded
    assert re.search(f'<td [^>]*bgcolor="{LIGHT.base}"', html)  # the others on the background
    assert "collapse" not in html  # Qt's collapsed borders look up neighbours on each paint
    assert 'align="right"' in html  # Qt ignores CSS text-align in cells, not the attribute
    assert "<th" in html
    assert "<td" in html


def test_raw_html_from_the_model_is_shown_as_text_and_images_as_links() -> None:
    html = prose_html('<img src="/etc/x.png"> <b>bold</b>\n\n![chart](https://x.dev/c.png)\n')
    assert "<b>" not in html
    assert "&lt;b&gt;" in html
    assert "<img" not in html
    assert '<a href="https://x.dev/c.png">[image: chart]</a>' in html


def test_strikethrough() -> None:
    assert "<s>gone</s>" in prose_html("~~gone~~\n")


def test_reply_splits_into_prose_and_code_blocks() -> None:
    blocks = render(REPLY)
    kinds = [type(block).__name__ for block in blocks]
    assert kinds == ["ProseBlock", "CodeBlock", "ProseBlock"]
    code = blocks[1]
    assert code == CodeBlock(language="python", code="def f(x):\n    return x * 2", closed=True)


@pytest.mark.parametrize(
    ("markdown", "closed"),
    [
        ("```js\nlet a = 1\n```\n", True),
        ("```js\nlet a = 1\n```", True),
        ("````\ncode\n`````\n", True),
        ("~~~\ncode\n~~~\n", True),
        ("```js\nlet a = 1\n", False),
        ("```js\nlet a = 1\n``", False),
        ("````\ncode\n```\n", False),
        ("```\n", False),
    ],
)
def test_code_fence_knows_whether_it_is_closed(markdown: str, closed: bool) -> None:
    blocks = render(markdown)
    assert len(blocks) == 1
    assert isinstance(blocks[0], CodeBlock)
    assert blocks[0].closed is closed


def test_fence_inside_a_list_stays_in_the_prose_as_monospace() -> None:
    html = prose_html("- step:\n\n  ```sh\n  ls -l\n  ```\n")
    assert "<pre" in html
    assert "ls -l" in html


def test_highlighted_code_has_pygments_spans_with_inline_styles() -> None:
    html = highlight("def f():\n    return 1\n", "python", palette=LIGHT)
    assert '<span style="' in html
    assert "def" in html
    assert "class=" not in html
    assert html.startswith("<pre")
    assert monospace_family() in html


def test_light_and_dark_highlighting_use_different_styles() -> None:
    code = "def f():\n    return 'x'\n"
    assert highlight(code, "python", palette=LIGHT) != highlight(code, "python", palette=DARK)


def test_unknown_language_is_plain_but_escaped() -> None:
    html = highlight("a < b && c", "no-such-language")
    assert "a &lt; b &amp;&amp; c" in html


@pytest.mark.parametrize(
    ("text", "settled"),
    [
        ("one\n\ntwo", "one\n\n"),
        ("one\n\ntwo\n\n", "one\n\ntwo\n\n"),
        ("one\ntwo", ""),
        ("para\n\n```py\nx = 1\n\ny = 2\n", "para\n\n"),
        ("```py\nx = 1\n```\nmore", "```py\nx = 1\n```\n"),
        ("```py\nx = 1\n```", ""),
        ("~~~\na\n```\n\nb\n", ""),
        ("a\n\n", "a\n\n"),
    ],
)
def test_split_settled(text: str, settled: str) -> None:
    head, tail = split_settled(text)
    assert head == settled
    assert head + tail == text


def test_settled_part_only_grows_while_text_is_appended() -> None:
    previous = ""
    for end in range(len(REPLY) + 1):
        settled, _tail = split_settled(REPLY[:end])
        assert settled.startswith(previous)
        previous = settled
    assert previous == REPLY[: REPLY.index("Done.")]  # the last paragraph may still grow


def test_links_open_in_the_browser_only_for_safe_schemes(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []

    def fake_open(url: QUrl) -> bool:
        opened.append(url.toString())
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(fake_open))
    view = MarkdownView()
    qtbot.addWidget(view)
    view.set_markdown("[x](https://example.com)")
    click_link(view, "https://example.com")
    assert open_link("file:///etc/passwd") is False
    assert open_link("javascript:alert(1)") is False
    assert opened == ["https://example.com"]


def test_code_block_copy_link_copies_code_and_highlights_only_when_closed(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.stream_markdown("Code:\n\n```python\nprint('hi')\n")
    assert not is_highlighted(view)
    assert view.code_blocks() == []  # an open fence may still change: nothing to copy yet
    view.set_markdown("Code:\n\n```python\nprint('hi')\n```\n")
    assert is_highlighted(view)
    assert view.code_blocks() == ["print('hi')"]
    assert f'href="{COPY_CODE_HREF}0"' in view.documents()[0].toHtml()
    with qtbot.waitSignal(view.code_copied) as copied:
        click_link(view, f"{COPY_CODE_HREF}0")
    assert copied.args == [0]
    assert QGuiApplication.clipboard().text() == "print('hi')"


def test_streaming_appends_settled_blocks_once(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.stream_markdown("First paragraph.\n\nSecond")
    assert view.documents()[0].begin().text() == "First paragraph."
    settled = len("First paragraph.")
    changed: list[int] = []
    view.documents()[0].contentsChange.connect(
        lambda position, _removed, _added: changed.append(position)
    )
    for end in range(len("Second paragraph grows"), len(REPLY)):
        view.stream_markdown("First paragraph.\n\n" + "Second paragraph grows" + REPLY[:end])
    assert changed
    assert min(changed) >= settled  # the settled block is never touched again
    view.set_markdown(REPLY)
    assert view.code_blocks() == ["def f(x):\n    return x * 2"]
    assert "Done." in view.plain_text()
    assert is_highlighted(view)


def test_open_fence_while_streaming_is_plain_then_highlighted(qtbot: QtBot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.stream_markdown("Code:\n\n```python\ndef f():\n")
    assert "def f():" in view.plain_text()
    assert not is_highlighted(view)
    view.stream_markdown("Code:\n\n```python\ndef f():\n    pass\n```\n")
    assert is_highlighted(view)
    assert view.code_blocks() == ["def f():\n    pass"]


# --- theme and icons -----------------------------------------------------------------------------


def opaque_colors(pixmap: QPixmap) -> set[str]:
    image = pixmap.toImage()
    return {
        image.pixelColor(x, y).name()
        for x in range(image.width())
        for y in range(image.height())
        if image.pixelColor(x, y).alpha() == OPAQUE
    }


def test_code_is_highlighted_again_when_the_theme_changes(qtbot: QtBot, qapp: QApplication) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.show()
    view.set_markdown("```python\nx = 'dark or light'\n```\n")
    light = code_colours(view)
    apply_theme(qapp, "dark")  # Qt posts the palette change to every widget
    try:
        assert current_palette() is DARK
        qtbot.waitUntil(lambda: bool(code_colours(view)) and code_colours(view) != light)
        assert view.code_blocks() == ["x = 'dark or light'"]
    finally:
        apply_theme(qapp, "light")
    qtbot.waitUntil(lambda: code_colours(view) == light)


def test_icons_are_crisp_at_the_device_pixel_ratio_and_follow_the_theme(
    qapp: QApplication,
) -> None:
    light = icon("copy").pixmap(QSize(16, 16), 2.0)
    assert light.size() == QSize(32, 32)
    assert light.devicePixelRatio() == 2.0
    assert opaque_colors(light) == {LIGHT.text}
    apply_theme(qapp, "dark")
    try:
        assert opaque_colors(icon("copy").pixmap(QSize(16, 16), 2.0)) == {DARK.text}
    finally:
        apply_theme(qapp, "light")
    app_icon = icon("flarechat").pixmap(QSize(64, 64))
    assert len(opaque_colors(app_icon)) > 2  # the colourful app icon is never tinted


@pytest.mark.parametrize(
    "before",
    [
        "A paragraph before the table.",
        "```python\nprint('hi')\n```",
        "- a list item\n- another",
    ],
    ids=["paragraph", "code", "list"],
)
def test_a_table_keeps_a_gap_below_the_block_before_it(qtbot: QtBot, before: str) -> None:
    """A code block's shading covers its bottom margin, and Qt adds no space of its own
    before a table's frame: the table's own top margin keeps its top line off the block
    above it (measured on screen: the first row of grid colour below that block's text)."""
    view = MarkdownView()
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.set_markdown(f"{before}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    view.show()
    qtbot.waitExposed(view)
    doc = view.documents()[0]
    layout = doc.documentLayout()
    (table,) = doc.rootFrame().childFrames()
    above_ends = layout.blockBoundingRect(doc.findBlock(table.firstPosition() - 1)).bottom()
    image = view.grab().toImage()
    border = current_palette().border
    top_line = next(
        y
        for y in range(math.ceil(above_ends), image.height())
        if any(image.pixelColor(x, y).name() == border for x in range(GRID_LINE_PX + 1))
    )
    assert top_line - above_ends >= PARAGRAPH_GAP_PX - 1, (top_line, above_ends)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_table_is_drawn_as_a_one_pixel_grid_in_the_theme(
    qtbot: QtBot, qapp: QApplication, scheme: Scheme
) -> None:
    """What the user sees: border-coloured lines one pixel wide around and between the
    cells, the header row shaded, the other cells on the text's background."""
    palette = apply_theme(qapp, scheme)
    try:
        view = MarkdownView()
        qtbot.addWidget(view)
        view.resize(400, 200)
        view.set_markdown("| head | more |\n|---|---|\n| body | cell |\n")
        view.show()
        qtbot.waitExposed(view)
        doc = view.documents()[0]
        (table,) = doc.rootFrame().childFrames()
        assert isinstance(table, QTextTable)
        head, body = (
            doc.documentLayout().blockBoundingRect(
                table.cellAt(row, 0).firstCursorPosition().block()
            )
            for row in (0, 1)
        )
        image = view.grab().toImage()

        def colour(x: float, y: float) -> str:
            return image.pixelColor(round(x), round(y)).name()

        line = TABLE_CELL_PADDING_PX + GRID_LINE_PX  # from a cell's text to its line
        assert colour(head.left() - line, head.center().y()) == palette.border  # left edge
        assert colour(head.center().x(), head.top() - line) == palette.border  # top edge
        assert colour(body.center().x(), body.top() - line) == palette.border  # between rows
        assert colour(body.left() - line + 1, body.top() - line - 1) == palette.alt_base
        assert colour(head.left() - 2, head.center().y()) == palette.alt_base  # header cell
        assert colour(body.left() - 2, body.center().y()) == palette.base  # body cell
    finally:
        apply_theme(qapp, "light")

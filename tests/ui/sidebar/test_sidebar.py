"""The sidebar: date groups, snippets, and the signals behind rename/delete/activate/search."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from flarechat.ui.shared.theme import DARK, LIGHT, Palette, Scheme, apply_theme
from flarechat.ui.sidebar.hits import hit_html
from flarechat.ui.sidebar.sidebar import Sidebar, group_conversations, snippet_html


def test_conversations_are_grouped_by_day() -> None:
    class Summary:
        def __init__(self, id_: str, when: datetime, *, pinned: bool = False) -> None:
            self.id, self.title, self.pinned = id_, id_, pinned
            self.updated_at = when.timestamp()

    now = datetime(2025, 3, 12, 15, 0)
    items = [
        Summary("today", now - timedelta(hours=2)),
        Summary("yesterday", now - timedelta(days=1)),
        Summary("week", now - timedelta(days=5)),
        Summary("old", now - timedelta(days=40)),
        Summary("pinned-old", now - timedelta(days=90), pinned=True),
    ]
    groups = group_conversations(items, now=now)
    assert [(label, [s.id for s in group]) for label, group in groups] == [
        ("Pinned", ["pinned-old"]),
        ("Today", ["today"]),
        ("Yesterday", ["yesterday"]),
        ("Previous 7 days", ["week"]),
        ("Older", ["old"]),
    ]


def test_search_snippets_are_escaped_and_highlighted() -> None:
    html = snippet_html("a <b> \x02pelican\x03 here", highlight="#ff0")
    assert "&lt;b&gt;" in html
    assert "pelican</span>" in html
    assert "#ff0" in html


def test_snippet_marks_become_spans_and_no_control_character_survives() -> None:
    html = snippet_html(
        "\x02Heron\x03 at\x07 dawn,\nthen \x02herons\x03\x1b", highlight="#ffe28a", text="#111"
    )
    assert html == (
        '<span style="background-color:#ffe28a; color:#111; font-weight:600;">Heron</span>'
        " at dawn, then "
        '<span style="background-color:#ffe28a; color:#111; font-weight:600;">herons</span>'
    )


class _Summary:
    def __init__(self, id_: str, title: str, *, when: datetime, pinned: bool = False) -> None:
        self.id, self.title, self.pinned = id_, title, pinned
        self.updated_at = when.timestamp()


def test_sidebar_rename_delete_activate_and_search(qtbot: Any) -> None:
    now = datetime(2025, 3, 12, 15, 0)
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.set_conversations(
        [_Summary("a", "Alpha", when=now), _Summary("b", "Beta", when=now - timedelta(days=2))],
        now=now,
    )
    texts = [sidebar.conversations.item(i).text() for i in range(sidebar.conversations.count())]
    assert texts == ["TODAY", "Alpha", "PREVIOUS 7 DAYS", "Beta"]
    with qtbot.waitSignal(sidebar.conversation_activated) as activated:
        sidebar.conversations.setCurrentRow(3)
    assert activated.args == ["b"]
    with qtbot.waitSignal(sidebar.rename_requested) as renamed:
        sidebar.conversations.item(1).setText("  Alpha   prime ")
    assert renamed.args == ["a", "Alpha prime"]
    delete = next(a for a in sidebar.conversations.actions() if a.text() == "Delete conversation")
    with qtbot.waitSignal(sidebar.delete_requested) as deleted:
        delete.trigger()
    assert deleted.args == ["b"]
    with qtbot.waitSignal(sidebar.search_requested, timeout=3000) as searched:
        sidebar.search_field.setText("pelican")
    assert searched.args == ["pelican"]
    with qtbot.waitSignal(sidebar.search_requested) as cleared:
        sidebar.search_field.clear()
    assert cleared.args == [""]


class _Hit:
    conversation_id, conversation_title, message_id = "c1", "Birds", "m1"
    snippet = "a grey \x02heron\x03 stood"


def test_search_results_mark_matches_in_the_palette_colours(qtbot: Any, qapp: Any) -> None:
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.search_field.setText("heron")
    themes: tuple[tuple[Scheme, Palette], ...] = (("dark", DARK), ("light", LIGHT))
    try:
        for scheme, palette in themes:
            apply_theme(qapp, scheme)
            sidebar.set_search_results([_Hit()])
            mark = f"background-color:{palette.match_bg}; color:{palette.match_text};"
            assert mark in hit_html(sidebar.results.model().index(0, 0))
    finally:
        apply_theme(qapp, "light")  # the session's scheme
    assert DARK.match_bg != LIGHT.match_bg


def test_pinning_the_open_conversation_keeps_it_open(qtbot: Any) -> None:
    """Issue 11 #2: the refill after Pin moved Qt's current row and opened another chat."""
    now = datetime(2025, 3, 12, 15, 0)
    items = [
        _Summary("a", "Alpha", when=now - timedelta(minutes=1)),
        _Summary("b", "Beta", when=now - timedelta(minutes=2)),
        _Summary("c", "Gamma", when=now - timedelta(minutes=3)),
    ]
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.show()
    sidebar.set_conversations(items, now=now)
    sidebar.set_current("b")
    sidebar.conversations.setFocus()
    opened: list[str] = []
    sidebar.conversation_activated.connect(opened.append)
    items[1].pinned = True
    sidebar.set_conversations(items, now=now)
    assert opened == []
    assert sidebar.current_id() == "b"
    current = sidebar.conversations.currentItem()
    assert current is not None
    assert current.text() == "Beta"


def test_down_and_enter_in_the_search_field_reach_the_results(qtbot: Any) -> None:
    """Issue 11 #7: Down moves into the results, Enter opens the first one."""
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.show()
    sidebar.search_field.setText("heron")
    sidebar.set_search_results([_Hit()])  # the answer to "heron"

    sidebar.search_field.setFocus()
    with qtbot.waitSignal(sidebar.search_hit_activated) as opened:
        qtbot.keyClick(sidebar.search_field, Qt.Key.Key_Return)
    assert opened.args == ["c1", "m1"]
    qtbot.keyClick(sidebar.search_field, Qt.Key.Key_Down)
    assert sidebar.focusWidget() is sidebar.results
    assert sidebar.results.currentRow() == 0


def test_down_in_the_search_field_moves_to_the_first_conversation_not_a_header(
    qtbot: Any,
) -> None:
    now = datetime(2025, 3, 12, 15, 0)
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.show()
    sidebar.set_conversations([_Summary("a", "Alpha", when=now)], now=now)
    sidebar.search_field.setFocus()
    with qtbot.waitSignal(sidebar.conversation_activated) as opened:
        qtbot.keyClick(sidebar.search_field, Qt.Key.Key_Down)
    assert opened.args == ["a"]
    assert sidebar.focusWidget() is sidebar.conversations


def test_search_snippets_show_plain_text_not_markdown(qtbot: Any) -> None:
    """Issue 11 #9: a snippet cut from a Markdown reply reads as prose."""

    class MarkdownHit(_Hit):
        snippet = "## Setup\nRun `pip install \x02heron\x03` **now**"

    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.search_field.setText("heron")
    sidebar.set_search_results([MarkdownHit()])
    shown = QTextDocument()
    shown.setHtml(hit_html(sidebar.results.model().index(0, 0)))
    assert shown.toPlainText() == "Birds\nSetup Run pip install heron now"


def test_an_empty_sidebar_says_how_to_start(qtbot: Any) -> None:
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.show()
    sidebar.set_conversations([])
    assert sidebar.empty_list.isVisible()
    assert "Ctrl+N" in sidebar.empty_list.text()
    sidebar.set_conversations([_Summary("a", "Alpha", when=datetime(2025, 3, 12))])
    assert not sidebar.empty_list.isVisible()
    assert sidebar.conversations.isVisible()

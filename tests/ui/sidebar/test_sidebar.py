"""The sidebar: date groups, snippets, and the signals behind rename/delete/activate/search."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from PySide6.QtWidgets import QLabel

from flarechat.ui.shared.theme import DARK, LIGHT, apply_theme
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
    try:
        for scheme, palette in (("dark", DARK), ("light", LIGHT)):
            apply_theme(qapp, scheme)
            sidebar.set_search_results([_Hit()])
            label = sidebar.results.itemWidget(sidebar.results.item(0))
            assert isinstance(label, QLabel)
            mark = f"background-color:{palette.match_bg}; color:{palette.match_text};"
            assert mark in label.text()
    finally:
        apply_theme(qapp, "light")  # the session's scheme
    assert DARK.match_bg != LIGHT.match_bg

"""Search as you type: a keystroke asks at once, one query is out at a time, stale answers are
dropped, and hits are painted rows (issue 12 #4: keystroke to painted results)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor

from flarechat.ui.shared.theme import LIGHT
from flarechat.ui.sidebar.hits import TITLE_MATCH_TEXT, hit_html
from flarechat.ui.sidebar.sidebar import SEARCH_ANSWER_WAIT_MS, Sidebar

#: Longer than SEARCH_ANSWER_WAIT_MS: the wait for an overdue answer to give up.
OVERDUE_WAIT_MS = SEARCH_ANSWER_WAIT_MS + 3000


class _Hit:
    def __init__(self, conversation_id: str, *, message_id: str | None = "m1") -> None:
        self.conversation_id, self.message_id = conversation_id, message_id
        self.conversation_title = f"Birds {conversation_id}"
        self.snippet = "a grey \x02heron\x03 stood" if message_id else "\x02Heron\x03 notes"


def _sidebar(qtbot: Any) -> tuple[Sidebar, list[str]]:
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 500)
    sidebar.show()
    asked: list[str] = []
    sidebar.search_requested.connect(asked.append)
    return sidebar, asked


def _shown(sidebar: Sidebar) -> list[str]:
    rows = range(sidebar.results.count())
    return [sidebar.results.item(row).data(Qt.ItemDataRole.UserRole) for row in rows]


def test_a_keystroke_asks_at_once_and_typing_meanwhile_waits_for_the_answer(qtbot: Any) -> None:
    sidebar, asked = _sidebar(qtbot)
    sidebar.search_field.setText("h")
    assert asked == ["h"]  # no pause before the first query
    sidebar.search_field.setText("he")
    sidebar.search_field.setText("her")
    assert asked == ["h"]  # one query out at a time
    sidebar.set_search_results([_Hit("for-h")])
    assert asked == ["h", "her"]  # the answer asks for the newest text, skipping "he"
    assert _shown(sidebar) == []  # ...and the stale answer is dropped
    sidebar.set_search_results([_Hit("for-her")])
    assert _shown(sidebar) == ["for-her"]
    assert asked == ["h", "her"]


def test_enter_waits_while_the_shown_results_answer_an_older_query(qtbot: Any) -> None:
    sidebar, asked = _sidebar(qtbot)
    sidebar.search_field.setText("heron")
    sidebar.set_search_results([_Hit("c1")])
    sidebar.search_field.setFocus()
    opened: list[tuple[str, str]] = []
    sidebar.search_hit_activated.connect(lambda c, m: opened.append((c, m)))
    sidebar.search_field.setText("herons")
    qtbot.keyClick(sidebar.search_field, Qt.Key.Key_Return)
    assert opened == []  # "herons" is still out: c1 answers "heron"
    sidebar.set_search_results([_Hit("c2")])
    qtbot.keyClick(sidebar.search_field, Qt.Key.Key_Return)
    assert opened == [("c2", "m1")]
    assert asked == ["heron", "herons"]


def test_an_unanswered_query_does_not_hold_back_the_newest_text(qtbot: Any) -> None:
    sidebar, asked = _sidebar(qtbot)
    sidebar.search_field.setText("he")  # its answer never comes (the store failed)
    sidebar.search_field.setText("heron")
    with qtbot.waitSignal(sidebar.search_requested, timeout=OVERDUE_WAIT_MS) as again:
        pass
    assert again.args == ["heron"]
    assert asked == ["he", "heron"]
    sidebar.set_search_results([_Hit("c1")])
    assert _shown(sidebar) == ["c1"]


def test_clearing_the_field_forgets_the_query_out(qtbot: Any) -> None:
    sidebar, asked = _sidebar(qtbot)
    sidebar.search_field.setText("he")
    sidebar.search_field.clear()
    sidebar.set_search_results([_Hit("late")])  # the answer to "he", after the clear
    assert _shown(sidebar) == []
    assert sidebar.conversations.isVisible() or sidebar.empty_list.isVisible()
    sidebar.search_field.setText("owl")
    assert asked == ["he", "", "owl"]  # asked at once: nothing is out any more


def test_no_matches_says_so(qtbot: Any) -> None:
    sidebar, _asked = _sidebar(qtbot)
    sidebar.search_field.setText("zebra")
    sidebar.set_search_results([])
    assert not sidebar.results.isVisible()
    labels = [w for w in sidebar.findChildren(type(sidebar.empty_list)) if w.isVisible()]
    assert [label.text() for label in labels] == ["No matches."]


def test_hits_are_painted_rows_of_one_height_with_matches_highlighted(qtbot: Any) -> None:
    sidebar, _asked = _sidebar(qtbot)
    sidebar.search_field.setText("heron")
    sidebar.set_search_results([_Hit("c0", message_id=None), _Hit("c1"), _Hit("c2")])
    results = sidebar.results
    assert results.uniformItemSizes()
    assert all(results.itemWidget(results.item(row)) is None for row in range(3))
    heights = {results.visualItemRect(results.item(row)).height() for row in range(3)}
    assert len(heights) == 1
    assert heights.pop() >= 4 * results.fontMetrics().lineSpacing()  # title + snippet lines
    title_hit = hit_html(results.model().index(0, 0))
    assert "<b><span" in title_hit
    assert TITLE_MATCH_TEXT in title_hit
    assert results.item(1).data(Qt.ItemDataRole.AccessibleTextRole) == "Match in Birds c1"
    image = results.viewport().grab().toImage()
    wanted = QColor(LIGHT.match_bg).rgb()
    first_row = results.visualItemRect(results.item(1))
    found = [
        (x, y)
        for y in range(first_row.top(), first_row.bottom())
        for x in range(first_row.left(), first_row.right())
        if image.pixel(x, y) == wanted
    ]
    assert found, "the matched word is not drawn highlighted"


def test_a_slow_answer_is_not_asked_for_twice(qtbot: Any) -> None:
    sidebar, asked = _sidebar(qtbot)
    sidebar.search_field.setText("heron")  # slower than SEARCH_ANSWER_WAIT_MS to answer
    overdue = sidebar.findChild(QTimer, "sidebar-search-answer-wait")
    assert isinstance(overdue, QTimer)
    qtbot.waitUntil(lambda: not overdue.isActive(), timeout=OVERDUE_WAIT_MS)
    assert asked == ["heron"]  # not queued again behind itself
    sidebar.search_field.setText("herons")
    assert asked == ["heron", "herons"]  # typing is no longer held back


def test_hit_rows_follow_the_sidebar_s_width(qtbot: Any) -> None:
    sidebar, _asked = _sidebar(qtbot)
    sidebar.resize(420, 400)
    sidebar.search_field.setText("heron")
    sidebar.set_search_results([_Hit("c1"), _Hit("c2")])
    results = sidebar.results
    qtbot.waitUntil(lambda: results.visualItemRect(results.item(0)).width() > 0)
    for width in (420, 220):
        sidebar.resize(width, 400)
        qtbot.waitUntil(
            lambda: results.visualItemRect(results.item(1)).width() == results.viewport().width()
        )

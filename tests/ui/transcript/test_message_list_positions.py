"""The message list finds messages by id without indexing a whole long history at opening
(5,000 ids indexed on every switch; issue #12), and keeps finding them as it changes."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from flarechat.ui.control.view_data import MessageData, PathView
from flarechat.ui.transcript.message_list import MessageList

HISTORY = 5000


def test_opening_a_long_history_does_not_index_it(
    make: Callable[[int], MessageData], column: MessageList
) -> None:
    path = PathView([f"m{i}" for i in range(HISTORY)], make)
    column.set_items(path)
    assert column._index is None
    assert column.position(f"m{HISTORY - 1}") == HISTORY - 1  # indexed when first asked
    assert column._index is not None


def test_positions_stay_right_through_appends_truncation_and_replacement(
    make: Callable[[int], MessageData], qtbot: QtBot, column: MessageList
) -> None:
    column.set_items(PathView([f"m{i}" for i in range(40)], make))
    assert column.position("m39") == 39
    column.append(make(40))
    assert column.position("m40") == 40
    column.truncate(10)
    assert [column.position(f"m{i}") for i in (9, 10, 40)] == [9, None, None]
    column.append(make(77))
    assert column.position("m77") == 10
    replaced = MessageData(id="m3", role="assistant", content="Changed")
    column.replace(replaced)
    assert column.item(3) == replaced
    assert column.replace(MessageData(id="elsewhere", role="user")) is None
    qtbot.waitUntil(lambda: not column.is_loading())
    assert column.scroll_to("m2") is column.view_for("m2")
    assert column.scroll_to("elsewhere") is None


def test_positions_a_path_view_knows_are_used_and_left_unchanged(
    make: Callable[[int], MessageData], column: MessageList
) -> None:
    """The tree indexes its path on the store's thread; the list copies that index instead
    of walking 5,000 ids on the GUI thread, and its own changes stay its own."""
    ids = [f"m{i}" for i in range(HISTORY)]
    known = {mid: at for at, mid in enumerate(ids)}
    column.set_items(PathView(ids, make, positions=known))
    assert column.position(f"m{HISTORY - 1}") == HISTORY - 1
    column.append(make(HISTORY))
    column.truncate(10)
    column.append(make(HISTORY + 1))
    assert [column.position(f"m{i}") for i in (9, 10, HISTORY, HISTORY + 1)] == [
        *(9, None, None),
        10,
    ]
    assert known == {mid: at for at, mid in enumerate(ids)}


def test_a_message_appended_before_the_first_lookup_is_found(
    make: Callable[[int], MessageData], column: MessageList
) -> None:
    """The positions a PathView knows cover its own ids only: once a message is added, the
    list indexes what it holds."""
    ids = [f"m{i}" for i in range(40)]
    column.set_items(PathView(ids, make, positions={mid: at for at, mid in enumerate(ids)}))
    column.append(make(40))
    assert column.position("m40") == 40
    column.clear()
    assert column.position("m3") is None

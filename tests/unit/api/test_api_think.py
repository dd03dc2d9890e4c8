"""The inline <think> splitter: every split point, tags split mid-tag, and what is not a tag."""

from __future__ import annotations

import pytest

from flarechat.api._think import ThinkSplitter
from flarechat.api.events import ReasoningDelta, TextDelta

REPLY = "<think>Check the units.</think>\n\nIt is 4 km."


def _run(pieces: list[str]) -> tuple[str, str, list[object]]:
    splitter = ThinkSplitter()
    events: list[object] = []
    for piece in pieces:
        events.extend(splitter.feed(piece))
    events.extend(splitter.flush())
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return reasoning, text, events


@pytest.mark.parametrize("cut", range(1, len(REPLY)))
def test_every_single_split_point(cut: int) -> None:
    reasoning, text, _ = _run([REPLY[:cut], REPLY[cut:]])
    assert (reasoning, text) == ("Check the units.", "\n\nIt is 4 km.")


def test_one_character_at_a_time() -> None:
    reasoning, text, events = _run(list(REPLY))
    assert (reasoning, text) == ("Check the units.", "\n\nIt is 4 km.")
    assert all(getattr(e, "text", "") for e in events), "no empty deltas"


def test_leading_whitespace_before_the_tag() -> None:
    assert _run(["  \n<think>a</think>b"])[:2] == ("a", "b")


def test_a_think_tag_later_in_the_answer_is_text() -> None:
    assert _run(["Use ", "<think>", " in prompts."])[:2] == ("", "Use <think> in prompts.")


def test_unclosed_think_is_all_reasoning_at_flush() -> None:
    assert _run(["<think>still going </th"])[:2] == ("still going </th", "")


def test_a_lone_angle_bracket_is_released_at_flush() -> None:
    assert _run(["<"])[:2] == ("", "<")


def test_text_that_merely_starts_like_a_tag() -> None:
    assert _run(["<th", "ree> items"])[:2] == ("", "<three> items")


def test_reasoning_streams_before_the_close_tag_arrives() -> None:
    splitter = ThinkSplitter()
    first = splitter.feed("<think>partial thoughts</")
    assert first == [ReasoningDelta("partial thoughts")]
    assert splitter.feed("think>answer") == [TextDelta("answer")]


@pytest.mark.parametrize(
    ("pieces", "unclosed"),
    [
        (["<think>a"], True),
        (["<thi", "nk>a </thi"], True),
        (["<think>a</think>b"], False),
        (["no think at all"], False),
        (["x <think>later"], False),
    ],
)
def test_unclosed_says_whether_a_think_block_is_still_open(
    pieces: list[str], unclosed: bool
) -> None:
    splitter = ThinkSplitter()
    for piece in pieces:
        splitter.feed(piece)
    splitter.flush()
    assert splitter.unclosed is unclosed

"""Markdown export keeps a reply's headings below "## Assistant"; file names keep their words."""

from __future__ import annotations

import pytest

from flarechat.core.export import demote_headings, file_stem


def test_a_reply_s_headings_go_below_the_message_heading() -> None:
    reply = "# Plan\nSome text\n## Day 1\n###### Deep\n#hashtag"
    assert demote_headings(reply) == "### Plan\nSome text\n#### Day 1\n###### Deep\n#hashtag"


def test_headings_inside_code_blocks_are_code() -> None:
    reply = "```bash\n# a shell comment\n```\n~~~\n## not a heading\n~~~\n# After"
    assert demote_headings(reply) == (
        "```bash\n# a shell comment\n```\n~~~\n## not a heading\n~~~\n### After"
    )


@pytest.mark.parametrize(
    ("title", "stem"),
    [
        ("Re: the plan", "Re the plan"),
        ("Lisbon: 3 days?", "Lisbon 3 days"),
        ('a/b\\c*"d"', "a b c d"),
        ("::", "chat"),
        ("Plain title", "Plain title"),
    ],
)
def test_file_names_drop_unsafe_characters_without_leaving_underscores(
    title: str, stem: str
) -> None:
    assert file_stem(title) == stem

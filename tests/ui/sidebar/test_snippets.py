"""Search snippets lose their Markdown marks but keep their words and match markers."""

from __future__ import annotations

import pytest

from flarechat.ui.sidebar.snippets import plain_snippet


@pytest.mark.parametrize(
    ("snippet", "plain"),
    [
        ("## Setup\nRun `pip install` **now**", "Setup Run pip install now"),
        (
            "use \x02snake_case\x03 names and *emphasis* here",
            "use \x02snake_case\x03 names and emphasis here",
        ),
        ("```python\nprint(1)\n```", "print(1)"),
        ("- item one\n- [the docs](https://example.com) two", "item one the docs two"),
        ("1. first\n2) second", "first second"),
        ("> quoted \x02pelican\x03", "quoted \x02pelican\x03"),
        ("3 * 4 = 12 and a_b", "3 * 4 = 12 and a_b"),
        ("~~old~~ __new__", "old new"),
    ],
)
def test_plain_snippet(snippet: str, plain: str) -> None:
    assert plain_snippet(snippet) == plain

"""A template's ``{{variables}}``: finding, checking and filling them in a message's text.

Apart from ``templates`` (the saved items, CSV rows): the composer's lab row uses these before
the window's first paint, which need not import the rest of the lab (issue #12).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["VARIABLE", "fill", "missing", "variables"]

#: ``{{ name }}``: a Python-identifier-like name, spaces inside the braces allowed.
VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def variables(text: str) -> list[str]:
    """The distinct variable names in ``text``, in order of first appearance."""
    return list(dict.fromkeys(match.group(1) for match in VARIABLE.finditer(text)))


def missing(text: str, values: Mapping[str, str]) -> list[str]:
    """The variables of ``text`` that ``values`` leaves blank."""
    return [name for name in variables(text) if not values.get(name, "").strip()]


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every ``{{name}}`` that ``values`` holds replaced (others stay as typed).

    One pass over the text: a value that itself contains ``{{x}}`` is not filled again.
    """

    def value_of(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return VARIABLE.sub(value_of, text)

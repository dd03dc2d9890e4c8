"""The deterministic judge: a grading prompt gets a grade computed from its rubric and output.

Any chat model grades when the last user message carries a ``<rubric>…</rubric>`` and an
``<output>…</output>`` section (the shape flarechat's judge prompt has). The score is the share
of the rubric's words (four letters or more) that the output contains, so a test can choose a
passing or failing grade by choosing words; the same rubric and output always get the same grade.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["grade"]

_SECTION = r"<{0}>(.*?)</{0}>"
_WORD = re.compile(r"[a-z][a-z'-]{3,}")
_PASS_AT = 0.5


def _section(text: str, name: str) -> str | None:
    found = re.search(_SECTION.format(name), text, flags=re.DOTALL | re.IGNORECASE)
    return found.group(1) if found else None


def grade(question: str) -> str | None:
    """The judge's JSON answer to ``question``, or None when it is not a grading prompt."""
    rubric, output = _section(question, "rubric"), _section(question, "output")
    if rubric is None or output is None:
        return None
    wanted = list(dict.fromkeys(_WORD.findall(rubric.lower())))
    present = set(_WORD.findall(output.lower()))
    found = [word for word in wanted if word in present]
    missing = [word for word in wanted if word not in present]
    score = round(len(found) / len(wanted), 4) if wanted else 1.0
    verdict: dict[str, Any] = {
        "score": score,
        "pass": score >= _PASS_AT,
        "reason": _reason(found, missing),
    }
    return json.dumps(verdict)


def _reason(found: list[str], missing: list[str]) -> str:
    if not missing:
        return "The output covers every point of the rubric."
    shown = ", ".join(missing[:8])
    total = len(found) + len(missing)
    return f"The output covers {len(found)} of {total} points; missing: {shown}."

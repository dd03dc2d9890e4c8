"""Pure assertion functions: a reply's observation and one assertion in, a verdict out.

The two checks that need a model (``similar``: embeddings; ``llm-rubric``: a judge) read
what the runner fetched for them (``Observation.similarity``, ``Observation.grade``); they
are as pure as the rest, so the same observation always gets the same verdict.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flarechat.core.experiments.spec import AssertionSpec
from flarechat.core.lab.variables import fill

__all__ = [
    "Grade",
    "Observation",
    "ToolUse",
    "Verdict",
    "case_passed",
    "case_score",
    "cosine",
    "evaluate",
    "filled_value",
    "json_path",
]

#: The default similarity at or above which ``similar`` passes (promptfoo's default too).
DEFAULT_SIMILARITY = 0.75
#: The default judge score at or above which ``llm-rubric`` passes.
DEFAULT_JUDGE_PASS = 0.5
_PATH_PART = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call the reply made."""

    name: str
    arguments: Any  # the parsed JSON arguments, or the raw text when it is not JSON


@dataclass(frozen=True, slots=True)
class Grade:
    """A judge's grade of a reply against a rubric: a score from 0 to 1 and why."""

    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything about one finished cell that an assertion may look at."""

    text: str
    ttft_ms: float | None = None
    total_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    neurons: float | None = None
    usd: float | None = None
    tool_calls: tuple[ToolUse, ...] = ()
    similarity: float | None = None
    grade: Grade | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """One assertion's result on one reply."""

    type: str
    passed: bool
    score: float
    reason: str
    weight: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "passed": self.passed,
            "score": self.score,
            "reason": self.reason,
            "weight": self.weight,
        }


@dataclass(frozen=True, slots=True)
class _Context:
    spec: AssertionSpec
    value: Any
    seen: Observation


def filled_value(spec: AssertionSpec, values: Mapping[str, str]) -> Any:
    """The assertion's value with ``{{variables}}`` (and ``{{expected}}``) filled in."""
    if isinstance(spec.value, str):
        return fill(spec.value, values)
    if isinstance(spec.value, list):
        return [fill(v, values) if isinstance(v, str) else v for v in spec.value]
    return spec.value


def evaluate(spec: AssertionSpec, seen: Observation, values: Mapping[str, str]) -> Verdict:
    """The verdict of ``spec`` on ``seen``; ``values`` fills the assertion's variables."""
    check = _CHECKS[spec.type]
    passed, score, reason = check(_Context(spec, filled_value(spec, values), seen))
    return Verdict(spec.type, passed, round(score, 6), reason, spec.weight)


def case_score(verdicts: Sequence[Verdict]) -> float:
    """The weighted share of passed assertions (1.0 when there are none)."""
    total = sum(v.weight for v in verdicts)
    if total <= 0:
        return 1.0
    return sum(v.weight for v in verdicts if v.passed) / total


def case_passed(verdicts: Sequence[Verdict], threshold: float) -> bool:
    """Whether a case's weighted score reaches ``threshold`` (a failed zero-weight check
    does not fail it)."""
    return case_score(verdicts) >= threshold - 1e-9


def _binary(passed: bool, reason: str) -> tuple[bool, float, str]:
    return passed, 1.0 if passed else 0.0, reason


def _texts(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _equals(c: _Context) -> tuple[bool, float, str]:
    expected = str(c.value)
    ok = c.seen.text.strip() == expected.strip()
    return _binary(ok, "equal" if ok else f"expected exactly {expected!r}")


def _contains(c: _Context, *, fold: bool, negate: bool) -> tuple[bool, float, str]:
    text = c.seen.text.casefold() if fold else c.seen.text
    wanted = _texts(c.value)
    found = [w for w in wanted if (w.casefold() if fold else w) in text]
    if negate:
        return _binary(not found, f"contains {found[0]!r}" if found else "absent, as it should be")
    missing = [w for w in wanted if w not in found]
    return _binary(not missing, f"missing {missing[0]!r}" if missing else "contains it")


def _starts_with(c: _Context) -> tuple[bool, float, str]:
    ok = c.seen.text.lstrip().startswith(str(c.value))
    return _binary(ok, "starts with it" if ok else f"does not start with {str(c.value)!r}")


def _regex(c: _Context) -> tuple[bool, float, str]:
    ok = re.search(str(c.value), c.seen.text) is not None
    return _binary(ok, "matches" if ok else f"no match for /{c.value}/")


def _parse_json(text: str) -> tuple[bool, Any]:
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, flags=re.DOTALL)
    try:
        return True, json.loads(fenced.group(1) if fenced else stripped)
    except ValueError:
        return False, None


def _first_json(text: str) -> tuple[bool, Any]:
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char in "{[":
            try:
                return True, decoder.raw_decode(text, start)[0]
            except ValueError:
                continue
    return False, None


def _is_json(c: _Context) -> tuple[bool, float, str]:
    reader = _first_json if c.spec.type == "contains-json" else _parse_json
    ok, value = reader(c.seen.text)
    if not ok:
        return _binary(False, "not valid JSON")
    if c.spec.schema is not None:
        return _schema_verdict(value, c.spec.schema)
    return _binary(True, "valid JSON")


def _schema_verdict(value: Any, schema: Mapping[str, Any]) -> tuple[bool, float, str]:
    import jsonschema  # imported when used: a run without schemas does not pay for it

    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return _binary(True, "matches the schema")
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return _binary(False, f"{where}: {error.message}")


def _json_schema(c: _Context) -> tuple[bool, float, str]:
    ok, value = _parse_json(c.seen.text)
    if not ok:
        return _binary(False, "not valid JSON")
    schema = c.spec.schema if c.spec.schema is not None else c.value
    if not isinstance(schema, Mapping):  # the loader refuses this; never pass by default
        return _binary(False, "the assertion has no schema")
    return _schema_verdict(value, schema)


def json_path(value: Any, path: str) -> tuple[bool, Any]:
    """Follow ``$.a.b[0]`` / ``a.b`` / ``$['a']`` into ``value``: (found, the value)."""
    rest = path.strip()
    rest = rest[1:] if rest.startswith("$") else rest
    if rest and not rest.startswith((".", "[")):
        rest = "." + rest
    position = 0
    while position < len(rest):
        match = _PATH_PART.match(rest, position)
        if match is None:
            return False, None
        key, index, quoted = match.groups()
        if index is not None:
            if not isinstance(value, list) or int(index) >= len(value):
                return False, None
            value = value[int(index)]
        else:
            name = key if key is not None else quoted
            if not isinstance(value, Mapping) or name not in value:
                return False, None
            value = value[name]
        position = match.end()
    return True, value


def _json_path(c: _Context) -> tuple[bool, float, str]:
    ok, document = _parse_json(c.seen.text)
    if not ok:
        return _binary(False, "not valid JSON")
    found, value = json_path(document, c.spec.path or "$")
    if not found:
        return _binary(False, f"{c.spec.path} is not in the reply")
    equal = value == c.value or (isinstance(c.value, str) and str(value) == c.value)
    return _binary(equal, "equal" if equal else f"{c.spec.path} is {value!r}, not {c.value!r}")


def _within(figure: float | None, c: _Context, what: str) -> tuple[bool, float, str]:
    if figure is None:
        return _binary(False, f"no {what} was measured")
    low = c.spec.minimum
    high = c.spec.maximum if c.spec.maximum is not None else c.spec.threshold
    if low is not None and figure < low:
        return _binary(False, f"{what} {figure:g} is below {low:g}")
    if high is not None and figure > high:
        return _binary(False, f"{what} {figure:g} is above {high:g}")
    return _binary(True, f"{what} {figure:g} is within bounds")


def _length(c: _Context) -> tuple[bool, float, str]:
    return _within(float(len(c.seen.text)), c, "length")


def _latency(c: _Context) -> tuple[bool, float, str]:
    ttft = c.spec.metric == "ttft"
    figure = c.seen.ttft_ms if ttft else c.seen.total_ms
    return _within(figure, c, "time to first token (ms)" if ttft else "total time (ms)")


def _tokens(c: _Context) -> tuple[bool, float, str]:
    figure = c.seen.completion_tokens
    if c.spec.metric == "total" and figure is not None:
        figure += c.seen.prompt_tokens or 0
    return _within(None if figure is None else float(figure), c, "tokens")


def _cost(c: _Context) -> tuple[bool, float, str]:
    if c.spec.metric == "neurons":
        return _within(c.seen.neurons, c, "neurons")
    return _within(c.seen.usd, c, "cost ($)")


def _tool_call(c: _Context) -> tuple[bool, float, str]:
    wanted = c.spec.name or (str(c.value) if c.value else None)
    calls = [t for t in c.seen.tool_calls if wanted is None or t.name == wanted]
    if not calls:
        named = [t.name for t in c.seen.tool_calls]
        return _binary(False, f"no call to {wanted or 'any tool'} (called: {named or 'none'})")
    if c.spec.schema is None:
        return _binary(True, f"called {calls[0].name}")
    verdicts = [_schema_verdict(call.arguments, c.spec.schema) for call in calls]
    return next((v for v in verdicts if v[0]), verdicts[0])


def _similar(c: _Context) -> tuple[bool, float, str]:
    if c.seen.similarity is None:
        return False, 0.0, "no similarity was measured"
    at_least = c.spec.threshold if c.spec.threshold is not None else DEFAULT_SIMILARITY
    ok = c.seen.similarity >= at_least
    return ok, c.seen.similarity, f"similarity {c.seen.similarity:.3f} (needs {at_least:g})"


def _rubric(c: _Context) -> tuple[bool, float, str]:
    if c.seen.grade is None:
        return False, 0.0, "the judge gave no grade"
    at_least = c.spec.threshold if c.spec.threshold is not None else DEFAULT_JUDGE_PASS
    grade = c.seen.grade
    return grade.score >= at_least, grade.score, grade.reason


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros or they differ in size)."""
    if len(a) != len(b):
        return 0.0
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


_CHECKS: dict[str, Callable[[_Context], tuple[bool, float, str]]] = {
    "equals": _equals,
    "contains": lambda c: _contains(c, fold=False, negate=False),
    "icontains": lambda c: _contains(c, fold=True, negate=False),
    "not-contains": lambda c: _contains(c, fold=False, negate=True),
    "not-icontains": lambda c: _contains(c, fold=True, negate=True),
    "starts-with": _starts_with,
    "regex": _regex,
    "is-json": _is_json,
    "contains-json": _is_json,
    "json-schema": _json_schema,
    "json-path": _json_path,
    "length": _length,
    "latency": _latency,
    "tokens": _tokens,
    "cost": _cost,
    "tool-call": _tool_call,
    "similar": _similar,
    "llm-rubric": _rubric,
}

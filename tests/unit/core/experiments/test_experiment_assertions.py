"""Every assertion type as a pure function: the same observation always gets the same verdict."""

from __future__ import annotations

from typing import Any

import pytest

from flarechat.core.experiments.assertions import (
    Grade,
    Observation,
    ToolUse,
    case_passed,
    case_score,
    cosine,
    evaluate,
    json_path,
)
from flarechat.core.experiments.spec import AssertionSpec

VALUES = {"city": "Paris", "expected": "Paris"}


def verdict(kind: str, text: str = "", **fields: Any) -> tuple[bool, float, str]:
    seen_fields = {k: fields.pop(k) for k in list(fields) if k in Observation.__slots__}
    seen = Observation(text=text, **seen_fields)
    result = evaluate(AssertionSpec(kind, **fields), seen, VALUES)
    return result.passed, result.score, result.reason


@pytest.mark.parametrize(
    ("kind", "value", "text", "passed"),
    [
        ("equals", "{{city}}", " Paris\n", True),
        ("equals", "{{city}}", "Paris, France", False),
        ("contains", "Paris", "It is Paris.", True),
        ("contains", "paris", "It is Paris.", False),
        ("contains", ["Paris", "France"], "Paris, France", True),
        ("contains", ["Paris", "Texas"], "Paris, France", False),
        ("icontains", "{{expected}}", "it is PARIS", True),
        ("not-contains", "Lyon", "Paris", True),
        ("not-contains", ["Lyon", "Paris"], "Paris", False),
        ("not-icontains", "paris", "PARIS", False),
        ("starts-with", "Par", "  Paris", True),
        ("starts-with", "Lyon", "Paris", False),
        ("regex", r"^P\w+s$", "Paris", True),
        ("regex", r"\d", "Paris", False),
    ],
)
def test_text_checks(kind: str, value: object, text: str, passed: bool) -> None:
    ok, score, reason = verdict(kind, text, value=value)
    assert ok is passed
    assert score == (1.0 if passed else 0.0)
    assert reason


def test_a_failed_contains_names_what_is_missing() -> None:
    assert verdict("contains", "Paris", value=["Paris", "Texas"])[2] == "missing 'Texas'"


@pytest.mark.parametrize(
    ("kind", "text", "passed"),
    [
        ("is-json", '{"a": 1}', True),
        ("is-json", '```json\n{"a": 1}\n```', True),
        ("is-json", "The answer is {a: 1}", False),
        ("contains-json", 'Sure: {"a": 1} there', True),
        ("contains-json", "no json", False),
    ],
)
def test_json_checks(kind: str, text: str, passed: bool) -> None:
    assert verdict(kind, text)[0] is passed


SCHEMA = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}


def test_json_schema_passes_and_fails_with_where() -> None:
    assert verdict("json-schema", '{"city": "Paris"}', schema=SCHEMA)[0]
    ok, _, reason = verdict("json-schema", '{"city": 3}', schema=SCHEMA)
    assert not ok
    assert reason.startswith("city: ")
    assert not verdict("json-schema", "not json", schema=SCHEMA)[0]


def test_a_json_schema_without_a_schema_never_passes() -> None:
    assert verdict("json-schema", '{"a": 1}', value="not a schema") == (
        False,
        0.0,
        "the assertion has no schema",
    )


def test_is_json_with_a_schema_checks_it() -> None:
    assert not verdict("is-json", '{"city": 1}', schema=SCHEMA)[0]


@pytest.mark.parametrize(
    ("path", "found", "value"),
    [
        ("$.a.b[1]", True, 3),
        ("a.b[0]", True, 2),
        ("$['a']['b']", True, [2, 3]),
        ("$.a.c", False, None),
        ("$.a.b[5]", False, None),
        ("$", True, {"a": {"b": [2, 3]}}),
    ],
)
def test_json_path(path: str, found: bool, value: object) -> None:
    assert json_path({"a": {"b": [2, 3]}}, path) == (found, value)


def test_json_path_equals() -> None:
    text = '{"capital": {"name": "Paris"}}'
    assert verdict("json-path", text, path="$.capital.name", value="{{city}}")[0]
    ok, _, reason = verdict("json-path", text, path="$.capital.name", value="Lyon")
    assert not ok
    assert "'Paris'" in reason


@pytest.mark.parametrize(
    ("kind", "fields", "passed"),
    [
        ("length", {"minimum": 2, "maximum": 5}, True),
        ("length", {"maximum": 3}, False),
        ("length", {"minimum": 6}, False),
        ("latency", {"maximum": 500, "total_ms": 400.0}, True),
        ("latency", {"maximum": 500, "total_ms": 600.0}, False),
        ("latency", {"maximum": 100, "metric": "ttft", "ttft_ms": 90.0, "total_ms": 900.0}, True),
        ("latency", {"maximum": 100}, False),
        ("tokens", {"maximum": 10, "completion_tokens": 10, "prompt_tokens": 50}, True),
        (
            "tokens",
            {"maximum": 10, "metric": "total", "completion_tokens": 10, "prompt_tokens": 5},
            False,
        ),
        ("cost", {"maximum": 0.001, "usd": 0.0005}, True),
        ("cost", {"maximum": 0.001, "usd": 0.002}, False),
        ("cost", {"maximum": 1.0, "metric": "neurons", "neurons": 1.5}, False),
    ],
)
def test_bounds(kind: str, fields: dict[str, Any], passed: bool) -> None:
    assert verdict(kind, "Paris", **fields)[0] is passed


def test_an_unmeasured_figure_fails_and_says_so() -> None:
    assert verdict("cost", "x", maximum=1.0)[2] == "no cost ($) was measured"


ARGS_SCHEMA = {"type": "object", "required": ["city"]}


def test_tool_call_by_name_and_argument_schema() -> None:
    calls = (ToolUse("lookup", {"q": 1}), ToolUse("weather", {"city": "Paris"}))
    assert verdict("tool-call", tool_calls=calls, name="weather", schema=ARGS_SCHEMA)[0]
    assert not verdict("tool-call", tool_calls=calls, name="lookup", schema=ARGS_SCHEMA)[0]
    ok, _, reason = verdict("tool-call", tool_calls=calls, name="book")
    assert not ok
    assert "lookup" in reason
    assert not verdict("tool-call", name="weather")[0]


def test_similarity_scores_and_threshold() -> None:
    assert verdict("similar", similarity=0.8, value="{{expected}}") == (
        True,
        0.8,
        "similarity 0.800 (needs 0.75)",
    )
    assert not verdict("similar", similarity=0.8, value="x", threshold=0.9)[0]
    assert not verdict("similar", value="x")[0]


def test_rubric_uses_the_judges_grade() -> None:
    grade = Grade(0.4, "covers 2 of 5 points")
    assert verdict("llm-rubric", grade=grade, value="r") == (False, 0.4, "covers 2 of 5 points")
    assert verdict("llm-rubric", grade=grade, value="r", threshold=0.4)[0]
    assert verdict("llm-rubric", value="r")[2] == "the judge gave no grade"


def test_weights_and_the_pass_threshold() -> None:
    seen = Observation(text="Paris")
    verdicts = [
        evaluate(AssertionSpec("contains", "Paris", weight=3), seen, VALUES),
        evaluate(AssertionSpec("contains", "Lyon", weight=1), seen, VALUES),
    ]
    assert case_score(verdicts) == 0.75
    assert case_passed(verdicts, 0.75)
    assert not case_passed(verdicts, 0.8)
    assert case_score([]) == 1.0


def test_cosine() -> None:
    assert cosine([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
    assert cosine([1.0], [1.0, 2.0]) == 0.0

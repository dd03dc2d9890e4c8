"""json_check: parse, pretty-print and validate JSON replies against their schema."""

from __future__ import annotations

from flarechat.core.session import json_check

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
}


def test_valid_reply_is_pretty_and_valid() -> None:
    verdict = json_check('{"name":"Ada","age":36}', PERSON)
    assert (verdict.parses, verdict.valid, verdict.problem) == (True, True, None)
    assert verdict.parsed == {"name": "Ada", "age": 36}
    assert verdict.pretty == '{\n  "name": "Ada",\n  "age": 36\n}'


def test_a_reply_that_does_not_follow_the_schema_says_where() -> None:
    verdict = json_check('{"name":"Ada","age":-1}', PERSON)
    assert (verdict.parses, verdict.valid) == (True, False)
    assert verdict.problem is not None
    assert "$.age" in verdict.problem
    assert "minimum" in verdict.problem or "less than" in verdict.problem


def test_a_reply_that_is_not_json_keeps_its_text() -> None:
    verdict = json_check("Sure! {name: Ada}", PERSON)
    assert (verdict.parses, verdict.valid, verdict.pretty) == (False, False, "Sure! {name: Ada}")
    assert verdict.problem is not None
    assert verdict.problem.startswith("The reply is not JSON (line 1")
    assert json_check("   ").problem == "The reply is empty."


def test_a_code_fence_around_the_json_is_ignored_and_no_schema_only_parses() -> None:
    verdict = json_check('```json\n{"a": [1, 2]}\n```')
    assert (verdict.valid, verdict.parsed) == (True, {"a": [1, 2]})
    assert json_check("null").parses


def test_an_invalid_schema_is_named_as_the_problem() -> None:
    verdict = json_check("{}", {"type": "strin"})
    assert not verdict.valid
    assert verdict.problem is not None
    assert verdict.problem.startswith("The schema itself is not valid")

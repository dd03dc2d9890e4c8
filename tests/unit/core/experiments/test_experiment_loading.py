"""Experiment files and case files: read whole, and every problem named by file, line and field
before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarechat.core.experiments.loading import load_experiment
from flarechat.core.experiments.spec import DEFAULT_JUDGE_MODEL, ExperimentError, Problem

LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"

GOOD = f"""\
name: capitals
threshold: 0.5
repeat: 2
variants:
  - name: terse
    model: "{LLAMA}"
    system: Answer in one word.
    prompt: "What is the capital of {{{{country}}}}?"
    params: {{temperature: 0.2, max_tokens: 64}}
    extra: {{response_format: {{type: json_object}}}}
  - model: "{LLAMA}"
    prompt: "Capital of {{{{country}}}}, please."
cases:
  - vars: {{country: France}}
    expected: Paris
    assert:
      - {{type: equals, value: "{{{{expected}}}}"}}
  - {{country: Japan, expected: Tokyo}}
assert:
  - {{type: icontains, value: "{{{{expected}}}}", weight: 2}}
  - {{type: latency, max: 5000}}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path) -> list[Problem]:
    with pytest.raises(ExperimentError) as caught:
        load_experiment(path)
    assert str(caught.value)  # the message lists them
    return caught.value.problems


def test_a_good_yaml_file(tmp_path: Path) -> None:
    experiment = load_experiment(write(tmp_path, "exp.yaml", GOOD))
    assert experiment.name == "capitals"
    assert experiment.threshold == 0.5
    assert experiment.repeat == 2
    assert experiment.judge_model == DEFAULT_JUDGE_MODEL
    terse, plain = experiment.variants
    assert terse.name == "terse"
    assert terse.request_params() == {
        "temperature": 0.2,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
    }
    assert plain.name == "llama-3.1-8b-instruct-fast"
    first, second = experiment.cases
    assert (first.vars, first.expected, len(first.asserts)) == ({"country": "France"}, "Paris", 1)
    assert (second.vars, second.expected) == ({"country": "Japan"}, "Tokyo")
    assert [a.type for a in experiment.assertions_for(first)] == ["icontains", "latency", "equals"]
    assert experiment.asserts[0].weight == 2
    assert experiment.asserts[1].maximum == 5000


def test_the_same_experiment_as_json(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(GOOD)
    from_json = load_experiment(write(tmp_path, "exp.json", json.dumps(data, indent=2)))
    from_yaml = load_experiment(write(tmp_path, "exp.yaml", GOOD))
    assert from_json.variants == from_yaml.variants
    assert [c.vars for c in from_json.cases] == [c.vars for c in from_yaml.cases]


def experiment_with_cases(folder: Path, cases: str) -> Path:
    text = f"""\
variants:
  - model: "{LLAMA}"
    prompt: "Capital of {{{{country}}}}?"
cases: {cases}
assert:
  - {{type: icontains, value: "{{{{expected}}}}"}}
"""
    return write(folder, "exp.yaml", text)


def test_cases_from_csv(tmp_path: Path) -> None:
    write(tmp_path, "cases.csv", 'country,expected\nFrance,Paris\n"Korea, South",Seoul\n')
    experiment = load_experiment(experiment_with_cases(tmp_path, "cases.csv"))
    assert [(c.vars["country"], c.expected) for c in experiment.cases] == [
        ("France", "Paris"),
        ("Korea, South", "Seoul"),
    ]
    assert experiment.cases[1].origin.endswith("cases.csv:3")


def test_cases_from_jsonl_and_json(tmp_path: Path) -> None:
    write(
        tmp_path,
        "cases.jsonl",
        '{"country": "France", "expected": "Paris"}\n\n'
        '{"vars": {"country": "Peru"}, "expected": "Lima", '
        '"assert": [{"type": "starts-with", "value": "L"}]}\n',
    )
    experiment = load_experiment(experiment_with_cases(tmp_path, "cases.jsonl"))
    assert [c.expected for c in experiment.cases] == ["Paris", "Lima"]
    assert experiment.cases[1].asserts[0].type == "starts-with"
    assert experiment.cases[1].origin.endswith("cases.jsonl:3")
    write(tmp_path, "cases.json", json.dumps([{"country": "Chad", "expected": "N'Djamena"}]))
    assert load_experiment(experiment_with_cases(tmp_path, "cases.json")).cases[0].vars == {
        "country": "Chad"
    }


def test_a_ragged_csv_row_names_file_and_line(tmp_path: Path) -> None:
    cases = write(tmp_path, "cases.csv", "country,expected\nFrance,Paris\nJapan\nPeru,Lima,x\n")
    problems = problems_of(experiment_with_cases(tmp_path, "cases.csv"))
    assert problems == [
        Problem(str(cases), 3, "row", "has 1 fields, but the header names 2"),
        Problem(str(cases), 4, "row", "has 3 fields, but the header names 2"),
    ]


def test_a_missing_variable_names_the_case_line(tmp_path: Path) -> None:
    cases = write(tmp_path, "cases.csv", "nation,expected\nFrance,Paris\n")
    (problem,) = problems_of(experiment_with_cases(tmp_path, "cases.csv"))
    assert (problem.file, problem.line, problem.field) == (str(cases), 2, "country")
    assert "{{country}}" in problem.message


def test_an_assertion_variable_the_case_lacks(tmp_path: Path) -> None:
    cases = write(tmp_path, "cases.csv", "country\nFrance\n")
    (problem,) = problems_of(experiment_with_cases(tmp_path, "cases.csv"))
    assert (problem.file, problem.line, problem.field) == (str(cases), 2, "expected")


def test_an_unknown_assertion_names_line_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "exp.yaml",
        f"""\
variants:
  - model: "{LLAMA}"
    prompt: hi
cases:
  - {{a: 1}}
assert:
  - type: contains
    value: x
  - type: javascript
    value: output.length > 3
""",
    )
    (problem,) = problems_of(path)
    assert (problem.file, problem.line, problem.field) == (str(path), 9, "assert[1].type")
    assert "unknown assertion 'javascript'" in problem.message


def test_a_schema_that_is_not_a_schema(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "exp.yaml",
        f"""\
variants:
  - model: "{LLAMA}"
    prompt: hi
cases:
  - {{a: 1}}
assert:
  - type: json-schema
    schema:
      type: objekt
  - type: is-json
    schema: [1, 2]
""",
    )
    first, second = problems_of(path)
    assert (first.line, first.field) == (8, "assert[0].schema")
    assert "not a valid JSON Schema" in first.message
    assert (second.line, second.field) == (11, "assert[1].schema")
    assert "must be a JSON Schema object" in second.message


@pytest.mark.parametrize(
    ("assertion", "field", "words"),
    [
        ("{type: regex, value: '([a-z'}", "assert[0].value", "not a valid regex"),
        ("{type: contains}", "assert[0].value", "needs a value"),
        ("{type: latency}", "assert[0]", "needs 'max'"),
        ("{type: latency, max: 9, metric: wall}", "assert[0].metric", "one of total, ttft"),
        ("{type: similar, value: x, threshold: 3}", "assert[0].threshold", "between 0 and 1"),
        ("{type: contains, value: x, weight: heavy}", "assert[0].weight", "must be a number"),
        ("{type: contains, value: x, colour: red}", "assert[0].colour", "unknown field"),
        ("{type: json-path, value: x}", "assert[0].path", "needs a 'path'"),
        ("{value: x}", "assert[0].type", "needs a 'type'"),
    ],
)
def test_bad_assertions(tmp_path: Path, assertion: str, field: str, words: str) -> None:
    text = f'variants:\n  - model: "{LLAMA}"\n    prompt: hi\ncases:\n  - {{a: 1}}\nassert:\n'
    path = write(tmp_path, "exp.yaml", text + f"  - {assertion}\n")
    (problem,) = problems_of(path)
    assert (problem.line, problem.field) == (7, field)
    assert words in problem.message


def test_bad_variants_and_top_level(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "exp.yaml",
        """\
name: x
colour: blue
threshold: 2
variants:
  - prompt: hi
    params: {temperature: hot, max_tokens: 1.5, nucleus: 1}
    extra: {stream: false}
cases: []
""",
    )
    found = {(p.line, p.field): p.message for p in problems_of(path)}
    assert "unknown field of an experiment" in found[(2, "colour")]
    assert "from 0 to 1" in found[(3, "threshold")]
    assert "needs a model" in found[(5, "variants[0].model")]
    assert "must be a number" in found[(6, "variants[0].params.temperature")]
    assert "whole number" in found[(6, "variants[0].params.max_tokens")]
    assert "unknown" in found[(6, "variants[0].params.nucleus")]
    assert "unknown" in found[(7, "variants[0].extra.stream")]


def test_unreadable_files(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path / "nope.yaml")
    assert problem.message == "no such file"
    (problem,) = problems_of(write(tmp_path, "bad.yaml", "variants: [\n  - a\n  b: c\n"))
    assert problem.message.startswith("not valid YAML")
    assert problem.line is not None
    (problem,) = problems_of(write(tmp_path, "bad.json", '{"variants": [1,\n }'))
    assert (problem.line, problem.message[:14]) == (2, "not valid JSON")
    path = experiment_with_cases(tmp_path, "cases.txt")
    (problem,) = problems_of(path)
    assert problem.message == "cases must be a .csv, .jsonl, .json file"


def test_problems_print_as_file_line_field(tmp_path: Path) -> None:
    assert str(Problem("a.csv", 3, "row", "is short")) == "a.csv:3: row: is short"
    assert str(Problem("a.csv", None, "(file)", "no such file")) == "a.csv: (file): no such file"

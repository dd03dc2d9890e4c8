"""Reading an experiment file (YAML or JSON) and its case files (CSV, JSONL, JSON).

Everything is checked before anything is sent: an unknown assertion or field, a variable a
case does not fill, a ragged CSV row, a schema that is not a schema, a regex that does not
compile. Every problem names its file, line and field (:class:`~.spec.Problem`), and all of
them are reported at once in one :class:`~.spec.ExperimentError`.

The file's shape::

    name: capitals
    threshold: 0.75            # a case passes when its weighted score reaches this
    repeat: 1
    judge: "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
    embedding: "@cf/baai/bge-base-en-v1.5"
    variants:
      - name: terse
        model: "@cf/meta/llama-3.1-8b-instruct-fast"
        system: "Answer in one word."
        prompt: "What is the capital of {{country}}?"
        params: {temperature: 0.2, max_tokens: 64}
        extra: {response_format: {type: json_object}}
    cases: cases.csv           # or a list of {vars: {...}, expected: ..., assert: [...]}
    assert:
      - {type: icontains, value: "{{expected}}", weight: 2}
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flarechat.core.connect import CAPABILITY_KEYS
from flarechat.core.experiments.spec import (
    ASSERTION_TYPES,
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_JUDGE_MODEL,
    AssertionSpec,
    Case,
    Experiment,
    ExperimentError,
    Problem,
    Variant,
)
from flarechat.core.lab.variables import variables

__all__ = [
    "CASE_SUFFIXES",
    "SAMPLING_KEYS",
    "Located",
    "check_experiment",
    "load_cases",
    "load_experiment",
    "parse_assertion",
    "read_document",
]

#: The case file formats, by suffix.
CASE_SUFFIXES = (".csv", ".jsonl", ".json")
#: Sampling fields a variant's ``params`` may set (SamplingParams' fields).
SAMPLING_KEYS = (
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
)
_INT_KEYS = frozenset({"max_tokens", "top_k", "seed"})
#: Column names of a case file that are not variables.
_EXPECTED_COLUMNS = ("expected", "__expected")
_DESCRIPTION_COLUMNS = ("description", "__description")
_EXPECTED = "expected"
_TOP_KEYS = frozenset(
    {"name", "description", "threshold", "repeat", "judge", "embedding"}
    | {"variants", "cases", "assert", "asserts"}
)
_VARIANT_KEYS = frozenset({"name", "model", "prompt", "system", "params", "extra"})
_CASE_KEYS = frozenset({"vars", "expected", "assert", "asserts", "description"})
_ASSERT_KEYS = frozenset(
    {"type", "value", "weight", "threshold", "min", "max", "metric", "schema", "path", "name"}
)
_METRICS: dict[str, tuple[str, ...]] = {
    "latency": ("total", "ttft"),
    "tokens": ("completion", "total"),
    "cost": ("usd", "neurons"),
}
_NEEDS_VALUE = frozenset(
    {"equals", "contains", "icontains", "not-contains", "not-icontains", "starts-with"}
    | {"regex", "json-path", "similar", "llm-rubric"}
)
_LISTABLE = frozenset({"contains", "icontains", "not-contains", "not-icontains"})
_BOUNDED = frozenset({"length", "latency", "tokens", "cost"})


# -- a parsed document and where each of its values was --------------------------------------


@dataclass(frozen=True, slots=True)
class Located:
    """A file's data and the 1-based line each value started on, by path (keys and indexes)."""

    file: str
    data: Any
    lines: Mapping[tuple[str | int, ...], int] = field(default_factory=dict)

    def line(self, path: Sequence[str | int]) -> int | None:
        """The line of ``path``, or of the nearest enclosing value the file has a line for."""
        key = tuple(path)
        while True:
            if key in self.lines:
                return self.lines[key]
            if not key:
                return None
            key = key[:-1]

    def problem(self, path: Sequence[str | int], message: str) -> Problem:
        return Problem(self.file, self.line(path), _field_name(path), message)


def _field_name(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(file)"


def _yaml_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Each value's line, from YAML's node tree (JSON is read by YAML for its lines too)."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return {}
    lines: dict[tuple[str | int, ...], int] = {}

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
                lines[(*path, name)] = key.start_mark.line + 1
                walk(value, (*path, name))
                lines[(*path, name)] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, index))

    if root is not None:
        walk(root, ())
    return lines


def read_document(path: Path, *, text: str | None = None) -> Located:
    """A YAML or JSON file's data with its lines; ExperimentError when it cannot be read."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig") if text is None else text
    except (OSError, UnicodeDecodeError) as error:
        raise ExperimentError([Problem(name, None, "(file)", _read_error(error))]) from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            problem = Problem(name, error.lineno, "(file)", f"not valid JSON: {error.msg}")
            raise ExperimentError([problem]) from None
        return Located(name, data, _yaml_lines(text))
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(error, "problem", None) or str(error)
        raise ExperimentError(
            [Problem(name, line, "(file)", f"not valid YAML: {reason}")]
        ) from None
    return Located(name, data, _yaml_lines(text))


def _read_error(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "is not UTF-8 text"
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, IsADirectoryError):
        return "is a folder, not a file"
    return f"cannot be read ({error.strerror or error})"


# -- assertions ---------------------------------------------------------------------------------


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _schema_problem(schema: object) -> str | None:
    """Why ``schema`` is not a JSON Schema, or None when it is one."""
    if not isinstance(schema, Mapping | bool):
        return f"must be a JSON Schema object, not {type(schema).__name__}"
    import jsonschema

    if isinstance(schema, bool):
        return None
    try:
        jsonschema.validators.validator_for(schema).check_schema(dict(schema))
    except jsonschema.exceptions.SchemaError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        return f"is not a valid JSON Schema ({where}: {error.message})"
    return None


def parse_assertion(
    raw: object, doc: Located, path: Sequence[str | int], problems: list[Problem]
) -> AssertionSpec | None:
    """One assertion from its mapping; problems are appended (None when it cannot be used)."""
    path = tuple(path)
    if not isinstance(raw, Mapping):
        problems.append(doc.problem(path, "an assertion must be a mapping with a 'type'"))
        return None
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        problems.append(doc.problem((*path, "type"), "every assertion needs a 'type'"))
        return None
    if kind not in ASSERTION_TYPES:
        known = ", ".join(sorted(ASSERTION_TYPES))
        problems.append(
            doc.problem((*path, "type"), f"unknown assertion {kind!r} (known: {known})")
        )
        return None
    before = len(problems)
    for key in raw:
        if key not in _ASSERT_KEYS:
            problems.append(doc.problem((*path, str(key)), f"unknown field of a {kind} assertion"))
    numbers: dict[str, float | None] = {}
    for key in ("weight", "threshold", "min", "max"):
        if key in raw:
            numbers[key] = _number(raw[key])
            if numbers[key] is None:
                problems.append(doc.problem((*path, key), "must be a number"))
    weight = numbers.get("weight")
    if weight is not None and weight < 0:
        problems.append(doc.problem((*path, "weight"), "must not be negative"))
    value = raw.get("value")
    if kind in _NEEDS_VALUE and (value is None or value == ""):
        problems.append(doc.problem((*path, "value"), f"a {kind} assertion needs a value"))
    listed = isinstance(value, list) and kind in _LISTABLE
    if listed and not (value and all(isinstance(v, str | int | float) for v in value)):
        problems.append(doc.problem((*path, "value"), "must be text or a list of texts"))
    if kind == "regex" and isinstance(value, str) and not variables(value):
        try:
            re.compile(value)
        except re.error as error:
            problems.append(doc.problem((*path, "value"), f"not a valid regex: {error}"))
    schema = raw.get("schema")
    if kind == "json-schema" and schema is None:
        schema = value
        if schema is None:
            problems.append(
                doc.problem((*path, "schema"), "a json-schema assertion needs a schema")
            )
    if schema is not None and (why := _schema_problem(schema)) is not None:
        key = "schema" if "schema" in raw else "value"
        problems.append(doc.problem((*path, key), why))
    if kind == "json-path" and not isinstance(raw.get("path"), str):
        problems.append(doc.problem((*path, "path"), "a json-path assertion needs a 'path'"))
    if kind == "tool-call" and not isinstance(raw.get("name", value), str):
        problems.append(doc.problem((*path, "name"), "a tool-call assertion needs the tool's name"))
    bounds = [numbers.get(k) for k in ("threshold", "min", "max")]
    if kind in _BOUNDED and all(b is None for b in bounds):
        problems.append(doc.problem(path, f"a {kind} assertion needs 'max' (or 'min')"))
    if kind in ("similar", "llm-rubric"):
        threshold = numbers.get("threshold")
        if threshold is not None and not 0 <= threshold <= 1:
            problems.append(doc.problem((*path, "threshold"), "must be between 0 and 1"))
    metric = raw.get("metric")
    if metric is not None and metric not in _METRICS.get(kind, ()):
        allowed = _METRICS.get(kind)
        what = f"one of {', '.join(allowed)}" if allowed else f"not used by {kind}"
        problems.append(doc.problem((*path, "metric"), f"must be {what}"))
    if len(problems) > before:
        return None
    return AssertionSpec(
        type=kind,
        value=value,
        weight=1.0 if weight is None else weight,
        threshold=numbers.get("threshold"),
        minimum=numbers.get("min"),
        maximum=numbers.get("max"),
        metric=metric if isinstance(metric, str) else None,
        schema=schema if isinstance(schema, Mapping) else None,
        path=raw.get("path") if isinstance(raw.get("path"), str) else None,
        name=raw.get("name") if isinstance(raw.get("name"), str) else None,
    )


def _assertions(
    raw: object, doc: Located, path: tuple[str | int, ...], problems: list[Problem]
) -> tuple[AssertionSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(doc.problem(path, "must be a list of assertions"))
        return ()
    parsed = [parse_assertion(a, doc, (*path, i), problems) for i, a in enumerate(raw)]
    return tuple(a for a in parsed if a is not None)


# -- cases --------------------------------------------------------------------------------------


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)


def _case(
    raw: object, doc: Located, path: tuple[str | int, ...], problems: list[Problem]
) -> Case | None:
    """A case from a mapping: ``{vars, expected, assert, description}``, or flat variables."""
    if not isinstance(raw, Mapping):
        problems.append(doc.problem(path, "a case must be a mapping of variables"))
        return None
    origin = f"{doc.file}:{doc.line(path)}" if doc.line(path) is not None else doc.file
    structured = "vars" in raw or any(k in raw for k in ("assert", "asserts"))
    if not structured:  # a flat row: every key a variable, but "expected"/"description"
        values = {str(k): _text(v) for k, v in raw.items()}
        expected = next((values.pop(k) for k in _EXPECTED_COLUMNS if k in values), None)
        description = next((values.pop(k) for k in _DESCRIPTION_COLUMNS if k in values), "")
        return Case(values, expected, (), description, origin)
    for key in raw:
        if key not in _CASE_KEYS:
            problems.append(doc.problem((*path, str(key)), "unknown field of a case"))
    found = raw.get("vars", {})
    if not isinstance(found, Mapping):
        problems.append(doc.problem((*path, "vars"), "must be a mapping of variable: value"))
        found = {}
    key = "asserts" if "asserts" in raw else "assert"
    asserts = _assertions(raw.get(key), doc, (*path, key), problems)
    expected = raw.get("expected")
    return Case(
        {str(k): _text(v) for k, v in found.items()},
        None if expected is None else _text(expected),
        asserts,
        _text(raw.get("description")),
        origin,
    )


def _csv_cases(path: Path, text: str, problems: list[Problem]) -> list[Case]:
    name = str(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as error:
        problems.append(Problem(name, 1, "header", f"not valid CSV: {error}"))
        return []
    if not header or not any(h.strip() for h in header):
        problems.append(Problem(name, 1, "header", "the first row must name the variables"))
        return []
    names = [h.strip() for h in header]
    for column, title in enumerate(names):
        if not title:
            problems.append(Problem(name, 1, f"column {column + 1}", "has no name"))
        elif names.index(title) != column:
            problems.append(Problem(name, 1, title, "names a column twice"))
    cases = []
    try:
        for row in reader:
            line = reader.line_num
            if not row:
                continue
            if len(row) != len(names):
                problems.append(
                    Problem(
                        name,
                        line,
                        "row",
                        f"has {len(row)} fields, but the header names {len(names)}",
                    )
                )
                continue
            values = dict(zip(names, row, strict=True))
            expected = next((values.pop(k) for k in _EXPECTED_COLUMNS if k in values), None)
            description = next((values.pop(k) for k in _DESCRIPTION_COLUMNS if k in values), "")
            cases.append(Case(values, expected, (), description, f"{name}:{line}"))
    except csv.Error as error:
        problems.append(Problem(name, reader.line_num, "row", f"not valid CSV: {error}"))
    return cases


def _jsonl_cases(path: Path, text: str, problems: list[Problem]) -> list[Case]:
    name = str(path)
    cases = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(Problem(name, number, "(line)", f"not valid JSON: {error.msg}"))
            continue
        doc = Located(name, raw, {(): number})
        case = _case(raw, doc, (), problems)
        if case is not None:
            cases.append(case)
    return cases


def load_cases(path: Path, problems: list[Problem]) -> list[Case]:
    """The cases of a CSV, JSONL or JSON file; what is wrong is appended to ``problems``."""
    suffix = path.suffix.lower()
    if suffix not in CASE_SUFFIXES:
        what = ", ".join(CASE_SUFFIXES)
        problems.append(Problem(str(path), None, "(file)", f"cases must be a {what} file"))
        return []
    if suffix == ".json":
        try:
            doc = read_document(path)
        except ExperimentError as error:
            problems.extend(error.problems)
            return []
        if not isinstance(doc.data, list):
            problems.append(doc.problem((), "must be a list of cases"))
            return []
        parsed = [_case(raw, doc, (i,), problems) for i, raw in enumerate(doc.data)]
        return [c for c in parsed if c is not None]
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(Problem(str(path), None, "(file)", _read_error(error)))
        return []
    reader = _csv_cases if suffix == ".csv" else _jsonl_cases
    return reader(path, text, problems)


# -- variants and the whole file ----------------------------------------------------------------


def _params(
    raw: object,
    doc: Located,
    path: tuple[str | int, ...],
    problems: list[Problem],
    *,
    allowed: Iterable[str],
) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(doc.problem(path, "must be a mapping"))
        return {}
    allowed = tuple(allowed)
    for key, value in raw.items():
        if key not in allowed:
            problems.append(doc.problem((*path, str(key)), f"unknown (use {', '.join(allowed)})"))
        elif key in SAMPLING_KEYS:
            number = _number(value)
            if number is None or (key in _INT_KEYS and not isinstance(value, int)):
                kind = "a whole number" if key in _INT_KEYS else "a number"
                problems.append(doc.problem((*path, str(key)), f"must be {kind}"))
    return dict(raw)


def _variant(
    raw: object, doc: Located, path: tuple[str | int, ...], problems: list[Problem]
) -> Variant | None:
    if not isinstance(raw, Mapping):
        problems.append(doc.problem(path, "a variant must be a mapping with a model and a prompt"))
        return None
    before = len(problems)
    for key in raw:
        if key not in _VARIANT_KEYS:
            problems.append(doc.problem((*path, str(key)), "unknown field of a variant"))
    for key in ("model", "prompt"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            problems.append(doc.problem((*path, key), f"every variant needs a {key}"))
    system = raw.get("system", "")
    if not isinstance(system, str):
        problems.append(doc.problem((*path, "system"), "must be text"))
    params = _params(raw.get("params"), doc, (*path, "params"), problems, allowed=SAMPLING_KEYS)
    extra = _params(raw.get("extra"), doc, (*path, "extra"), problems, allowed=CAPABILITY_KEYS)
    if len(problems) > before:
        return None
    model = str(raw["model"]).strip()
    name = raw.get("name")
    return Variant(
        name=str(name) if name is not None else model.rsplit("/", 1)[-1],
        model=model,
        prompt=str(raw["prompt"]),
        system=str(system),
        params=params,
        extra=extra,
    )


def _positive_int(
    raw: Mapping[str, Any], key: str, doc: Located, problems: list[Problem], default: int
) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.append(doc.problem((key,), "must be a whole number of at least 1"))
        return default
    return value


def _filled_names(spec: AssertionSpec) -> list[str]:
    """The ``{{variables}}`` an assertion's value uses."""
    texts = spec.value if isinstance(spec.value, list) else [spec.value]
    return [n for t in texts if isinstance(t, str) for n in variables(t)]


def check_experiment(experiment: Experiment) -> list[Problem]:
    """What stops ``experiment`` running: a variable some case does not fill, no cases, two
    variants with one name. (Each case names its own line.)"""
    problems: list[Problem] = []
    source = experiment.source or "(experiment)"
    if not experiment.cases:
        problems.append(Problem(source, None, "cases", "the experiment has no cases"))
    names = [v.name for v in experiment.variants]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem(source, None, "variants", f"two variants are named {name!r}"))
    for case in experiment.cases:
        file, _, line = case.origin.rpartition(":")
        where = (file, int(line)) if line.isdigit() else (case.origin or source, None)
        for variant in experiment.variants:
            for part in (variant.system, variant.prompt):
                for name in variables(part):
                    if name not in case.vars:
                        problems.append(
                            Problem(
                                where[0],
                                where[1],
                                name,
                                f"variant {variant.name!r} uses {{{{{name}}}}}, "
                                "which this case does not set",
                            )
                        )
        for spec in experiment.assertions_for(case):
            for name in _filled_names(spec):
                known = name in case.vars or (name == _EXPECTED and case.expected is not None)
                if not known:
                    problems.append(
                        Problem(
                            where[0],
                            where[1],
                            name,
                            f"a {spec.type} assertion uses {{{{{name}}}}}, "
                            "which this case does not set",
                        )
                    )
            if spec.type == "similar" and spec.value is None and case.expected is None:
                problems.append(Problem(where[0], where[1], "expected", "similar needs a value"))
    return _unique(problems)


def _unique(problems: list[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def _from_document(doc: Located, base: Path, problems: list[Problem]) -> Experiment | None:
    raw = doc.data
    if not isinstance(raw, Mapping):
        problems.append(doc.problem((), "an experiment file must be a mapping (variants, cases)"))
        return None
    for key in raw:
        if key not in _TOP_KEYS:
            problems.append(doc.problem((str(key),), "unknown field of an experiment"))
    variants_raw = raw.get("variants")
    variants: list[Variant] = []
    if not isinstance(variants_raw, list) or not variants_raw:
        problems.append(doc.problem(("variants",), "the experiment needs a list of variants"))
    else:
        parsed = [_variant(v, doc, ("variants", i), problems) for i, v in enumerate(variants_raw)]
        variants = [v for v in parsed if v is not None]
    cases = _cases(raw.get("cases"), doc, base, problems)
    key = "asserts" if "asserts" in raw else "assert"
    asserts = _assertions(raw.get(key), doc, (key,), problems)
    threshold = _number(raw.get("threshold", 1.0))
    if threshold is None or not 0 <= threshold <= 1:
        problems.append(doc.problem(("threshold",), "must be a number from 0 to 1"))
        threshold = 1.0
    repeat = _positive_int(raw, "repeat", doc, problems, 1)
    models = {}
    for key, default in (("judge", DEFAULT_JUDGE_MODEL), ("embedding", DEFAULT_EMBEDDING_MODEL)):
        value = raw.get(key, default)
        if not isinstance(value, str) or not value.strip():
            problems.append(doc.problem((key,), "must name a model"))
            value = default
        models[key] = value.strip()
    name = raw.get("name")
    return Experiment(
        name=str(name) if name else Path(doc.file).stem,
        variants=tuple(variants),
        cases=tuple(cases),
        asserts=asserts,
        threshold=threshold,
        repeat=repeat,
        judge_model=models["judge"],
        embedding_model=models["embedding"],
        source=doc.file,
    )


def _cases(raw: object, doc: Located, base: Path, problems: list[Problem]) -> list[Case]:
    if isinstance(raw, str):
        return load_cases(base / raw, problems)
    if isinstance(raw, list):
        parsed = [_case(c, doc, ("cases", i), problems) for i, c in enumerate(raw)]
        return [c for c in parsed if c is not None]
    problems.append(doc.problem(("cases",), "must be a list of cases or the path of a case file"))
    return []


def load_experiment(
    path: Path, *, adapt: Callable[[Located, list[Problem]], Located] | None = None
) -> Experiment:
    """The experiment in ``path`` (YAML or JSON), checked whole; ExperimentError lists every
    problem found. ``adapt`` rewrites another tool's document into this shape first (the
    promptfoo import)."""
    doc = read_document(path)
    problems: list[Problem] = []
    if adapt is not None:
        doc = adapt(doc, problems)
    experiment = _from_document(doc, path.parent, problems)
    if experiment is not None and not problems:
        problems.extend(check_experiment(experiment))
    if problems or experiment is None:
        raise ExperimentError(_unique(problems))
    return experiment

"""An experiment as plain data: variants, cases, assertions, and the problems a file can have."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ASSERTION_TYPES",
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_JUDGE_MODEL",
    "AssertionSpec",
    "Case",
    "Experiment",
    "ExperimentError",
    "Problem",
    "Variant",
]

#: The judge and embedding models when the file names none.
DEFAULT_JUDGE_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
DEFAULT_EMBEDDING_MODEL = "@cf/baai/bge-base-en-v1.5"

#: Every assertion type an experiment may name (promptfoo's names where they overlap).
ASSERTION_TYPES = frozenset(
    {
        "equals",
        "contains",
        "icontains",
        "not-contains",
        "not-icontains",
        "starts-with",
        "regex",
        "is-json",
        "contains-json",
        "json-schema",
        "json-path",
        "length",
        "latency",
        "tokens",
        "cost",
        "tool-call",
        "similar",
        "llm-rubric",
    }
)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a file: where (file, line, field) and what, in plain words."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.field}: {self.message}"


class ExperimentError(ValueError):
    """The experiment cannot run as written; nothing was sent. ``problems`` lists each."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class AssertionSpec:
    """One check of a reply. ``value`` may hold ``{{variables}}`` and ``{{expected}}``."""

    type: str
    value: Any = None
    weight: float = 1.0
    #: similarity or judge score at or above which it passes; a bound for length/latency…
    threshold: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    #: latency: "ttft" or "total"; cost: "usd" or "neurons"
    metric: str | None = None
    #: json-schema / tool-call arguments schema
    schema: Mapping[str, Any] | None = None
    #: json-path: the path whose value must equal ``value``
    path: str | None = None
    #: tool-call: the function's name
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One row of variables, with its expected value and its own assertions."""

    vars: Mapping[str, str]
    expected: str | None = None
    asserts: tuple[AssertionSpec, ...] = ()
    description: str = ""
    #: where it came from, for messages: "cases.csv:12"
    origin: str = ""


@dataclass(frozen=True, slots=True)
class Variant:
    """One way of asking: a model with its parameters, system prompt, template and extra JSON."""

    name: str
    model: str
    prompt: str
    system: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    #: request fields beyond sampling (response_format, tools, tool_choice, reasoning_effort,
    #: enable_thinking, lora): merged over ``params``, checked when the file is read
    extra: Mapping[str, Any] = field(default_factory=dict)

    def request_params(self) -> dict[str, Any]:
        """``params`` with ``extra`` merged over them: what the request is built from."""
        return {**self.params, **self.extra}


@dataclass(frozen=True, slots=True)
class Experiment:
    """Variants x cases, the assertions every case gets, and how a case passes."""

    name: str
    variants: tuple[Variant, ...]
    cases: tuple[Case, ...]
    asserts: tuple[AssertionSpec, ...] = ()
    #: a case passes when its weighted score reaches this (1.0: every assertion passes)
    threshold: float = 1.0
    repeat: int = 1
    judge_model: str = DEFAULT_JUDGE_MODEL
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    #: the file it was read from (messages, and the run's record)
    source: str = ""

    def assertions_for(self, case: Case) -> tuple[AssertionSpec, ...]:
        """The experiment's assertions, then the case's own."""
        return self.asserts + case.asserts

    def needs_judge(self) -> bool:
        return any(a.type == "llm-rubric" for c in self.cases for a in self.assertions_for(c))

    def needs_embeddings(self) -> bool:
        return any(a.type == "similar" for c in self.cases for a in self.assertions_for(c))

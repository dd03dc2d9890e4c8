"""Reading a promptfoo config (``promptfooconfig.yaml``) as an experiment: the overlapping subset.

What maps: ``description``; ``prompts`` (text, ``{raw, label}``, or ``file://`` a text file);
``providers`` that name a Workers AI model (``cloudflare-ai:chat:<model>``, or an
OpenAI-compatible id whose model is a Workers AI id, e.g. ``openai:chat:@cf/…``) with their
``config`` sampling options and ``label``; ``tests`` (a list, or a CSV/JSONL/JSON file, whose
``__expected`` column is an assertion: ``contains: Paris``, or a value the reply equals) with
``vars`` and ``assert``; ``defaultTest`` ``vars`` and ``assert``; the assertion types flarechat
has (promptfoo's ``threshold`` on ``latency``/``cost`` is the maximum). Each variant is one
provider with one prompt.

Anything else (another provider, ``javascript``/``python`` assertions, ``scenarios``, list
values in ``vars``…) is named as a problem with its line: never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from flarechat.core.experiments.loading import (
    SAMPLING_KEYS,
    Located,
    load_experiment,
    read_document,
)
from flarechat.core.experiments.spec import ASSERTION_TYPES, AssertionSpec, Experiment, Problem

__all__ = ["is_promptfoo", "load_promptfoo", "model_of"]

_CLOUDFLARE = "cloudflare-ai:chat:"
_OPENAI_PREFIXES = ("openai:chat:", "openai:")
_WORKERS_AI = ("@cf/", "@hf/")
_FILE = "file://"
_TOP = frozenset({"description", "prompts", "providers", "tests", "defaultTest"})
_TEST_KEYS = frozenset({"vars", "assert", "description"})
_DEFAULT_KEYS = frozenset({"vars", "assert"})
_PROVIDER_KEYS = frozenset({"id", "label", "config"})
#: promptfoo config keys flarechat reads as sampling options (camelCase included).
_CONFIG_NAMES = {
    **{k: k for k in SAMPLING_KEYS},
    "maxTokens": "max_tokens",
    "topP": "top_p",
    "topK": "top_k",
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
}
#: The assertion types whose ``threshold`` is the maximum allowed.
_THRESHOLD_IS_MAX = frozenset({"latency", "cost"})
_ASSERT_KEYS = frozenset({"type", "value", "threshold", "weight"})
_SUBSET = "prompts, providers, tests, defaultTest (vars, assert), description"


def model_of(provider: str) -> str | None:
    """The Workers AI model a promptfoo provider id names, or None when it names none."""
    if provider.startswith(_CLOUDFLARE):
        model = provider[len(_CLOUDFLARE) :]
        return model or None
    for prefix in _OPENAI_PREFIXES:
        if provider.startswith(prefix):
            model = provider[len(prefix) :]
            return model if model.startswith(_WORKERS_AI) else None
    return None


def is_promptfoo(path: Path) -> bool:
    """A promptfoo config by its name, or by its shape (``prompts`` and ``providers``)."""
    if path.name.lower().startswith("promptfooconfig"):
        return True
    try:
        doc = read_document(path)
    except ValueError:
        return False
    return isinstance(doc.data, Mapping) and {"prompts", "providers"} <= set(doc.data)


def _unsupported(doc: Located, path: tuple[str | int, ...], what: str) -> Problem:
    return doc.problem(path, f"{what} is not supported by flarechat eval")


#: (where in the file, label, model, sampling params) of one provider
_Provider = tuple[tuple[str | int, ...], str, str, dict[str, Any]]


class _Adapter:
    """Builds the native document and its lines from the promptfoo one."""

    def __init__(self, doc: Located, problems: list[Problem]) -> None:
        self.doc = doc
        self.problems = problems
        self.lines: dict[tuple[str | int, ...], int] = {}

    def keep_lines(self, source: tuple[str | int, ...], target: tuple[str | int, ...]) -> None:
        """Every line under ``source`` in the promptfoo file, under ``target`` natively."""
        for path, line in self.doc.lines.items():
            if path[: len(source)] == source:
                self.lines[target + path[len(source) :]] = line

    def prompts(self, raw: object) -> list[tuple[str, str]]:
        """(label, text) of each prompt."""
        doc = self.doc
        items = raw if isinstance(raw, list) else [raw]
        if raw is None or not items:
            self.problems.append(doc.problem(("prompts",), "a promptfoo config needs prompts"))
            return []
        found = []
        for i, item in enumerate(items):
            where: tuple[str | int, ...] = ("prompts", i) if isinstance(raw, list) else ("prompts",)
            label = None
            if isinstance(item, Mapping):
                for key in item:
                    if key not in ("raw", "label", "id"):
                        self.problems.append(_unsupported(doc, (*where, str(key)), f"'{key}'"))
                label = item.get("label")
                item = item.get("raw")
            if not isinstance(item, str) or not item.strip():
                self.problems.append(doc.problem(where, "a prompt must be text"))
                continue
            if item.startswith(_FILE):
                file = Path(doc.file).parent / item[len(_FILE) :]
                if file.suffix.lower() not in (".txt", ".md"):
                    self.problems.append(_unsupported(doc, where, f"a {file.suffix} prompt file"))
                    continue
                try:
                    item = file.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as error:
                    self.problems.append(doc.problem(where, f"{file} cannot be read ({error})"))
                    continue
            found.append((str(label) if label else f"prompt {i + 1}", item))
        return found

    def providers(
        self, raw: object
    ) -> list[tuple[tuple[str | int, ...], str, str, dict[str, Any]]]:
        """(where, label, model, params) of each provider."""
        doc = self.doc
        if not isinstance(raw, list) or not raw:
            self.problems.append(doc.problem(("providers",), "a promptfoo config needs providers"))
            return []
        found = []
        for i, item in enumerate(raw):
            where: tuple[str | int, ...] = ("providers", i)
            config: object = {}
            label = None
            if isinstance(item, Mapping):
                for key in item:
                    if key not in _PROVIDER_KEYS:
                        self.problems.append(_unsupported(doc, (*where, str(key)), f"'{key}'"))
                config = item.get("config") or {}
                label = item.get("label")
                item = item.get("id")
            model = model_of(item) if isinstance(item, str) else None
            if model is None:
                self.problems.append(
                    doc.problem(
                        where,
                        f"provider {item!r} is not a Workers AI model (use "
                        "cloudflare-ai:chat:@cf/… or an OpenAI-compatible id of an @cf/ model)",
                    )
                )
                continue
            params: dict[str, Any] = {}
            if not isinstance(config, Mapping):
                self.problems.append(doc.problem((*where, "config"), "must be a mapping"))
                config = {}
            for key, value in config.items():
                name = _CONFIG_NAMES.get(key)
                if name is None:
                    what = f"provider option '{key}'"
                    self.problems.append(_unsupported(doc, (*where, "config", key), what))
                else:
                    params[name] = value
            found.append((where, str(label) if label else model.rsplit("/", 1)[-1], model, params))
        return found

    def assertions(self, raw: object, source: tuple[str | int, ...]) -> list[Any]:
        doc = self.doc
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.problems.append(doc.problem(source, "must be a list of assertions"))
            return []
        found: list[Any] = []
        for i, item in enumerate(raw):
            where = (*source, i)
            if not isinstance(item, Mapping):
                found.append(item)  # the native reader names it
                continue
            kind = item.get("type")
            if isinstance(kind, str) and kind not in ASSERTION_TYPES:
                self.problems.append(_unsupported(doc, (*where, "type"), f"assertion {kind!r}"))
                continue
            for key in item:
                if key not in _ASSERT_KEYS:
                    self.problems.append(_unsupported(doc, (*where, str(key)), f"'{key}'"))
            native = {k: v for k, v in item.items() if k in _ASSERT_KEYS}
            if kind in _THRESHOLD_IS_MAX and "threshold" in native:
                native["max"] = native.pop("threshold")
            if kind in ("json-schema", "is-json", "contains-json") and isinstance(
                native.get("value"), Mapping
            ):
                native["schema"] = native.pop("value")
            found.append(native)
        return found

    def variables(self, raw: object, where: tuple[str | int, ...]) -> dict[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.problems.append(self.doc.problem(where, "must be a mapping of variables"))
            return {}
        for key, value in raw.items():
            if isinstance(value, list):
                what = "a list of values (promptfoo's combinations)"
                self.problems.append(_unsupported(self.doc, (*where, str(key)), what))
            elif isinstance(value, str) and value.startswith(_FILE):
                self.problems.append(_unsupported(self.doc, (*where, str(key)), "a file:// value"))
        return dict(raw)


def _adapt(doc: Located, problems: list[Problem]) -> Located:
    raw = doc.data
    if not isinstance(raw, Mapping):
        problems.append(doc.problem((), "a promptfoo config must be a mapping"))
        return doc
    adapter = _Adapter(doc, problems)
    for key in raw:
        if key not in _TOP:
            message = f"'{key}' is not supported by flarechat eval (it reads {_SUBSET})"
            problems.append(doc.problem((str(key),), message))
    prompts = adapter.prompts(raw.get("prompts"))
    providers = adapter.providers(raw.get("providers"))
    variants: list[dict[str, Any]] = []
    for where, label, model, params in providers:
        for prompt_label, text in prompts:
            name = label if len(prompts) == 1 else f"{label} · {prompt_label}"
            adapter.keep_lines(where, ("variants", len(variants)))
            variants.append({"name": name, "model": model, "prompt": text, "params": params})
    default = raw.get("defaultTest") or {}
    if not isinstance(default, Mapping):
        problems.append(doc.problem(("defaultTest",), "must be a mapping"))
        default = {}
    for key in default:
        if key not in _DEFAULT_KEYS:
            problems.append(_unsupported(doc, ("defaultTest", str(key)), f"defaultTest '{key}'"))
    shared_vars = adapter.variables(default.get("vars"), ("defaultTest", "vars"))
    asserts = adapter.assertions(default.get("assert"), ("defaultTest", "assert"))
    adapter.keep_lines(("defaultTest", "assert"), ("assert",))
    tests = raw.get("tests")
    cases: Any
    if isinstance(tests, str):
        cases = tests[len(_FILE) :] if tests.startswith(_FILE) else tests
        adapter.keep_lines(("tests",), ("cases",))
    elif isinstance(tests, list):
        cases = []
        for i, test in enumerate(tests):
            where = ("tests", i)
            if not isinstance(test, Mapping):
                problems.append(doc.problem(where, "a test must be a mapping with vars"))
                continue
            for key in test:
                if key not in _TEST_KEYS:
                    problems.append(_unsupported(doc, (*where, str(key)), f"test '{key}'"))
            values = {**shared_vars, **adapter.variables(test.get("vars"), (*where, "vars"))}
            adapter.keep_lines(where, ("cases", len(cases)))
            case: dict[str, Any] = {
                "vars": values,
                "assert": adapter.assertions(test.get("assert"), (*where, "assert")),
            }
            if test.get("description"):
                case["description"] = test["description"]
            cases.append(case)
    else:
        problems.append(doc.problem(("tests",), "a promptfoo config needs tests"))
        cases = []
    native: dict[str, Any] = {"variants": variants, "cases": cases, "assert": asserts}
    if isinstance(raw.get("description"), str):
        native["name"] = raw["description"]
    if not variants:  # already named above; keep the native reader from naming it again
        native["variants"] = [{"model": "(none)", "prompt": "(none)"}]
    return Located(doc.file, native, adapter.lines)


def _expected_assertion(text: str) -> AssertionSpec:
    """promptfoo's ``__expected`` column: ``type: value`` (``contains: Paris``), else equals."""
    kind, colon, value = text.partition(":")
    if colon and kind.strip() in ASSERTION_TYPES:
        return AssertionSpec(kind.strip(), value.strip())
    return AssertionSpec("equals", text)


def load_promptfoo(path: Path) -> Experiment:
    """The experiment a promptfoo config describes; ExperimentError names what is outside
    the subset, and every other problem, by file, line and field."""
    experiment = load_experiment(path, adapt=_adapt)
    cases = tuple(
        replace(case, asserts=(*case.asserts, _expected_assertion(case.expected)))
        if case.expected
        else case
        for case in experiment.cases
    )
    return replace(experiment, cases=cases)

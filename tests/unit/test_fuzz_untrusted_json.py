"""Every parser of untrusted JSON, fuzzed (issue 25's guard rail): random and adversarial JSON --
deep, huge, wrong types, lone surrogates, control characters -- gets a value or the project's
own error type back, never another exception, and within a time limit.

The parsers are the ones a server's bodies and chunks and the user's files reach: safejson
itself, the stream decoder (chunks and whole bodies), error bodies, catalogue items and their
properties, model schemas, token checks, the catalogue cache, JSON-mode replies, JSON Schema
and tool checks, ``--json-schema`` / ``--tools`` files, tool-call arguments and the emulator's
request bodies."""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flarechat import safejson
from flarechat.api import _catalogue
from flarechat.api._decode import ReplyDecoder, decode_complete
from flarechat.api._errors_map import classify, parse_error_body
from flarechat.api.errors import WorkersAIError
from flarechat.api.schema import parse_model_schema
from flarechat.api.tokens import token_check_from
from flarechat.api.tools import ToolCall
from flarechat.cli import specs
from flarechat.core import capabilities, catalogue
from flarechat.core.connect import ConfigurationError
from flarechat.core.session.structured import json_check
from flarechat.emulator.app import _parse_json as emulator_body

#: Per parser call: far above what any of them needs, even with both cores busy; an
#: exponential blow-up or a hang would not meet it.
TIME_LIMIT = 5.0
FUZZ = settings(
    max_examples=150,
    deadline=None,  # the time limit below is ours, and generous; hypothesis's is 200 ms
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Text with what hostile servers send: lone surrogates, C0/C1 controls, escapes, BOMs.
hostile_text = st.text(
    alphabet=st.one_of(
        st.characters(codec=None),  # any code point, lone surrogates included
        st.sampled_from(["\x1b", "\x00", "\x9b", "\r", "\u202e", "\ufeff", "\ud800", "\udfff"]),
    ),
    max_size=40,
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
#: Wrong types everywhere: any JSON value, with keys the parsers look for mixed in.
keys = st.one_of(
    hostile_text,
    st.sampled_from(
        [
            "name",
            "result",
            "response",
            "choices",
            "delta",
            "tool_calls",
            "function",
            "arguments",
            "errors",
            "error",
            "success",
            "usage",
            "properties",
            "input",
            "messages",
            "type",
            "models",
            "fetched_at",
            "action",
            "output",
            "content",
            "status",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=30,
)


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


#: Text that is not quite JSON, or JSON past every limit.
ADVERSARIAL = [
    _deep(100_000),
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    "1" * 5000,
    '"\\ud800"',
    '{"response": "\\udfff\\u001b[2J"}',
    '{"x": "' + "y" * 1_000_000 + '"}',
    "[" * 10_000,
    "\ufeff{}",
    "NaN",
    '{"choices": [{"delta": {"tool_calls": [{"index": 1e400}]}}]}',
]


def _text_of(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def _bounded(parse: Callable[[], object], *allowed: type[BaseException]) -> None:
    started = time.monotonic()
    with contextlib.suppress(*allowed):
        parse()
    elapsed = time.monotonic() - started
    assert elapsed < TIME_LIMIT, f"{elapsed:.1f} s"


# -- text parsers: any text ------------------------------------------------------------------


def _text_parsers(tmp_path: Path) -> dict[str, tuple[Callable[[str], object], tuple[type, ...]]]:
    def from_file(load: Callable[[str], object]) -> Callable[[str], object]:
        def parse(text: str) -> object:
            path = tmp_path / "input.json"
            path.write_text(safejson.scrub_surrogates(text), encoding="utf-8")
            return load(str(path))

        return parse

    def chunk(text: str) -> object:
        decoder = ReplyDecoder(secrets=["tok-fuzz-secret-0123"])
        decoder.feed_data(text)
        return decoder.feed_all([text, text])

    return {
        "safejson": (safejson.loads, (safejson.JSONInputError,)),
        "stream-chunk": (chunk, (WorkersAIError,)),
        "error-body": (parse_error_body, ()),
        "classify": (lambda t: classify(status=500, body=t, secrets=["tok-fuzz"]), ()),
        "catalogue-cache": (catalogue._parse, ()),
        "json-mode-reply": (json_check, ()),
        "json-text": (capabilities.json_text_problem, ()),
        "tool-call-arguments": (lambda t: ToolCall.of(id="1", name="n", arguments=t), ()),
        "reasoning-effort-property": (_catalogue.parse_reasoning_effort, ()),
        "emulator-body": (lambda t: emulator_body(t.encode("utf-8", "surrogatepass")), ()),
        "json-schema-file": (from_file(specs.load_json_schema), (ConfigurationError,)),
        "tools-file": (from_file(specs.load_tools), (ConfigurationError,)),
    }


TEXT_PARSERS = [
    "safejson",
    "stream-chunk",
    "error-body",
    "classify",
    "catalogue-cache",
    "json-mode-reply",
    "json-text",
    "tool-call-arguments",
    "reasoning-effort-property",
    "emulator-body",
    "json-schema-file",
    "tools-file",
]


@pytest.mark.parametrize("name", TEXT_PARSERS)
def test_adversarial_text_gets_a_value_or_the_projects_own_error(name: str, tmp_path: Path) -> None:
    parse, allowed = _text_parsers(tmp_path)[name]
    for text in ADVERSARIAL:
        _bounded(functools.partial(parse, text), *allowed)


@pytest.mark.parametrize("name", TEXT_PARSERS)
def test_random_json_and_near_json_gets_a_value_or_the_projects_own_error(
    name: str, tmp_path: Path
) -> None:
    parse, allowed = _text_parsers(tmp_path)[name]

    @FUZZ
    @given(
        st.one_of(
            values.map(_text_of),
            hostile_text,
            values.map(_text_of).map(lambda t: t[: len(t) // 2]),  # cut off mid-body
            st.integers(min_value=1, max_value=3000).map(_deep),
        )
    )
    @example("")
    def check(text: str) -> None:
        _bounded(lambda: parse(text), *allowed)

    check()


# -- value parsers: what a parsed body holds, of any type ---------------------------------------


VALUE_PARSERS: dict[str, tuple[Callable[[Any], object], tuple[type, ...]]] = {
    "reply-body": (lambda v: decode_complete(v, secrets=["tok-fuzz"]), (WorkersAIError,)),
    "reply-chunk": (
        lambda v: ReplyDecoder().feed(v) if isinstance(v, dict) else None,
        (WorkersAIError,),
    ),
    "catalogue-item": (_catalogue.parse_model, ()),
    "finetune-item": (_catalogue.parse_finetune, ()),
    "catalogue-page": (
        lambda v: (
            _catalogue.is_last_page(v, page=1, per_page=1, received=1)
            if isinstance(v, dict)
            else None
        ),
        (),
    ),
    "model-schema": (lambda v: parse_model_schema("@cf/x", v), ()),
    "token-check": (
        lambda v: token_check_from("user", v) if isinstance(v, dict) else None,
        (),
    ),
    "cached-model": (catalogue.model_from_json, ()),
    "schema-check": (capabilities.schema_problem, ()),
    "tool-check": (
        lambda v: capabilities.tool_problem(name=v, description=v, parameters=v),
        (),
    ),
    "json-mode-schema": (
        lambda v: json_check('{"a": 1}', v) if isinstance(v, dict) else None,
        (),
    ),
}


@pytest.mark.parametrize("name", list(VALUE_PARSERS))
def test_random_values_of_wrong_types_get_a_value_or_the_projects_own_error(name: str) -> None:
    parse, allowed = VALUE_PARSERS[name]

    @FUZZ
    @given(values)
    def check(value: Any) -> None:
        _bounded(lambda: parse(value), *allowed)

    check()

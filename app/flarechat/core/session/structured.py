"""JSON replies: whether a reply asked for as JSON parses and follows its schema, and how it
reads pretty-printed. Pure: the window, the CLI and tests share one verdict."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flarechat import safejson

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = ["JsonVerdict", "json_check"]

_INDENT = 2
#: Models often wrap JSON in a Markdown code fence even in JSON mode; the fence is not data.
_FENCED = re.compile(r"\A\s*```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?```\s*\Z", re.DOTALL)
#: How much of a failing value a problem quotes.
_QUOTE_LIMIT = 80


@dataclass(frozen=True, slots=True)
class JsonVerdict:
    """What a JSON reply is worth.

    ``parses`` says whether the text is JSON at all (``parsed`` is then its value, which may be
    ``None`` for ``null``); ``valid`` is parses *and* follows the schema (no schema: parses);
    ``pretty`` is the value re-indented, or the text as it came when it does not parse;
    ``problem`` says in plain words what is wrong, with the JSON path of the first error.
    """

    parsed: Any
    pretty: str
    parses: bool
    valid: bool
    problem: str | None = None


def _unfenced(text: str) -> str:
    match = _FENCED.match(text)
    return match.group("body") if match else text


def _where(error: ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"${path}"


def _schema_problem(value: Any, schema: Mapping[str, Any]) -> str | None:
    # Imported when a schema is used: the window and a plain ``ask`` start without it.
    from jsonschema.exceptions import SchemaError, best_match
    from jsonschema.validators import validator_for

    schema = dict(schema)
    try:
        validator_class = validator_for(schema)
        validator_class.check_schema(schema)
    except SchemaError as error:
        return f"The schema itself is not valid: {error.message}"
    first = best_match(validator_class(schema).iter_errors(value))
    if first is None:
        return None
    message = first.message
    if len(message) > _QUOTE_LIMIT * 2:
        message = message[: _QUOTE_LIMIT * 2] + "\N{HORIZONTAL ELLIPSIS}"
    return f"Does not follow the schema at {_where(first)}: {message}"


def json_check(text: str, schema: Mapping[str, Any] | None = None) -> JsonVerdict:
    """Parse a JSON reply (a surrounding code fence is ignored) and validate it against
    ``schema`` (any draft ``jsonschema`` knows; ``$schema`` picks it, else the latest)."""
    body = _unfenced(text).strip()
    try:
        value = safejson.loads(body)
    except safejson.JSONTooDeep:
        problem = "The reply is JSON nested too deeply to read."
        return JsonVerdict(parsed=None, pretty=text, parses=False, valid=False, problem=problem)
    except json.JSONDecodeError as error:
        where = f" (line {error.lineno}, column {error.colno})"
        problem = "The reply is empty." if not body else f"The reply is not JSON{where}."
        return JsonVerdict(parsed=None, pretty=text, parses=False, valid=False, problem=problem)
    pretty = json.dumps(value, ensure_ascii=False, indent=_INDENT)
    checked = _schema_problem(value, schema) if schema is not None else None
    return JsonVerdict(
        parsed=value, pretty=pretty, parses=True, valid=checked is None, problem=checked
    )

"""JSON mode: read response_format, refuse schemas that cannot be met, build a minimal instance."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flarechat.emulator.wire import ErrorSpec

__all__ = [
    "JSON_MODE_FAILED",
    "JsonRequest",
    "Unsatisfiable",
    "instance",
    "requested",
    "satisfiable",
]

#: The documented failure text (json-mode.mdx); its code and status are not documented (§12.9).
JSON_MODE_FAILED = "JSON Mode couldn't be met"
_MAX_DEPTH = 24
_SAMPLE_STRING = "example"
_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "contains")


class Unsatisfiable(Exception):
    """No JSON value can match the schema (the model would answer 'couldn't be met')."""


@dataclass(frozen=True, slots=True)
class JsonRequest:
    """A JSON-mode request: ``schema`` None means any JSON object (``json_object``)."""

    schema: dict[str, Any] | bool | None


def _bad(detail: str) -> ErrorSpec:
    return ErrorSpec(400, 5006, "Bad input: Error: " + detail)


def _unwrap(json_schema: Any) -> dict[str, Any] | bool | None:
    """A bare schema (Workers AI form) or the OpenAI ``{name, schema, strict}`` wrapper."""
    if isinstance(json_schema, dict) and isinstance(json_schema.get("schema"), dict | bool):
        inner: dict[str, Any] | bool = json_schema["schema"]
        return inner
    if isinstance(json_schema, dict) and set(json_schema) <= {"name", "strict", "description"}:
        return None  # a wrapper without a schema: any object
    return json_schema if isinstance(json_schema, dict | bool) else None


def requested(body: dict[str, Any]) -> tuple[JsonRequest | None, ErrorSpec | None]:
    """The JSON-mode request in ``response_format``, None for plain text, or a 5006."""
    fmt = body.get("response_format")
    if fmt is None:
        return None, None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "text":
        return None, None
    if kind == "json_object":
        return JsonRequest(None), None
    if kind == "json_schema" and isinstance(fmt, dict):
        if "json_schema" not in fmt:
            return None, _bad("required properties at '/response_format' are 'json_schema'")
        return JsonRequest(_unwrap(fmt["json_schema"])), None
    return None, _bad(f"Value '{kind}' of '/response_format/type' not in enum")


def _children(schema: dict[str, Any]) -> Iterator[Any]:
    for key in _SUBSCHEMA_LISTS:
        value = schema.get(key)
        yield from value if isinstance(value, list) else []
    for key in _SUBSCHEMA_MAPS:
        value = schema.get(key)
        yield from value.values() if isinstance(value, dict) else []
    for key in _SUBSCHEMA_ONE:
        if key in schema:
            yield schema[key]


def satisfiable(schema: Any) -> bool:
    """False when any subschema uses ``not``, an empty enum, or is ``false`` (kept simple)."""
    if schema is False:
        return False
    if not isinstance(schema, dict):
        return True
    if "not" in schema or schema.get("enum") == []:
        return False
    return all(satisfiable(child) for child in _children(schema) if child is not True)


@dataclass(frozen=True, slots=True)
class _Context:
    root: dict[str, Any]
    depth: int = 0

    def deeper(self) -> _Context:
        if self.depth >= _MAX_DEPTH:
            raise Unsatisfiable("the schema nests (or recurses) too deeply")
        return _Context(self.root, self.depth + 1)


def instance(schema: dict[str, Any] | bool | None) -> Any:
    """A minimal JSON value valid against ``schema`` (None: any object); or Unsatisfiable."""
    if schema is None:
        return {}
    if not satisfiable(schema):
        raise Unsatisfiable("the schema uses 'not' or an empty enum")
    root = schema if isinstance(schema, dict) else {}
    value = _value(schema, _Context(root))
    return value


def _resolve(ref: str, ctx: _Context) -> Any:
    node: Any = ctx.root
    for part in ref.removeprefix("#/").split("/") if ref != "#" else []:
        if not isinstance(node, dict) or part not in node:
            raise Unsatisfiable(f"unresolvable $ref {ref!r}")
        node = node[part]
    return node


def _value(schema: Any, ctx: _Context) -> Any:
    if schema is True or schema == {}:
        return _SAMPLE_STRING if ctx.depth else {}
    if not isinstance(schema, dict):
        raise Unsatisfiable("a schema must be an object or a boolean")
    if isinstance(schema.get("$ref"), str):
        return _value(_resolve(schema["$ref"], ctx), ctx.deeper())
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _value(schema[key][0], ctx.deeper())
    return _typed(schema, _type_of(schema), ctx)


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        if not kind:
            raise Unsatisfiable("an empty type list")
        kind = next((k for k in kind if k != "null"), kind[0])
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "required" in schema:
        return "object"
    return "array" if "items" in schema else "string"


def _typed(schema: dict[str, Any], kind: str, ctx: _Context) -> Any:
    if kind == "object":
        return _object(schema, ctx)
    if kind == "array":
        return _array(schema, ctx)
    if kind in ("number", "integer"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "string":
        return _string(schema)
    raise Unsatisfiable(f"unknown type {kind!r}")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _listing(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _object(schema: dict[str, Any], ctx: _Context) -> dict[str, Any]:
    properties = _mapping(schema.get("properties"))
    required = _listing(schema.get("required"))
    result: dict[str, Any] = {}
    for name in required:
        result[str(name)] = _value(properties.get(name, True), ctx.deeper())
    return result


def _array(schema: dict[str, Any], ctx: _Context) -> list[Any]:
    low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
    if isinstance(high, int) and high < low:
        raise Unsatisfiable("maxItems is below minItems")
    prefix = _listing(schema.get("prefixItems"))
    items = [_value(s, ctx.deeper()) for s in prefix[:low]]
    while len(items) < low:
        items.append(_value(schema.get("items", True), ctx.deeper()))
    return items


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    low = max(_bound(schema, "minimum", 0), _bound(schema, "exclusiveMinimum", 1))
    high = min(
        _bound(schema, "maximum", 0, upper=True), _bound(schema, "exclusiveMaximum", -1, upper=True)
    )
    value = 0.0 if low <= 0 <= high else (low if low > 0 else high)
    if integer:
        value = math.ceil(value) if value == low else math.floor(value)
    if not low <= value <= high:
        raise Unsatisfiable("no number fits between minimum and maximum")
    return int(value) if integer else value


def _bound(schema: dict[str, Any], key: str, step: int, *, upper: bool = False) -> float:
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.inf if upper else -math.inf
    nudge = 1e-9 if isinstance(value, float) else 1
    return float(value) + step * nudge


def _string(schema: dict[str, Any]) -> str:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if isinstance(high, int) and high < low:
        raise Unsatisfiable("maxLength is below minLength")
    text = _FORMATS.get(str(schema.get("format")), _SAMPLE_STRING)
    text = text.ljust(low, "x")
    return text[:high] if isinstance(high, int) else text

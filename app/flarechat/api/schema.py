"""What a model's input schema (``GET …/ai/models/schema``) says it accepts, in a few flags."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelSchema", "parse_model_schema"]

_VARIANT_KEYS = ("oneOf", "anyOf", "allOf")
_MAX_DEPTH = 8  # nested oneOf/anyOf levels followed; real schemas use one or two


@dataclass(frozen=True, slots=True)
class ModelSchema:
    """A summary of one model's input (and output) schema; every flag False when unknown.

    ``known`` is False when the schema was missing or unreadable: the request builder then
    uses its documented defaults instead of these flags.
    """

    model: str
    known: bool = False
    #: ``messages[].content`` may be an array of parts
    takes_content_parts: bool = False
    #: the parts may be ``image_url`` (vision through content parts)
    takes_image_parts: bool = False
    #: a top-level ``image`` input (legacy vision models such as llama-3.2-11b-vision)
    takes_image_field: bool = False
    #: ``image`` accepts an array of byte values (else a base64 string)
    image_field_bytes: bool = True
    supports_tools: bool = False
    #: tools in the flat legacy form ``{name, description, parameters}``
    flat_tools: bool = False
    #: tools in the OpenAI form ``{type: "function", function: {…}}``
    openai_tools: bool = False
    supports_tool_choice: bool = False
    supports_response_format: bool = False
    #: ``response_format.json_schema`` is the OpenAI wrapper ``{name, schema, strict}``
    openai_response_format: bool = False
    supports_lora: bool = False
    #: the values ``reasoning_effort`` takes (``None`` in the enum means it can be turned off)
    reasoning_efforts: tuple[str | None, ...] = ()
    supports_reasoning_effort: bool = False
    supports_thinking_toggle: bool = False
    supports_streaming: bool = False
    #: the output is an OpenAI ``chat.completion`` (``choices``), not ``{response}``
    openai_output: bool = False

    @property
    def legacy(self) -> bool:
        """A known schema of the legacy family: string content, ``{response}`` output."""
        return self.known and not self.openai_output and not self.takes_content_parts


def parse_model_schema(model: str, payload: object) -> ModelSchema:
    """The ``result`` of the schema endpoint (or the whole envelope); never raises."""
    if isinstance(payload, Mapping) and isinstance(payload.get("result"), Mapping):
        payload = payload["result"]
    if not isinstance(payload, Mapping) or not isinstance(payload.get("input"), Mapping):
        return ModelSchema(model=model)
    props = _properties(payload["input"])
    content = _content_schema(props.get("messages"))
    tools = _items(props.get("tools"))
    image = props.get("image")
    response_format = props.get("response_format")
    effort = props.get("reasoning_effort")
    return ModelSchema(
        model=model,
        known=True,
        takes_content_parts=_allows_type(content, "array"),
        takes_image_parts="image_url" in _text(content),
        takes_image_field=image is not None,
        image_field_bytes=image is None or _allows_type(image, "array"),
        supports_tools=tools is not None,
        flat_tools=any("name" in _properties(t) for t in _variants(tools)),
        openai_tools=any("function" in _properties(t) for t in _variants(tools)),
        supports_tool_choice="tool_choice" in props,
        supports_response_format=response_format is not None,
        openai_response_format=_wrapped_json_schema(response_format),
        supports_lora="lora" in props,
        reasoning_efforts=_enum(effort),
        supports_reasoning_effort=effort is not None,
        supports_thinking_toggle="chat_template_kwargs" in props,
        supports_streaming="stream" in props,
        openai_output='"choices"' in _text(payload.get("output")),
    )


def _variants(schema: object, depth: int = 0) -> Iterator[Mapping[str, Any]]:
    """The schema itself and every oneOf/anyOf/allOf branch below it."""
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return
    yield schema
    for key in _VARIANT_KEYS:
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                yield from _variants(branch, depth + 1)


def _properties(schema: object) -> dict[str, Any]:
    """The union of the properties of every variant (Prompt, Messages, Responses…)."""
    props: dict[str, Any] = {}
    for variant in _variants(schema):
        found = variant.get("properties")
        if isinstance(found, Mapping):
            for name, value in found.items():
                props.setdefault(str(name), value if value is not None else {})
    return props


def _items(schema: object) -> Mapping[str, Any] | None:
    """The item schema of an array property (``{}`` when the array has none)."""
    if not isinstance(schema, Mapping):
        return None
    for variant in _variants(schema):
        items = variant.get("items")
        if isinstance(items, Mapping):
            return items
    return {}


def _content_schema(messages: object) -> Mapping[str, Any] | None:
    items = _items(messages)
    content = _properties(items).get("content") if items else None
    return content if isinstance(content, Mapping) else None


def _allows_type(schema: object, name: str) -> bool:
    for variant in _variants(schema):
        kind = variant.get("type")
        if kind == name or (isinstance(kind, list) and name in kind):
            return True
    return False


def _enum(schema: object) -> tuple[str | None, ...]:
    values: list[str | None] = []
    for variant in _variants(schema):
        enum = variant.get("enum")
        if isinstance(enum, list):
            values.extend(v for v in enum if (v is None or isinstance(v, str)) and v not in values)
    if values and None not in values and _allows_type(schema, "null"):
        values.append(None)
    return tuple(values)


def _wrapped_json_schema(response_format: object) -> bool:
    """Whether ``json_schema`` is described as an object with ``schema``/``name`` inside."""
    inner = _properties(response_format).get("json_schema")
    return bool({"schema", "name"} & set(_properties(inner)))


def _text(schema: object) -> str:
    try:
        return json.dumps(schema, default=str)
    except (TypeError, ValueError):
        return ""

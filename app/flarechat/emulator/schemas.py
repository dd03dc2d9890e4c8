"""Compact JSON schemas of model inputs and outputs, served by /ai/models/schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flarechat.emulator.config import DEFAULT_MAX_TOKENS

__all__ = ["CHAT_SCHEMA", "EMBEDDING_SCHEMA", "Capabilities", "chat_schema"]

_MAX_CONTENT = 131_072
_MAX_SEED = 9_999_999_999
_BYTE_MAX = 255

_TEXTS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
EMBEDDING_SCHEMA: dict[str, Any] = {
    "input": {"type": "object", "properties": {"text": _TEXTS}, "required": ["text"]},
    "output": {
        "type": "object",
        "properties": {"shape": {"type": "array"}, "data": {"type": "array"}},
    },
}


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a chat model's schema admits (read from its catalogue properties)."""

    content_arrays: bool = False
    vision: bool = False
    native_image: bool = False
    tools: bool = False
    json_mode: bool = False
    lora: bool = False
    reasoning_effort: dict[str, Any] | None = None
    thinking: bool = False
    openai_output: bool = False


_STRING_CONTENT = {"type": "string", "maxLength": _MAX_CONTENT}
_TEXT_PART = {
    "type": "object",
    "properties": {"type": {"type": "string", "enum": ["text"]}, "text": {"type": "string"}},
    "required": ["type", "text"],
}
_IMAGE_PART = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["image_url"]},
        "image_url": {
            "type": "object",
            "properties": {"url": {"type": "string", "description": "a data: URL (base64)"}},
            "required": ["url"],
        },
    },
    "required": ["type", "image_url"],
}
_COMMON = {
    "stream": {"type": "boolean", "default": False},
    "max_tokens": {"type": "integer", "default": DEFAULT_MAX_TOKENS},
    "temperature": {"type": "number", "default": 0.6, "minimum": 0, "maximum": 5},
    "top_p": {"type": "number", "minimum": 0.001, "maximum": 1},
    "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
    "seed": {"type": "integer", "minimum": 1, "maximum": _MAX_SEED},
}
_PARAMETERS = {"type": "object", "properties": {"type": {"type": "string"}}}
_TOOLS = {
    "type": "array",
    "items": {
        "oneOf": [
            {
                "title": "Flat",
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "parameters": _PARAMETERS,
                },
                "required": ["name", "description", "parameters"],
            },
            {
                "title": "OpenAI",
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["function"]},
                    "function": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "description": {"type": "string"},
                            "parameters": _PARAMETERS,
                        },
                        "required": ["name"],
                    },
                },
                "required": ["type", "function"],
            },
        ]
    },
}
_TOOL_CHOICE = {
    "oneOf": [
        {"type": "string", "enum": ["none", "auto", "required"]},
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["function"]},
                "function": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "required": ["type", "function"],
        },
    ]
}
_RESPONSE_FORMAT = {
    "title": "JSON Mode",
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["json_object", "json_schema"]},
        "json_schema": {
            "description": "a bare JSON Schema, or the OpenAI {name, schema, strict} wrapper"
        },
    },
}
_IMAGE = {
    "oneOf": [
        {
            "type": "array",
            "description": "An array of integers that represent the image data constrained to "
            "8-bit unsigned integer values",
            "items": {"type": "number", "minimum": 0, "maximum": _BYTE_MAX},
        },
        {"type": "string", "format": "binary", "description": "The image, base64-encoded."},
    ]
}
_CHAT_TEMPLATE_KWARGS = {
    "type": "object",
    "properties": {
        "enable_thinking": {"type": "boolean", "default": True},
        "clear_thinking": {"type": "boolean", "default": False},
    },
}


def _content(caps: Capabilities) -> dict[str, Any]:
    if not caps.content_arrays:
        return _STRING_CONTENT
    parts = [_TEXT_PART, _IMAGE_PART] if caps.vision else [_TEXT_PART]
    return {"oneOf": [_STRING_CONTENT, {"type": "array", "items": {"oneOf": parts}}]}


def _messages(caps: Capabilities) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"]},
        "content": _content(caps),
    }
    if caps.tools:
        properties["tool_call_id"] = {"type": "string"}
        properties["tool_calls"] = {"type": "array"}
    items = {"type": "object", "properties": properties, "required": ["role", "content"]}
    return {"type": "array", "items": items}


def _reasoning_effort(effort: dict[str, Any]) -> dict[str, Any]:
    values: list[Any] = list(effort.get("supported_efforts") or ["low", "medium", "high"])
    types = ["string"] if effort.get("mandatory") is True else ["string", "null"]
    if "null" in types:
        values.append(None)
    return {"type": types, "enum": values, "default": effort.get("default_effort")}


def _extras(caps: Capabilities) -> dict[str, Any]:
    extras: dict[str, Any] = {}
    if caps.json_mode:
        extras["response_format"] = _RESPONSE_FORMAT
    if caps.tools:
        extras |= {"tools": _TOOLS, "tool_choice": _TOOL_CHOICE}
    if caps.lora:
        extras["lora"] = {"type": "string", "description": "name or id of a fine-tune"}
    if caps.native_image:
        extras["image"] = _IMAGE
    if caps.reasoning_effort is not None:
        extras["reasoning_effort"] = _reasoning_effort(caps.reasoning_effort)
    if caps.thinking:
        extras["chat_template_kwargs"] = _CHAT_TEMPLATE_KWARGS
    return extras


_LEGACY_OUTPUT = {
    "type": "object",
    "contentType": "application/json",
    "properties": {
        "response": {"oneOf": [{"type": "string"}, {"type": "object"}]},
        "tool_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            },
        },
        "usage": {"type": "object"},
    },
}
_OPENAI_OUTPUT = {
    "type": "object",
    "contentType": "application/json",
    "properties": {
        "id": {"type": "string"},
        "object": {"type": "string"},
        "choices": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "message": {
                        "type": "object",
                        "properties": {
                            "role": {"type": "string"},
                            "content": {"type": ["string", "null"]},
                            "tool_calls": {"type": "array"},
                        },
                    },
                    "finish_reason": {
                        "type": "string",
                        "enum": ["stop", "length", "tool_calls", "content_filter"],
                    },
                },
            },
        },
        "usage": {"type": "object"},
    },
}


def chat_schema(caps: Capabilities) -> dict[str, Any]:
    """Prompt and Messages input variants (with what the model supports) and its output."""
    extras = _extras(caps)
    prompt_extras = {k: v for k, v in extras.items() if k not in ("tools", "tool_choice")}
    return {
        "input": {
            "type": "object",
            "oneOf": [
                {
                    "title": "Prompt",
                    "properties": {
                        "prompt": {"type": "string", "minLength": 1},
                        **_COMMON,
                        **prompt_extras,
                    },
                    "required": ["prompt"],
                },
                {
                    "title": "Messages",
                    "properties": {"messages": _messages(caps), **_COMMON, **extras},
                    "required": ["messages"],
                },
            ],
        },
        "output": _OPENAI_OUTPUT if caps.openai_output else _LEGACY_OUTPUT,
    }


#: The plain legacy text model's schema (strings only, nothing optional).
CHAT_SCHEMA: dict[str, Any] = chat_schema(Capabilities())

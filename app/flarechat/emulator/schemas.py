"""Compact JSON schemas of model inputs and outputs, served by /ai/models/schema."""

from __future__ import annotations

from typing import Any

from flarechat.emulator.config import DEFAULT_MAX_TOKENS

__all__ = ["CHAT_SCHEMA", "EMBEDDING_SCHEMA"]

_MAX_CONTENT = 131_072
_MAX_SEED = 9_999_999_999

_TEXTS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
EMBEDDING_SCHEMA: dict[str, Any] = {
    "input": {"type": "object", "properties": {"text": _TEXTS}, "required": ["text"]},
    "output": {
        "type": "object",
        "properties": {"shape": {"type": "array"}, "data": {"type": "array"}},
    },
}

_MESSAGES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "role": {"type": "string"},
            "content": {"type": "string", "maxLength": _MAX_CONTENT},
        },
        "required": ["role", "content"],
    },
}
_COMMON = {
    "stream": {"type": "boolean", "default": False},
    "max_tokens": {"type": "integer", "default": DEFAULT_MAX_TOKENS},
    "temperature": {"type": "number", "default": 0.6, "minimum": 0, "maximum": 5},
    "top_p": {"type": "number", "minimum": 0.001, "maximum": 1},
    "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
    "seed": {"type": "integer", "minimum": 1, "maximum": _MAX_SEED},
}
CHAT_SCHEMA: dict[str, Any] = {
    "input": {
        "type": "object",
        "oneOf": [
            {
                "title": "Prompt",
                "properties": {"prompt": {"type": "string", "minLength": 1}, **_COMMON},
                "required": ["prompt"],
            },
            {
                "title": "Messages",
                "properties": {"messages": _MESSAGES, **_COMMON},
                "required": ["messages"],
            },
        ],
    },
    "output": {"type": "object", "contentType": "application/json"},
}

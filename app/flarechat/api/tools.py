"""Function calling: the tools a request offers, the choice it forces, the calls a reply makes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from flarechat import safejson

__all__ = ["LEGACY_TOOL_CALL_ID_WIDTH", "ToolCall", "ToolChoice", "ToolSpec", "legacy_call_id"]

#: Legacy Workers AI tool calls carry no id; their schema asks for nine alphanumerics and
#: suggests "000000001" as the fallback, so synthesised ids are the call's number, zero-padded.
LEGACY_TOOL_CALL_ID_WIDTH = 9

ToolChoiceMode = Literal["auto", "none", "required", "function"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One function the model may call: ``parameters`` is a JSON Schema object."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})

    def flat(self) -> dict[str, Any]:
        """The legacy native form: ``{name, description, parameters}``."""
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        out["parameters"] = dict(self.parameters)
        return out

    def wrapped(self) -> dict[str, Any]:
        """The OpenAI form: ``{type: "function", function: {name, description, parameters}}``."""
        return {"type": "function", "function": self.flat()}


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """``auto`` / ``none`` / ``required``, or one named function (``ToolChoice.named("f")``)."""

    mode: ToolChoiceMode = "auto"
    name: str | None = None

    @classmethod
    def named(cls, name: str) -> ToolChoice:
        return cls(mode="function", name=name)

    def to_json(self) -> str | dict[str, Any]:
        if self.mode == "function":
            if not self.name:
                raise ValueError("A forced tool choice needs the function's name.")
            return {"type": "function", "function": {"name": self.name}}
        return self.mode


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One complete call the model made.

    ``arguments_json`` is always the text as received (or serialised, when the legacy shape
    sent an object); ``arguments`` is that text parsed, or ``None`` when it is not a JSON object.
    """

    id: str
    name: str
    arguments_json: str
    arguments: dict[str, Any] | None = None

    @classmethod
    def of(cls, *, id: str, name: str, arguments: object) -> ToolCall:
        """Build from either shape: an object (legacy) or a JSON string (OpenAI)."""
        if isinstance(arguments, str):
            text = arguments
        elif arguments is None:
            text = ""
        else:
            text = json.dumps(arguments, ensure_ascii=False)
        return cls(id=id, name=name, arguments_json=text, arguments=_parse_object(text))

    def legacy(self) -> dict[str, Any]:
        """As the legacy native shape writes it: ``{name, arguments: <object>}``."""
        return {"name": self.name, "arguments": self.arguments or {}}

    def openai(self) -> dict[str, Any]:
        """As the OpenAI shape writes it: arguments as a JSON string."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_json or "{}"},
        }


def legacy_call_id(position: int) -> str:
    """The id given to the ``position``-th (0-based) id-less call of a reply."""
    return str(position + 1).zfill(LEGACY_TOOL_CALL_ID_WIDTH)


def _parse_object(text: str) -> dict[str, Any] | None:
    if not text.strip():
        return {}
    try:
        value = safejson.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None

"""Function calling: read tools and tool_choice, decide a call, shape it, read tool results."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from flarechat.emulator import jsonmode
from flarechat.emulator.wire import ErrorSpec

__all__ = [
    "Tool",
    "ToolCall",
    "argument_fragments",
    "choose",
    "legacy_call",
    "openai_call",
    "read_tools",
    "tool_result",
]

_CHOICES = ("none", "auto", "required")
#: Streamed arguments arrive in fragments of about this many characters.
_FRAGMENT_CHARS = 8


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model makes; ``arguments`` is the decoded JSON value."""

    id: str
    name: str
    arguments: Any

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


def _bad(detail: str) -> ErrorSpec:
    return ErrorSpec(400, 5006, "Bad input: Error: " + detail)


def _tool(entry: Any) -> Tool | None:
    """Flat ``{name, description, parameters}`` or OpenAI ``{type:"function", function:{…}}``."""
    if not isinstance(entry, dict):
        return None
    spec = entry.get("function") if entry.get("type") == "function" else entry
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        return None
    parameters = spec.get("parameters")
    description = spec.get("description")
    return Tool(
        spec["name"],
        description if isinstance(description, str) else "",
        parameters if isinstance(parameters, dict) else {"type": "object"},
    )


def read_tools(body: dict[str, Any]) -> tuple[list[Tool], ErrorSpec | None]:
    raw = body.get("tools")
    if raw is None:
        return [], None
    if not isinstance(raw, list):
        return [], _bad(f"Type mismatch of '/tools', '{type(raw).__name__}' not in 'array'")
    tools: list[Tool] = []
    for index, entry in enumerate(raw):
        tool = _tool(entry)
        if tool is None:
            return [], _bad(f"required properties at '/tools/{index}' are 'name'")
        tools.append(tool)
    return tools, None


def _forced(choice: Any, tools: list[Tool]) -> tuple[Tool | None, ErrorSpec | None]:
    """The tool a ``required`` or named ``tool_choice`` forces (None: the model decides)."""
    if choice == "required":
        return (tools[0], None) if tools else (None, _bad("tool_choice 'required' needs tools"))
    function = choice.get("function") if isinstance(choice, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str):
        return None, _bad("Value of '/tool_choice' not in enum 'none', 'auto', 'required'")
    named = next((t for t in tools if t.name == name), None)
    if named is None:
        return None, _bad(f"tool_choice names '{name}', which is not in '/tools'")
    return named, None


def _mentioned(tools: list[Tool], question: str) -> Tool | None:
    for tool in tools:
        if re.search(rf"(?<![\w-]){re.escape(tool.name)}(?![\w-])", question, re.IGNORECASE):
            return tool
    return None


def choose(
    body: dict[str, Any], tools: list[Tool], *, question: str
) -> tuple[Tool | None, ErrorSpec | None]:
    """Which tool to call: forced by ``tool_choice``, else one the question names by name.

    Right after a tool result (last message ``role: tool``) an ``auto`` model answers in text.
    """
    choice = body.get("tool_choice", "auto")
    if isinstance(choice, str) and choice not in _CHOICES:
        return None, _bad(f"Value '{choice}' of '/tool_choice' not in enum")
    if not tools or choice == "none":
        return None, None
    if choice != "auto":
        return _forced(choice, tools)
    if tool_result(body) is not None:
        return None, None
    return _mentioned(tools, question), None


def make_call(tool: Tool) -> ToolCall:
    """A call whose arguments are a minimal valid instance of the tool's parameters."""
    try:
        arguments = jsonmode.instance(tool.parameters)
    except jsonmode.Unsatisfiable:
        arguments = {}
    return ToolCall(f"chatcmpl-tool-{uuid.uuid4().hex}", tool.name, arguments)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return json.dumps(content, ensure_ascii=False)


def tool_result(body: dict[str, Any]) -> str | None:
    """The text of the last message when it is a tool result (``role: tool``)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    return _text(last.get("content")) if last.get("role") == "tool" else None


def legacy_call(call: ToolCall) -> dict[str, Any]:
    """§3a: ``{name, arguments}`` with ``arguments`` an object and no id."""
    return {"name": call.name, "arguments": call.arguments}


def openai_call(call: ToolCall) -> dict[str, Any]:
    """§3b: ``{id, type:"function", function:{name, arguments:<JSON string>}}``."""
    function = {"name": call.name, "arguments": call.arguments_json}
    return {"id": call.id, "type": "function", "function": function}


def argument_fragments(call: ToolCall) -> list[str]:
    """The arguments JSON in several pieces, as streamed deltas carry it."""
    text = call.arguments_json
    return [text[i : i + _FRAGMENT_CHARS] for i in range(0, len(text), _FRAGMENT_CHARS)] or [""]

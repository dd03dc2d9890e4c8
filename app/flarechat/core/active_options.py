"""What a conversation asks of the model beyond plain chat, as the chips near the composer
show it: a system prompt, JSON mode, tools, a LoRA adapter, a reasoning effort or thinking
switch. Each is one :class:`ActiveOption`; :func:`without` turns one off, leaving the rest
(and the sampling parameters) as they were. Plain values, no Qt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flarechat.core.connect import (
    PARAM_ENABLE_THINKING,
    PARAM_LORA,
    PARAM_REASONING_EFFORT,
    PARAM_RESPONSE_FORMAT,
    PARAM_TOOL_CHOICE,
    PARAM_TOOLS,
)

__all__ = [
    "OPTION_JSON",
    "OPTION_LORA",
    "OPTION_REASONING",
    "OPTION_SYSTEM_PROMPT",
    "OPTION_TOOLS",
    "ActiveOption",
    "active_options",
    "without",
]

OPTION_SYSTEM_PROMPT = "system_prompt"
OPTION_JSON = "json"
OPTION_TOOLS = "tools"
OPTION_LORA = "lora"
OPTION_REASONING = "reasoning"

#: The parameters each option is made of (turning it off drops them all).
_KEYS: Mapping[str, tuple[str, ...]] = {
    OPTION_SYSTEM_PROMPT: (),
    OPTION_JSON: (PARAM_RESPONSE_FORMAT,),
    OPTION_TOOLS: (PARAM_TOOLS, PARAM_TOOL_CHOICE),
    OPTION_LORA: (PARAM_LORA,),
    OPTION_REASONING: (PARAM_REASONING_EFFORT, PARAM_ENABLE_THINKING),
}
#: A chip's label names a system prompt by this many characters of it.
PROMPT_LABEL_CHARS = 24
#: …and its tools by the first two names (then "+3").
TOOLS_NAMED = 2
ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"


@dataclass(frozen=True, slots=True)
class ActiveOption:
    """One option that is on: ``key`` (OPTION_*), a short ``label`` ("Tools: get_weather")
    and the ``detail`` a tooltip gives (the whole system prompt, the schema's name…)."""

    key: str
    label: str
    detail: str


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + ELLIPSIS


def _json(value: object) -> ActiveOption | None:
    if not isinstance(value, Mapping) or not value.get("type"):
        return None
    if value.get("type") == "json_schema":
        name = str(value.get("name") or "schema")
        return ActiveOption(OPTION_JSON, f"JSON mode: {name}", f"Replies follow the schema {name}.")
    return ActiveOption(OPTION_JSON, "JSON mode", "Replies are a JSON object.")


def _tools(value: object) -> ActiveOption | None:
    if not isinstance(value, list) or not value:
        return None
    names = [str(t.get("name")) for t in value if isinstance(t, Mapping) and t.get("name")]
    more = len(names) - TOOLS_NAMED
    shown = ", ".join(names[:TOOLS_NAMED]) + (f" +{more}" if more > 0 else "")
    return ActiveOption(
        OPTION_TOOLS, f"Tools: {shown or len(value)}", "The model may call: " + ", ".join(names)
    )


def _reasoning(effort: object, thinking: object) -> ActiveOption | None:
    if isinstance(effort, str) and effort:
        return ActiveOption(
            OPTION_REASONING, f"Reasoning: {effort}", f"Reasoning effort {effort} is sent."
        )
    if isinstance(thinking, bool):
        state = "on" if thinking else "off"
        return ActiveOption(
            OPTION_REASONING, f"Thinking: {state}", f"Thinking is switched {state} for the model."
        )
    return None


def active_options(system_prompt: str, params: Mapping[str, Any]) -> list[ActiveOption]:
    """The options on, in a fixed order: system prompt, JSON, tools, LoRA, reasoning."""
    found: list[ActiveOption | None] = [
        ActiveOption(
            OPTION_SYSTEM_PROMPT,
            f"System prompt: {_clip(system_prompt, PROMPT_LABEL_CHARS)}",
            system_prompt.strip(),
        )
        if system_prompt.strip()
        else None,
        _json(params.get(PARAM_RESPONSE_FORMAT)),
        _tools(params.get(PARAM_TOOLS)),
    ]
    lora = params.get(PARAM_LORA)
    if isinstance(lora, str) and lora.strip():
        found.append(ActiveOption(OPTION_LORA, f"LoRA: {lora.strip()}", "The LoRA adapter sent."))
    found.append(_reasoning(params.get(PARAM_REASONING_EFFORT), params.get(PARAM_ENABLE_THINKING)))
    return [option for option in found if option is not None]


def without(key: str, system_prompt: str, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The system prompt and parameters with option ``key`` turned off (the rest kept)."""
    if key == OPTION_SYSTEM_PROMPT:
        return "", dict(params)
    dropped = set(_KEYS.get(key, ()))
    return system_prompt, {name: value for name, value in params.items() if name not in dropped}

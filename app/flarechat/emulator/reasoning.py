"""Reasoning controls: reasoning_effort and chat_template_kwargs.enable_thinking (§2, §10)."""

from __future__ import annotations

from typing import Any

from flarechat.emulator.catalogue import CatalogueModel, Profile
from flarechat.emulator.wire import ErrorSpec

__all__ = ["EFFORTS", "effort"]

EFFORTS = ("low", "medium", "high")
_DEFAULT = "medium"


def _bad(detail: str) -> ErrorSpec:
    return ErrorSpec(400, 5006, "Bad input: Error: " + detail)


def _enable_thinking(body: dict[str, Any]) -> bool | None:
    kwargs = body.get("chat_template_kwargs")
    value = kwargs.get("enable_thinking") if isinstance(kwargs, dict) else None
    return value if isinstance(value, bool) else None


def _with_property(
    prop: dict[str, Any], body: dict[str, Any]
) -> tuple[str | None, ErrorSpec | None]:
    mandatory = prop.get("mandatory") is True
    default = str(prop.get("default_effort") or _DEFAULT)
    supported = prop.get("supported_efforts") or list(EFFORTS)
    chosen: str | None = default if mandatory or prop.get("default_enabled", True) else None
    if "reasoning_effort" in body:
        value = body["reasoning_effort"]
        if value is None and mandatory:
            return None, _bad("Type mismatch of '/reasoning_effort', 'null' not in 'string'")
        if value is not None and value not in supported:
            return None, _bad(f"Value '{value}' of '/reasoning_effort' not in enum")
        chosen = value
    thinking = _enable_thinking(body)
    if thinking is False and not mandatory:
        return None, None
    if thinking is True and chosen is None:
        chosen = default
    return chosen, None


def effort(model: CatalogueModel, body: dict[str, Any]) -> tuple[str | None, ErrorSpec | None]:
    """How hard the model thinks: an effort, None for no reasoning, or the 5006 to answer."""
    if not model.reasoning:
        return None, None
    prop = model.prop("reasoning_effort")
    if isinstance(prop, dict):
        return _with_property(prop, body)
    if model.profile is Profile.THINK or _enable_thinking(body) is not False:
        return _DEFAULT, None  # <think> models always think; others honour enable_thinking
    return None, None

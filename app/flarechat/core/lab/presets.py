"""Presets: named bundles of model, sampling parameters, system prompt, reasoning effort and
AI Gateway options — taken from a conversation, applied to one, and checked when read back."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from flarechat.api.config import EFFORT_OFF, REASONING_EFFORTS
from flarechat.core.conversation import Conversation
from flarechat.settings import gateway_options as gw
from flarechat.settings import validate
from flarechat.settings.schema import Settings

__all__ = [
    "GATEWAY_FIELDS",
    "PARAM_REASONING_EFFORT",
    "Preset",
    "PresetTarget",
    "apply_preset",
    "checked_effort",
    "checked_gateway",
    "checked_params",
    "conversation_params",
    "gateway_of",
    "preset_from_conversation",
    "with_gateway",
]

#: Where a conversation keeps its reasoning effort among its parameters.
PARAM_REASONING_EFFORT = "reasoning_effort"
EFFORTS = (*REASONING_EFFORTS, EFFORT_OFF)
_MAX_TOKENS, _TEMPERATURE = "max_tokens", "temperature"

#: The profile's AI Gateway options a preset carries (Settings field names). They apply to the
#: whole profile — Flarechat keeps gateway options per profile, not per conversation.
_GATEWAY_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "skip_cache": lambda v: None if isinstance(v, bool) else "must be true or false",
    "cache_ttl": validate.validate_cache_ttl,
    "gateway_cache_key": gw.validate_cache_key,
    "gateway_metadata": gw.validate_metadata,
    "gateway_collect_log": lambda v: None if v is None or isinstance(v, bool) else "not a choice",
    "gateway_request_timeout_ms": gw.validate_request_timeout_ms,
    "gateway_max_attempts": gw.validate_max_attempts,
    "gateway_retry_delay_ms": gw.validate_retry_delay_ms,
    "gateway_backoff": gw.validate_backoff,
}
GATEWAY_FIELDS = tuple(_GATEWAY_CHECKS)


@dataclass(frozen=True, slots=True)
class Preset:
    """A named bundle. ``params`` are a conversation's sampling parameters (only those set);
    ``gateway`` holds GATEWAY_FIELDS values, or None to leave the profile's options alone;
    ``auto_name``: named after its model (and renamed with it) until the user names it."""

    id: str
    name: str
    model: str
    params: Mapping[str, Any] = field(default_factory=dict)
    system_prompt: str = ""
    reasoning_effort: str | None = None
    gateway: Mapping[str, Any] | None = None
    auto_name: bool = False


class PresetTarget(Protocol):
    """What a preset is applied to: a ``ChatSession`` (or the controller in front of it)."""

    def set_model(self, model: str) -> None: ...
    def set_options(self, system_prompt: str, params: dict[str, Any]) -> None: ...


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _param_problem(name: str, value: object) -> str | None:
    if name == _MAX_TOKENS:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return validate.validate_max_tokens(value) if ok else "must be a whole number"  # type: ignore[arg-type]
    if name == _TEMPERATURE:
        return validate.validate_temperature(value) if _number(value) else "must be a number"  # type: ignore[arg-type]
    if name in validate.SAMPLING_LIMITS:
        return validate.validate_sampling(name, value) if _number(value) else "must be a number"  # type: ignore[arg-type]
    return "is not a sampling parameter"


def checked_params(params: Mapping[str, Any], problems: list[str]) -> dict[str, Any]:
    """The valid sampling parameters of ``params``; each one dropped is noted in ``problems``."""
    kept: dict[str, Any] = {}
    for name, value in params.items():
        if name == PARAM_REASONING_EFFORT:
            continue
        problem = _param_problem(str(name), value)
        if problem is None:
            kept[str(name)] = value
        else:
            problems.append(f"Parameter {name!r} {problem}; it was left out.")
    return kept


def checked_gateway(gateway: Mapping[str, Any], problems: list[str]) -> dict[str, Any]:
    """The valid GATEWAY_FIELDS values of ``gateway``; dropped ones are noted."""
    kept: dict[str, Any] = {}
    for name, value in gateway.items():
        check = _GATEWAY_CHECKS.get(str(name))
        problem = "is not a gateway option" if check is None else _gateway_problem(check, value)
        if problem is None:
            kept[str(name)] = dict(value) if isinstance(value, Mapping) else value
        else:
            problems.append(f"Gateway option {name!r} {problem}; it was left out.")
    return kept


def _gateway_problem(check: Callable[[Any], str | None], value: object) -> str | None:
    try:
        return check(value)
    except (TypeError, ValueError, AttributeError):
        return "has the wrong type"


def checked_effort(value: object) -> str | None:
    return value if isinstance(value, str) and value in EFFORTS else None


def gateway_of(settings: Settings) -> dict[str, Any]:
    """The profile's gateway options, as a preset stores them."""
    values = {name: getattr(settings, name) for name in GATEWAY_FIELDS}
    values["gateway_metadata"] = dict(settings.gateway_metadata)
    return values


def with_gateway(settings: Settings, gateway: Mapping[str, Any]) -> Settings:
    """``settings`` with a preset's gateway options in place (others untouched)."""
    return dataclasses.replace(settings, **checked_gateway(gateway, []))


def preset_from_conversation(
    conversation: Conversation,
    *,
    preset_id: str,
    name: str,
    model: str,
    gateway: Mapping[str, Any] | None = None,
) -> Preset:
    """The conversation's settings as a preset (``model``: the one it uses now)."""
    params = conversation.params
    return Preset(
        id=preset_id,
        name=name,
        model=conversation.model or model,
        params=checked_params(params, []),
        system_prompt=conversation.system_prompt,
        reasoning_effort=checked_effort(params.get(PARAM_REASONING_EFFORT)),
        gateway=dict(gateway) if gateway is not None else None,
    )


def conversation_params(preset: Preset) -> dict[str, Any]:
    """The parameters a conversation keeps for this preset (reasoning effort included)."""
    params = dict(preset.params)
    if preset.reasoning_effort is not None:
        params[PARAM_REASONING_EFFORT] = preset.reasoning_effort
    return params


def apply_preset(target: PresetTarget, preset: Preset) -> None:
    """Use the preset's model, system prompt and parameters in one conversation.

    The gateway options are the profile's: the caller applies them with ``with_gateway``.
    """
    target.set_model(preset.model)
    target.set_options(preset.system_prompt, conversation_params(preset))

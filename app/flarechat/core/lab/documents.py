"""The lab library as JSON-ready plain data and back, tolerant of odd content: an item that
cannot be read is left out and said so, the rest is kept. Shared by the profile file and
the export."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarechat.core.lab.kinds import PRESETS, PROMPTS, TEMPLATES
from flarechat.core.lab.library import LabLibrary, Shelf
from flarechat.core.lab.migrations import AUTO_NAME
from flarechat.core.lab.presets import Preset, checked_effort, checked_gateway, checked_params
from flarechat.core.lab.prompt_library import SavedPrompt
from flarechat.core.lab.templates import Template
from flarechat.core.store._codec import scrub

__all__ = [
    "library_from_doc",
    "library_to_doc",
    "preset_doc",
    "preset_from_doc",
    "prompt_doc",
    "prompt_from_doc",
    "template_doc",
    "template_from_doc",
]

DEFAULT = "default_preset"


class _Unreadable(ValueError):
    """An item lacks a field it needs (the message names it)."""


def _text(doc: Mapping[str, Any], name: str, *, required: bool = True) -> str:
    value = doc.get(name, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise _Unreadable(f"it has no {name}")
    return value


def _flag(doc: Mapping[str, Any], name: str) -> bool:
    return doc.get(name) is True  # anything but a JSON true: the user's name, kept as it is


def _mapping(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = doc.get(name) or {}
    if not isinstance(value, Mapping):
        raise _Unreadable(f"its {name} is not an object")
    return value


# -- items ---------------------------------------------------------------------------------


def preset_doc(preset: Preset) -> dict[str, Any]:
    """A preset as plain data; credential-shaped values are redacted on the way out."""
    return {
        "id": preset.id,
        "name": preset.name,
        "model": preset.model,
        "params": scrub(dict(preset.params)),
        "system_prompt": preset.system_prompt,
        "reasoning_effort": preset.reasoning_effort,
        "gateway": scrub(dict(preset.gateway)) if preset.gateway is not None else None,
        AUTO_NAME: preset.auto_name,
    }


def preset_from_doc(doc: Mapping[str, Any], problems: list[str]) -> Preset:
    gateway = doc.get("gateway")
    if gateway is not None and not isinstance(gateway, Mapping):
        raise _Unreadable("its gateway options are not an object")
    return Preset(
        id=_text(doc, "id"),
        name=_text(doc, "name"),
        model=_text(doc, "model"),
        params=checked_params(_mapping(doc, "params"), problems),
        system_prompt=_text(doc, "system_prompt", required=False),
        reasoning_effort=checked_effort(doc.get("reasoning_effort")),
        gateway=checked_gateway(gateway, problems) if gateway is not None else None,
        auto_name=_flag(doc, AUTO_NAME),
    )


def prompt_doc(prompt: SavedPrompt) -> dict[str, Any]:
    return {"id": prompt.id, "name": prompt.name, "text": prompt.text, AUTO_NAME: prompt.auto_name}


def prompt_from_doc(doc: Mapping[str, Any], _problems: list[str]) -> SavedPrompt:
    return SavedPrompt(
        id=_text(doc, "id"),
        name=_text(doc, "name"),
        text=_text(doc, "text"),
        auto_name=_flag(doc, AUTO_NAME),
    )


def template_doc(template: Template) -> dict[str, Any]:
    return {
        "id": template.id,
        "name": template.name,
        "text": template.text,
        "values": dict(template.values),
        AUTO_NAME: template.auto_name,
    }


def template_from_doc(doc: Mapping[str, Any], _problems: list[str]) -> Template:
    values = {str(k): v for k, v in _mapping(doc, "values").items() if isinstance(v, str)}
    return Template(
        id=_text(doc, "id"),
        name=_text(doc, "name"),
        text=_text(doc, "text"),
        values=values,
        auto_name=_flag(doc, AUTO_NAME),
    )


# -- the library -------------------------------------------------------------------------

_READERS = {PRESETS: preset_from_doc, PROMPTS: prompt_from_doc, TEMPLATES: template_from_doc}
_LABELS = {PRESETS: "preset", PROMPTS: "saved prompt", TEMPLATES: "template"}


def read_items(doc: Mapping[str, Any], kind: str, problems: list[str]) -> list[Any]:
    """The readable items of one kind (``presets``, ``prompts``, ``templates``)."""
    raw = doc.get(kind) or []
    if not isinstance(raw, list):
        problems.append(f"The {_LABELS[kind]}s could not be read (not a list).")
        return []
    items = []
    for number, item in enumerate(raw, start=1):
        try:
            if not isinstance(item, Mapping):
                raise _Unreadable("it is not an object")
            items.append(_READERS[kind](item, problems))
        except _Unreadable as why:
            problems.append(f"{_LABELS[kind].capitalize()} {number} was left out: {why}.")
    return items


def library_to_doc(library: LabLibrary) -> dict[str, Any]:
    return {
        PRESETS: [preset_doc(p) for p in library.presets],
        PROMPTS: [prompt_doc(p) for p in library.prompts],
        TEMPLATES: [template_doc(t) for t in library.templates],
        DEFAULT: library.default_preset_id,
    }


def _shelf(items: list[Any], kind: str, problems: list[str]) -> Shelf[Any]:
    shelf: Shelf[Any] = Shelf()
    for item in items:
        if item.id in shelf:
            problems.append(f"A second {_LABELS[kind]} with id {item.id} was left out.")
        else:
            shelf.add(item)
    return shelf


def library_from_doc(doc: Mapping[str, Any], problems: list[str]) -> LabLibrary:
    shelves = {kind: _shelf(read_items(doc, kind, problems), kind, problems) for kind in _READERS}
    default = doc.get(DEFAULT)
    library = LabLibrary(shelves[PRESETS], shelves[PROMPTS], shelves[TEMPLATES])
    if isinstance(default, str) and default in library.presets:
        library.default_preset_id = default
    return library

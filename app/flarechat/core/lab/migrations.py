"""The lab document's migrations: one small function per version, applied in order when the
profile's lab file or an exported lab section is read.

Version 1 kept only a name per item; for a saved prompt or template saved without one it was
its first words, for a preset often its model. Version 2 says which names were made that way
(``auto_name``), so such a name follows the item when it is edited instead of describing what
it held once.

To add version N+1: bump ``LAB_DOC_VERSION`` and add ``N: step`` to ``MIGRATIONS``, taking the
raw object of version N to N+1 (tolerating missing keys and odd values: the items are checked
after migrating, by ``core.lab.documents``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flarechat.core.lab.prompt_library import prompt_title

__all__ = ["AUTO_NAME", "LAB_DOC_VERSION", "MIGRATIONS", "Migrated", "migrate"]

#: The newest version of the lab document this Flarechat reads and writes.
LAB_DOC_VERSION = 2
JSONObject = dict[str, Any]
AUTO_NAME = "auto_name"
#: The number ``unique_name`` adds to a name already taken: "Answer in haiku. (2)".
_NUMBERED = re.compile(r"(?P<base>.*) \(\d+\)")


@dataclass(frozen=True, slots=True)
class Migrated:
    """The document at LAB_DOC_VERSION, and whether a step changed it."""

    doc: JSONObject
    migrated: bool


def _named_after(name: object, base: str) -> bool:
    """Whether ``name`` is ``base`` as Flarechat made it (maybe numbered to be unique)."""
    if not isinstance(name, str) or not base:
        return False
    numbered = _NUMBERED.fullmatch(name)
    return name == base or (numbered is not None and numbered["base"] == base)


def _mark_items(items: object, base_of: Callable[[dict[str, Any]], str]) -> object:
    if not isinstance(items, list):
        return items  # not a list: read (and reported) as unreadable later
    marked: list[object] = []
    for item in items:
        if isinstance(item, dict):
            item = {**item, AUTO_NAME: _named_after(item.get("name"), base_of(item))}
        marked.append(item)
    return marked


def _text_title(item: dict[str, Any]) -> str:
    text = item.get("text")
    return prompt_title(text) if isinstance(text, str) and text.strip() else ""


def _model_name(item: dict[str, Any]) -> str:
    model = item.get("model")
    return model.rsplit("/", 1)[-1] if isinstance(model, str) else ""


def _v1_to_v2(doc: JSONObject) -> JSONObject:
    """Mark the names v1 made from an item's first words (prompts, templates) or its model
    (presets) as automatic; every other name is the user's."""
    doc = dict(doc)
    for kind, base_of in (("prompts", _text_title), ("templates", _text_title)):
        if kind in doc:
            doc[kind] = _mark_items(doc[kind], base_of)
    if "presets" in doc:
        doc["presets"] = _mark_items(doc["presets"], _model_name)
    return doc


MIGRATIONS: dict[int, Callable[[JSONObject], JSONObject]] = {1: _v1_to_v2}


def migrate(doc: JSONObject, version: int) -> Migrated:
    """``doc`` of ``version`` (1 or later) brought to LAB_DOC_VERSION; a newer one as it is."""
    start = version
    while version < LAB_DOC_VERSION:
        doc = MIGRATIONS[version](dict(doc))
        version += 1
    return Migrated(doc, migrated=version != start)

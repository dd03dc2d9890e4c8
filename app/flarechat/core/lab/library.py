"""The lab's library: presets, saved system prompts and templates on named shelves, and which
preset new chats start from. Plain data; ``core.lab.storage`` reads and writes it.

Every item has a name, unique on its shelf. One the user did not give (``auto_name``) is made
from the item itself (``derived_name``) and follows it when it is edited, so a name never
describes content the item no longer has; renaming makes it the user's."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from flarechat.core.conversation import new_id
from flarechat.core.lab.presets import Preset
from flarechat.core.lab.prompt_library import SavedPrompt, prompt_title
from flarechat.core.lab.templates import Template

__all__ = ["COPY_SUFFIX", "LabLibrary", "Named", "Shelf", "derived_name", "unique_name"]

COPY_SUFFIX = " (copy)"


class Named(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...


T = TypeVar("T", Preset, SavedPrompt, Template)


def derived_name(item: Preset | SavedPrompt | Template) -> str:
    """The name an item gets when the user gives none: a preset's model (its short name), a
    prompt's or template's first words."""
    if isinstance(item, Preset):
        return item.model.rsplit("/", 1)[-1]
    return prompt_title(item.text)


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``… — the first one not in ``taken``."""
    name = " ".join(name.split()) or "Untitled"
    if name not in taken:
        return name
    number = 2
    while f"{name} ({number})" in taken:
        number += 1
    return f"{name} ({number})"


class Shelf(Generic[T]):
    """Items with unique ids and unique names, in the order they were added."""

    def __init__(self, items: list[T] | None = None) -> None:
        self._items: dict[str, T] = {}
        for item in items or []:
            self.add(item)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def get(self, item_id: str) -> T | None:
        return self._items.get(item_id)

    def names(self) -> set[str]:
        return {item.name for item in self._items.values()}

    def add(self, item: T) -> T:
        """Store ``item`` (a name already used gets a number); a taken id raises ValueError."""
        if item.id in self._items:
            raise ValueError(f"duplicate id {item.id}")
        item = dataclasses.replace(item, name=unique_name(item.name, self.names()))
        self._items[item.id] = item
        return item

    def put(self, item: T) -> T:
        """Replace the item with the same id (its name kept unique among the others)."""
        others = {i.name for i in self._items.values() if i.id != item.id}
        item = dataclasses.replace(item, name=unique_name(item.name, others))
        self._items[item.id] = item
        return item

    def rename(self, item_id: str, name: str) -> T | None:
        """Give the item the user's name (it no longer follows the item's content)."""
        return self.edit(item_id, name=name)

    def edit(self, item_id: str, **changes: Any) -> T | None:
        """Change the item's fields (``text=``, ``model=``, ``name=``…); None if it is gone.

        A name given here is the user's; an item named automatically is named again from
        what it now holds.
        """
        item = self._items.get(item_id)
        if item is None:
            return None
        if "name" in changes:
            changes.setdefault("auto_name", False)
        edited = dataclasses.replace(item, **changes)
        if edited.auto_name:
            edited = dataclasses.replace(edited, name=derived_name(edited))
        return self.put(edited)

    def duplicate(self, item_id: str) -> T | None:
        """A copy under a new id, named "… (copy)" (an automatic name stays automatic)."""
        item = self._items.get(item_id)
        if item is None:
            return None
        return self.add(dataclasses.replace(item, id=new_id(), name=item.name + COPY_SUFFIX))

    def remove(self, item_id: str) -> T | None:
        return self._items.pop(item_id, None)


@dataclass(slots=True)
class LabLibrary:
    """Everything the lab keeps in the profile."""

    presets: Shelf[Preset] = field(default_factory=Shelf)
    prompts: Shelf[SavedPrompt] = field(default_factory=Shelf)
    templates: Shelf[Template] = field(default_factory=Shelf)
    #: the preset new chats start from (None: the app's defaults)
    default_preset_id: str | None = None

    def default_preset(self) -> Preset | None:
        if self.default_preset_id is None:
            return None
        return self.presets.get(self.default_preset_id)

    def remove_preset(self, preset_id: str) -> Preset | None:
        if preset_id == self.default_preset_id:
            self.default_preset_id = None
        return self.presets.remove(preset_id)

"""Tool calls in replies: both shapes, streamed or whole, folded into complete ToolCalls.

* Legacy (§3a): ``tool_calls: [{name, arguments: <object>}]`` — complete, no id.
* OpenAI (§3b): ``tool_calls: [{id, type, function: {name, arguments: <JSON string>}}]``.
* Streamed OpenAI deltas (§4a, §4b): ``{index, id, function: {name}}`` then
  ``{index, function: {arguments: "<fragment>"}}``; later fragments may repeat ``id``/``name``
  or send them as null; fragments of one index are concatenated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flarechat.api.events import ToolCallDelta
from flarechat.api.tools import ToolCall, legacy_call_id

__all__ = ["ToolCallCollector"]


@dataclass(slots=True)
class _Slot:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class ToolCallCollector:
    """Accumulates the tool calls of one reply; :meth:`calls` gives them complete, in order."""

    def __init__(self) -> None:
        self._slots: dict[int, _Slot] = {}

    def feed(self, entries: object) -> list[ToolCallDelta]:
        """One ``tool_calls`` list (a chunk's, or a whole reply's); returns the fragments."""
        if not isinstance(entries, list):
            return []
        deltas: list[ToolCallDelta] = []
        for position, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                delta = self._entry(entry, position)
                if delta is not None:
                    deltas.append(delta)
        return deltas

    def calls(self) -> tuple[ToolCall, ...]:
        out: list[ToolCall] = []
        for position, index in enumerate(sorted(self._slots)):
            slot = self._slots[index]
            if not slot.name and not slot.arguments:
                continue  # only a null finaliser arrived for this index
            call_id = slot.id or legacy_call_id(position)
            arguments = "".join(slot.arguments)
            out.append(ToolCall.of(id=call_id, name=slot.name or "", arguments=arguments))
        return tuple(out)

    def _entry(self, entry: Mapping[str, Any], position: int) -> ToolCallDelta | None:
        function = entry.get("function")
        if isinstance(function, Mapping):
            name, arguments = function.get("name"), function.get("arguments")
        else:  # the legacy shape: the call itself, complete
            name, arguments = entry.get("name"), entry.get("arguments")
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            # No index: a whole call (legacy, or a non-streamed reply) takes the next slot.
            index = len(self._slots) if not isinstance(function, Mapping) else position
        slot = self._slots.setdefault(index, _Slot())
        call_id = entry.get("id") if isinstance(entry.get("id"), str) else None
        new_id = call_id if call_id and not slot.id else None
        new_name = name if isinstance(name, str) and name and not slot.name else None
        slot.id = slot.id or new_id
        slot.name = slot.name or new_name
        fragment = _fragment(arguments)
        if fragment:
            slot.arguments.append(fragment)
        if not (new_id or new_name or fragment):
            return None
        return ToolCallDelta(index=index, id=new_id, name=new_name, arguments=fragment)


#: One encoder for every call: ``json.dumps`` with options builds a new one per call, which was
#: half the time a chunk of 10,000 whole calls took to read.
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def _fragment(arguments: object) -> str:
    if isinstance(arguments, str):
        return arguments
    if arguments is None:
        return ""
    return _ENCODE(arguments)

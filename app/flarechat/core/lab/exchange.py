"""The lab library in an export, and imported back by export.py's rules: never a duplicate
(the same item already here is skipped), never a silent overwrite (an id holding different
content comes in as a renamed copy, reported)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from flarechat.core.conversation import new_id
from flarechat.core.lab.documents import DEFAULT, read_items
from flarechat.core.lab.documents import library_to_doc as _library_to_doc
from flarechat.core.lab.kinds import PRESETS, PROMPTS, TEMPLATES
from flarechat.core.lab.library import LabLibrary, Shelf
from flarechat.core.lab.migrations import LAB_DOC_VERSION, migrate

__all__ = [
    "EXPORT_KEY",
    "IMPORTED_SUFFIX",
    "LAB_FORMAT",
    "LAB_VERSION",
    "LabExchange",
    "LabImportReport",
    "import_lab",
    "lab_to_json",
]

#: The key of the lab's section in ``core.export.export_all``'s document.
EXPORT_KEY = "lab"
LAB_FORMAT = "flarechat.lab"
LAB_VERSION = LAB_DOC_VERSION
IMPORTED_SUFFIX = " (imported)"
#: What must be equal for an imported item to be "the same" as the one here (not its name:
#: a renamed preset is still the same preset).
_CONTENT_IGNORES = frozenset({"name", "values", "auto_name"})


@dataclass(slots=True)
class LabImportReport:
    added: int = 0
    skipped_same: int = 0
    #: names given to items whose id was taken by different content (stored as copies)
    renamed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.renamed)


class LabExchange(Protocol):
    """What export and import ask of the lab (the window's LabController)."""

    def export_doc(self) -> dict[str, Any]: ...
    def import_doc(self, data: Any) -> LabImportReport: ...


def lab_to_json(library: LabLibrary) -> dict[str, Any]:
    """The library as the export's ``lab`` section (a versioned document of its own)."""
    return {"format": LAB_FORMAT, "version": LAB_VERSION, **_library_to_doc(library)}


def _content(item: Any) -> dict[str, Any]:
    values = dataclasses.asdict(item)
    return {k: v for k, v in values.items() if k not in _CONTENT_IGNORES}


def _take(shelf: Shelf[Any], item: Any, report: LabImportReport) -> str:
    """Add, skip or copy one item; the id it is kept under here."""
    existing = shelf.get(item.id)
    if existing is not None and _content(existing) == _content(item):
        report.skipped_same += 1
        return str(item.id)
    if existing is not None:
        copy = shelf.add(dataclasses.replace(item, id=new_id(), name=item.name + IMPORTED_SUFFIX))
        report.renamed.append(copy.name)
        return str(copy.id)
    shelf.add(item)
    report.added += 1
    return str(item.id)


def _section(data: Any) -> Mapping[str, Any] | None:
    """The lab document in ``data``: an export_all document's section, or one on its own."""
    if not isinstance(data, Mapping):
        return None
    section = data.get(EXPORT_KEY) if data.get("format") != LAB_FORMAT else data
    return section if isinstance(section, Mapping) else None


def import_lab(library: LabLibrary, data: Any) -> LabImportReport:
    """Merge the lab section of an export into ``library`` (changed in place).

    A document without one imports nothing. The default preset comes along only when this
    library has none yet (choosing new chats' start is the user's, here).
    """
    report = LabImportReport()
    section = _section(data)
    if section is None:
        return report
    version = section.get("version", LAB_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        report.problems.append("The presets and templates have no valid version; not imported.")
        return report
    if version > LAB_VERSION:
        report.problems.append("The presets and templates come from a newer Flarechat.")
        return report
    section = migrate(dict(section), version).doc
    shelves: dict[str, Shelf[Any]] = {
        PRESETS: library.presets,
        PROMPTS: library.prompts,
        TEMPLATES: library.templates,
    }
    presets: dict[str, str] = {}  # imported id -> id kept under here
    for kind, shelf in shelves.items():
        for item in read_items(section, kind, report.problems):
            kept_as = _take(shelf, item, report)
            if kind == PRESETS:
                presets[item.id] = kept_as
    default = section.get(DEFAULT)
    if library.default_preset_id is None and isinstance(default, str) and default in presets:
        library.default_preset_id = presets[default]
    return report

"""The lab's file in the profile: ``config/lab.json``, versioned, migrated on load and written
atomically — the same rules as the settings file, kept apart from it.

Why a file of its own rather than fields of ``Settings``: presets, prompts and templates are
the user's content, not preferences; they grow, are exported and imported as content, and a
damaged library must never cost the user their connection settings (nor the reverse).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flarechat.core.lab.documents import library_from_doc, library_to_doc
from flarechat.core.lab.library import LabLibrary
from flarechat.paths import config_dir
from flarechat.versioned_file import VersionedJsonFile

__all__ = ["LAB_FILENAME", "LAB_SCHEMA_VERSION", "MIGRATIONS", "LabStore"]

LAB_FILENAME = "lab.json"
LAB_SCHEMA_VERSION = 1
_JSON_INDENT = 2
JSONObject = dict[str, Any]
#: To add version N+1: bump LAB_SCHEMA_VERSION and add ``N: step`` taking the raw object of
#: version N to N+1 (tolerating missing keys; items are checked after migrating).
MIGRATIONS: dict[int, Callable[[JSONObject], JSONObject]] = {}


class LabStore:
    """Loads and saves the lab library; ``problems`` says what the last load repaired.

    The file has the settings file's guards (``versioned_file``): one from a newer Flarechat
    is read but never written (``read_only_reason``), a damaged one is moved aside, and
    ``save()`` before ``load()`` reads the file first for those guards. Both do blocking file
    I/O: call them off the GUI thread.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_dir() / LAB_FILENAME
        self._file = VersionedJsonFile(
            self.path,
            label="The lab file",
            version_key="schema_version",
            version=LAB_SCHEMA_VERSION,
        )
        self.problems: list[str] = []

    @property
    def read_only_reason(self) -> str | None:
        """Why the file is not written this session (None: it is)."""
        return self._file.read_only_reason

    def load(self) -> LabLibrary:
        """Read the file; never raises for missing, corrupt or odd content."""
        raw = self._file.read()
        self.problems = list(self._file.problems)
        if raw is None:
            return LabLibrary()
        version = raw.get("schema_version", LAB_SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            self.problems.append("The lab file has no valid schema_version; read as the current.")
            version = LAB_SCHEMA_VERSION
        while version < LAB_SCHEMA_VERSION:
            raw = MIGRATIONS[version](dict(raw))
            version += 1
        return library_from_doc(raw, self.problems)

    def save(self, library: LabLibrary) -> None:
        """Write atomically; FileNotWritable when the file is kept as it is (newer, or
        damaged in place), OSError when the disk refuses (the old file stays)."""
        self._file.write(library_to_doc(library), indent=_JSON_INDENT)

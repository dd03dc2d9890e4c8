"""The lab's file in the profile: ``config/lab.json``, versioned, migrated on load and written
atomically — the same rules as the settings file, kept apart from it.

Why a file of its own rather than fields of ``Settings``: presets, prompts and templates are
the user's content, not preferences; they grow, are exported and imported as content, and a
damaged library must never cost the user their connection settings (nor the reverse).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flarechat.core.lab.documents import library_from_doc, library_to_doc
from flarechat.core.lab.library import LabLibrary
from flarechat.paths import atomic_write_text, config_dir, free_sibling

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

    Both do blocking file I/O: call them off the GUI thread.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else config_dir() / LAB_FILENAME
        self.problems: list[str] = []

    def load(self) -> LabLibrary:
        """Read the file; never raises for missing, corrupt or odd content."""
        self.problems = []
        raw = self._read()
        if raw is None:
            return LabLibrary()
        version = raw.get("schema_version", LAB_SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            self.problems.append("The lab file has no valid schema_version; read as the current.")
            version = LAB_SCHEMA_VERSION
        if version > LAB_SCHEMA_VERSION:
            self.problems.append(
                "The lab file was written by a newer Flarechat; what this version does not "
                "know is ignored."
            )
        while version < LAB_SCHEMA_VERSION:
            raw = MIGRATIONS[version](dict(raw))
            version += 1
        return library_from_doc(raw, self.problems)

    def save(self, library: LabLibrary) -> None:
        """Write atomically; raises OSError when the disk refuses (the old file stays)."""
        doc = {"schema_version": LAB_SCHEMA_VERSION, **library_to_doc(library)}
        text = json.dumps(doc, indent=_JSON_INDENT, ensure_ascii=False, allow_nan=False)
        atomic_write_text(self.path, text + "\n")

    def _read(self) -> JSONObject | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            self._set_aside(f"could not be read ({type(error).__name__})")
            return None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            self._set_aside("is not valid JSON")
            return None
        if not isinstance(data, dict):
            self._set_aside("does not hold a library")
            return None
        return data

    def _set_aside(self, reason: str) -> None:
        target = free_sibling(self.path, "corrupt")
        try:
            os.replace(self.path, target)
        except OSError:
            self.problems.append(f"The lab file {self.path} {reason}; it is not used.")
            return
        self.problems.append(f"The lab file {reason}; it was moved to {target.name}.")

"""The lab's file in the profile: ``config/lab.json``, versioned, migrated on load and written
atomically — the same rules as the settings file, kept apart from it.

Why a file of its own rather than fields of ``Settings``: presets, prompts and templates are
the user's content, not preferences; they grow, are exported and imported as content, and a
damaged library must never cost the user their connection settings (nor the reverse).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from flarechat.core.lab.documents import library_from_doc, library_to_doc
from flarechat.core.lab.library import LabLibrary
from flarechat.core.lab.migrations import LAB_DOC_VERSION, MIGRATIONS, migrate
from flarechat.paths import config_dir, free_sibling
from flarechat.versioned_file import VersionedJsonFile

__all__ = ["LAB_FILENAME", "LAB_SCHEMA_VERSION", "MIGRATIONS", "LabStore"]

LAB_FILENAME = "lab.json"
#: The file's format is the lab document's (``core.lab.migrations`` says how versions differ).
LAB_SCHEMA_VERSION = LAB_DOC_VERSION
_JSON_INDENT = 2


class LabStore:
    """Loads and saves the lab library; ``problems`` says what the last load repaired,
    ``migrated`` whether it brought an older file up to date (and wrote it back).

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
        self.migrated = False

    @property
    def read_only_reason(self) -> str | None:
        """Why the file is not written this session (None: it is)."""
        return self._file.read_only_reason

    def load(self) -> LabLibrary:
        """Read the file; never raises for missing, corrupt or odd content."""
        raw = self._file.read()
        self.problems = list(self._file.problems)
        self.migrated = False
        if raw is None:
            return LabLibrary()
        version = raw.get("schema_version", LAB_SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            self.problems.append("The lab file has no valid schema_version; read as the current.")
            version = LAB_SCHEMA_VERSION
        result = migrate(raw, version)
        library = library_from_doc(result.doc, self.problems)
        if result.migrated:
            self._save_migrated(library, version)
        return library

    def _save_migrated(self, library: LabLibrary, version: int) -> None:
        """Write an upgraded file back at once (the next load reads it as it is), the old one
        kept beside it as ``lab.json.v<N>-<stamp>``: an older Flarechat, or an item this one
        could not read, still finds it there."""
        try:
            shutil.copyfile(self.path, free_sibling(self.path, f"v{version}"))
            self.save(library)
        except OSError as error:  # FileNotWritable included: the old file stays, still read
            self.problems.append(
                f"The lab file was upgraded from version {version} but could not be saved "
                f"({error.strerror or error}); it is upgraded again next time."
            )
            return
        self.migrated = True

    def save(self, library: LabLibrary) -> None:
        """Write atomically; FileNotWritable when the file is kept as it is (newer, or
        damaged in place), OSError when the disk refuses (the old file stays)."""
        self._file.write(library_to_doc(library), indent=_JSON_INDENT)

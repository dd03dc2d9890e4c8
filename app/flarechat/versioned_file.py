"""One guarded, versioned JSON file of the profile (settings, the lab's library, the votes).

The guards every such file needs, in one place:

* a missing file is no problem (nothing read, writing makes it);
* a file that cannot be read, is not UTF-8, not JSON, nested too deeply or not an object is
  moved aside to ``<name>.corrupt-<UTC stamp>`` (kept, never overwritten); if it cannot be
  moved, the file is left alone and nothing is written over it this session;
* a file written by a newer Flarechat (its version above ours) is read as far as this version
  can, but never written: what the newer version knows would be lost;
* nothing is written before the file was read (or failed to read): a write asked for first
  reads the file for its guards, and one asked for while a read runs (on another thread)
  waits for it. (The caller must also not write what it holds before it has read the file:
  the lab's controller waits for its load and joins what was made meanwhile.)

Each problem is a plain sentence in ``problems`` for the caller to show the user. The calls do
blocking file I/O: call them off the GUI thread.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from flarechat import safejson
from flarechat.paths import atomic_write_text, free_sibling, read_regular_file

__all__ = ["FileNotWritable", "VersionedJsonFile", "parse_json"]

JSONObject = dict[str, Any]
#: The largest profile file read (a library of thousands of presets is a few MB).
MAX_FILE_BYTES = 64 * 1024 * 1024


class FileNotWritable(OSError):
    """The file is not written this session; ``str(error)`` says why in a sentence."""


def parse_json(text: str) -> object:
    """Parse untrusted JSON text: ValueError when it is not JSON, too deep or too long."""
    return safejson.loads(text, max_chars=MAX_FILE_BYTES)


class VersionedJsonFile:
    """``path``, whose object holds its format version under ``version_key``.

    ``label`` names the file in messages ("The lab file"), ``holds`` what its object is ("a
    settings object"), ``fallback`` what is used instead of a file set aside ("default
    settings are used"); ``version`` is the newest version this Flarechat writes.
    """

    def __init__(
        self,
        path: Path,
        *,
        label: str,
        version_key: str,
        version: int,
        holds: str = "an object",
        fallback: str = "",
    ) -> None:
        self.path = path
        self.label = label
        self.holds = holds
        self.fallback = fallback
        self.version_key = version_key
        self.version = version
        self.problems: list[str] = []
        #: why the file is not written this session (None: it may be)
        self.read_only_reason: str | None = None
        #: the version the file said it was (None: missing, unreadable or unstated)
        self.found_version: int | None = None
        self._read = False
        self._lock = threading.RLock()

    @property
    def was_read(self) -> bool:
        """Whether ``read()`` has finished (with or without a file)."""
        return self._read

    def read(self) -> JSONObject | None:
        """The file's object, or None when there is none to use; never raises for content."""
        with self._lock:
            return self._read_locked()

    def _read_locked(self) -> JSONObject | None:
        self.problems = []
        self.read_only_reason = None
        self.found_version = None
        try:
            data = self._load()
        finally:
            self._read = True
        if data is None:
            return None
        version = data.get(self.version_key)
        if isinstance(version, int) and not isinstance(version, bool):
            self.found_version = version
            if version > self.version:
                self.read_only_reason = f"it was written by a newer Flarechat (version {version})"
                self.problems.append(
                    f"{self.label} was written by a newer Flarechat (version {version}). It "
                    "is used as far as this version can, but changes are not saved to it in "
                    "this session, so it stays as the newer version left it."
                )
        return data

    def write(self, data: JSONObject, *, indent: int = 2, sort_keys: bool = False) -> None:
        """Replace the file atomically with ``data`` (its version key set to ours).

        A file not read yet is read first (for its guards; its content is not used).
        FileNotWritable when the file must not be written (from a newer Flarechat, or damaged
        and kept in place); OSError when the disk refuses; ValueError when ``data`` is not
        JSON (nothing is written then).
        """
        with self._lock:
            if not self._read:
                self._read_locked()
            self._check_writable()
            self._write(data, indent=indent, sort_keys=sort_keys)

    def _write(self, data: JSONObject, *, indent: int, sort_keys: bool) -> None:
        doc = {self.version_key: self.version}
        doc.update((key, value) for key, value in data.items() if key != self.version_key)
        text = json.dumps(
            doc, indent=indent, sort_keys=sort_keys, ensure_ascii=False, allow_nan=False
        )
        atomic_write_text(self.path, text + "\n")

    def _check_writable(self) -> None:
        if self.read_only_reason is not None:
            raise FileNotWritable(f"{self.label} is not saved: {self.read_only_reason}.")

    def set_aside(self, reason: str) -> None:
        """Move the file to a free ``.corrupt-`` name (``reason``: "is not valid JSON")."""
        target = free_sibling(self.path, "corrupt")
        try:
            os.replace(self.path, target)
        except OSError as error:
            self.read_only_reason = f"it {reason} and could not be moved aside"
            then = f" {self.fallback[:1].upper()}{self.fallback[1:]}." if self.fallback else ""
            self.problems.append(
                f"{self.label} {self.path} {reason} and could not be moved aside "
                f"({error.strerror or type(error).__name__}); it is left as it is and "
                f"nothing is saved over it.{then}"
            )
            return
        then = f" and {self.fallback}" if self.fallback else ""
        self.problems.append(f"{self.label} {reason}; it was moved to {target.name}{then}.")

    def _load(self) -> JSONObject | None:
        try:
            raw = read_regular_file(self.path, limit=MAX_FILE_BYTES)
        except FileNotFoundError:
            return None
        except OSError as error:
            why = error.strerror or type(error).__name__
            self.set_aside(f"could not be read ({why})")
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.set_aside("is not UTF-8 text")
            return None
        try:
            data = parse_json(text)
        except safejson.JSONTooDeep:
            self.set_aside("is nested too deeply")
            return None
        except safejson.JSONTooLarge:
            self.set_aside("is too large to read")
            return None
        except safejson.JSONValueUnreadable:  # e.g. a number with more digits than Python converts
            self.set_aside("holds a value that cannot be read")
            return None
        except json.JSONDecodeError as error:
            self.set_aside(f"is not valid JSON (line {error.lineno}, column {error.colno})")
            return None
        if not isinstance(data, dict):
            self.set_aside(f"does not contain {self.holds}")
            return None
        return data

"""PySide6's ``__feature__`` import hook, told up front what it would find in our own modules.

Once PySide6 is imported, every import statement's result goes through shibokensupport's
``feature_imported``: a module it has not yet filed in ``__feature__.pyside_feature_dict``
gets its whole source read (``inspect.getsource``) just to see whether "PySide6" appears in
it, then is filed as 0 (uses PySide6, no feature selected) or -1 (ignored). For the window's
~140 modules that was ~140 file reads, tokenized into ``linecache``, before the first paint
(issue #12). No Flarechat module selects a feature (``from __feature__ import snake_case``;
tests/ui/shared/test_feature_hook.py keeps it so), so each of ours is filed as 0 before it is
imported, and the hook, finding it filed, skips the read. A module that does select a feature
still gets it: ``feature_import`` ORs the selection into the filed value when the module runs
its ``from __feature__ import ...`` line. The standard library's modules are filed as -1, the
hook's own answer for them (their sources never name PySide6): ~40 more reads, ~12 ms.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from types import ModuleType

__all__ = ["IGNORED", "NO_FEATURES", "file_package", "file_standard_library", "module_names"]

#: The hook's value for "uses PySide6 and selects no feature".
NO_FEATURES = 0
#: The hook's value for a module whose source does not name PySide6: "ignore this module".
IGNORED = -1
#: The hook's table of modules, and the function whose source read the table short-cuts: both
#: must exist for the table to mean what it means in PySide6 6.x (else nothing is filed).
_TABLE = "pyside_feature_dict"
_CHECK = "feature_imported"
_SOURCE_SUFFIX = ".py"
_PACKAGE_FILE = "__init__.py"


def _feature_table() -> dict[str, int] | None:
    """The hook's table, importing PySide6 (which installs the hook) if it is not yet loaded."""
    import PySide6  # noqa: F401  (installs builtins.__import__ = __feature_import__)

    feature = sys.modules.get("__feature__")
    table = getattr(feature, _TABLE, None)
    if not isinstance(table, dict) or not callable(getattr(feature, _CHECK, None)):
        return None
    return table


def module_names(package: ModuleType) -> Iterator[str]:
    """Every module and package name under ``package``, found from its files, importing
    nothing (a frozen bundle without sources yields only what is already imported)."""
    prefix = package.__name__
    yield prefix
    for root in getattr(package, "__path__", ()):
        yield from _walk(root, prefix)
    yield from (name for name in list(sys.modules) if name.startswith(prefix + "."))


def _walk(directory: str, prefix: str) -> Iterator[str]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir() and entry.name.isidentifier():
            if os.path.exists(os.path.join(entry.path, _PACKAGE_FILE)):
                yield f"{prefix}.{entry.name}"
                yield from _walk(entry.path, f"{prefix}.{entry.name}")
        elif entry.name.endswith(_SOURCE_SUFFIX) and entry.name != _PACKAGE_FILE:
            stem = entry.name.removesuffix(_SOURCE_SUFFIX)
            if stem.isidentifier():
                yield f"{prefix}.{stem}"


def file_package(package: ModuleType) -> int:
    """File every module of ``package`` with the hook as using no feature, unless the hook
    already filed it; how many were filed (0 when this PySide6 has no such hook)."""
    table = _feature_table()
    if table is None:
        return 0
    filed = 0
    for name in module_names(package):
        if name not in table:
            table[name] = NO_FEATURES
            filed += 1
    return filed


def file_standard_library() -> int:
    """File the standard library's modules (every top-level one, and each submodule already
    imported) as the hook would after reading them: ignored. How many were filed."""
    table = _feature_table()
    if table is None:
        return 0
    loaded = [name for name in list(sys.modules) if _top(name) in sys.stdlib_module_names]
    filed = 0
    for name in (*sorted(sys.stdlib_module_names), *loaded):
        if name not in table:
            table[name] = IGNORED
            filed += 1
    return filed


def _top(name: str) -> str:
    return name.partition(".")[0]

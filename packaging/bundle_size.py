"""How big a built onedir bundle is, and which files make it so (tests/packaging, bench/size.py).

Sizes are apparent sizes in bytes (``du -sb``) of regular files; symbolic links (PyInstaller's
top-level ``libX.so.N`` links into ``PySide6/Qt/lib``) count nothing, as in ``du``.

    python packaging/bundle_size.py packaging/out/dist/flarechat   # total and the ten largest
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BUNDLE_BUDGET_MIB", "DEB_BUDGET_MIB", "LARGEST", "MIB", "BundleSize", "measure"]

MIB = 1024 * 1024
#: Issue 12's budgets: the Linux onedir bundle and the .deb made from it.
BUNDLE_BUDGET_MIB = 110.0
DEB_BUDGET_MIB = 45.0
#: How many of the largest contributors a report names.
LARGEST = 10


@dataclass(frozen=True, slots=True)
class BundleSize:
    """A bundle's total bytes and its largest files (path relative to the bundle, bytes)."""

    total: int
    largest: tuple[tuple[str, int], ...]

    def report(self) -> str:
        """The total and the largest files, one per line, in MiB."""
        lines = [f"bundle {self.total / MIB:.1f} MiB; largest contributors:"]
        lines += [f"  {size / MIB:6.1f} MiB  {name}" for name, size in self.largest]
        return "\n".join(lines)

    def summary(self) -> str:
        """The largest files on one line: ``libicudata.so.73 15.7, ...`` (MiB)."""
        return ", ".join(f"{Path(name).name} {size / MIB:.1f}" for name, size in self.largest)


def measure(bundle: Path, *, count: int = LARGEST) -> BundleSize:
    """Total apparent size of ``bundle`` and its ``count`` largest regular files."""
    files = [
        (str(path.relative_to(bundle)), path.stat().st_size)
        for path in bundle.rglob("*")
        if path.is_file() and not path.is_symlink()
    ]
    largest = sorted(files, key=lambda item: (-item[1], item[0]))[:count]
    return BundleSize(total=sum(size for _name, size in files), largest=tuple(largest))


if __name__ == "__main__":
    print(measure(Path(sys.argv[1])).report())  # noqa: T201 - a command-line report

"""Size: the Linux onedir bundle and the .deb against their budgets, with the ten largest parts.

Measures what packaging/out/ holds (packaging/README.md): dist/flarechat and
flarechat_<version>_<arch>.deb. When they are absent the rows say "not run" (never a pass)
unless run.py --build is given, which runs PyInstaller and linux/build_deb.sh first (slow).
The ratio is against the budget; pass is value <= target.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from common import Result, not_run

__all__ = ["run"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "packaging" / "out"
BUNDLE = OUT / "dist" / "flarechat"
BUILD_ENV = "FLARECHAT_BENCH_BUILD"
MIB = 1024 * 1024
BUNDLE_TARGET_MIB, DEB_TARGET_MIB = 110.0, 45.0
LARGEST = 10
BUILD_TIMEOUT_S = 1800


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def largest(root: Path, count: int = LARGEST) -> list[tuple[str, int]]:
    """The ``count`` largest contributors: top-level entries of _internal (a package or
    library) and the files beside it, by bytes."""
    parts: list[tuple[str, int]] = []
    for base in (root, root / "_internal"):
        for entry in base.iterdir() if base.is_dir() else []:
            if entry.name == "_internal" and base == root:
                continue
            size = _tree_bytes(entry) if entry.is_dir() else entry.stat().st_size
            parts.append((str(entry.relative_to(root)), size))
    return sorted(parts, key=lambda part: -part[1])[:count]


def _build() -> None:
    spec = ROOT / "packaging" / "flarechat.spec"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--distpath",
            str(OUT / "dist"),
            "--workpath",
            str(OUT / "build"),
            str(spec),
        ],
        cwd=ROOT,
        check=True,
        timeout=BUILD_TIMEOUT_S,
    )
    subprocess.run(
        ["bash", str(ROOT / "packaging" / "linux" / "build_deb.sh")],
        cwd=ROOT,
        check=True,
        timeout=BUILD_TIMEOUT_S,
    )


def run(quick: bool) -> list[Result]:
    del quick  # nothing to repeat: sizes are exact
    if os.environ.get(BUILD_ENV) == "1":
        _build()
    rows: list[Result] = []
    if BUNDLE.is_dir():
        size = _tree_bytes(BUNDLE) / MIB
        top = ", ".join(f"{name} {part / MIB:.1f}" for name, part in largest(BUNDLE))
        rows.append(
            Result(
                "size.bundle",
                size,
                BUNDLE_TARGET_MIB,
                BUNDLE_TARGET_MIB,
                "MiB",
                check="value",
                note=f"largest (MiB): {top}",
            )
        )
    else:
        rows.append(
            not_run(
                "size.bundle",
                target=BUNDLE_TARGET_MIB,
                unit="MiB",
                reason=f"no bundle at {BUNDLE.relative_to(ROOT)}; run with --build",
            )
        )
    debs = sorted(OUT.glob("flarechat_*.deb"))
    if debs:
        size = debs[-1].stat().st_size / MIB
        rows.append(
            Result(
                "size.deb",
                size,
                DEB_TARGET_MIB,
                DEB_TARGET_MIB,
                "MiB",
                check="value",
                note=debs[-1].name,
            )
        )
    else:
        rows.append(
            not_run(
                "size.deb",
                target=DEB_TARGET_MIB,
                unit="MiB",
                reason=f"no .deb in {OUT.relative_to(ROOT)}; run with --build",
            )
        )
    return rows

"""Size: the Linux onedir bundle and the .deb against their budgets, with the ten largest parts.

Measures what packaging/out/ holds (packaging/README.md): dist/flarechat and
flarechat_<version>_<arch>.deb. When they are absent the rows say "not run" (never a pass)
unless run.py --build is given, which runs PyInstaller and linux/build_deb.sh first (slow).
The ratio is against the budget; pass is value <= target.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from common import Result, not_run

__all__ = ["run"]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "packaging" / "out"
BUNDLE = OUT / "dist" / "flarechat"
BUILD_ENV = "FLARECHAT_BENCH_BUILD"
BUILD_TIMEOUT_S = 1800


def _bundle_size() -> ModuleType:
    """packaging/bundle_size.py: the budgets and the measure tests/packaging uses too."""
    path = ROOT / "packaging" / "bundle_size.py"
    spec = importlib.util.spec_from_file_location("bundle_size", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


sizes = _bundle_size()
MIB: int = sizes.MIB
BUNDLE_TARGET_MIB: float = sizes.BUNDLE_BUDGET_MIB
DEB_TARGET_MIB: float = sizes.DEB_BUDGET_MIB


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
        ["bash", str(ROOT / "packaging" / "linux" / "build_deb.sh"), "--bundle", str(BUNDLE)],
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
        measured = sizes.measure(BUNDLE)
        rows.append(
            Result(
                "size.bundle",
                measured.total / MIB,
                BUNDLE_TARGET_MIB,
                BUNDLE_TARGET_MIB,
                "MiB",
                check="value",
                note=f"largest (MiB): {measured.summary()}",
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

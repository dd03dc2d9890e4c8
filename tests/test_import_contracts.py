"""The import contracts hold, and each one fails when broken (a violating import is added to
a copy of the package), so none of them passes vacuously."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "app" / "flarechat"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: contract name -> (module file, the import that must break it)
VIOLATIONS = {
    "Layers: main -> ui | cli -> core -> api": (
        "core/figures.py",
        "import flarechat.ui.control.presenting",
    ),
    "api and settings stand alone": ("settings/validate.py", "import flarechat.core.figures"),
    "api does not import settings": ("api/models.py", "import flarechat.settings.schema"),
    "Qt only in ui and main (the session and all of core included)": (
        "core/session/records.py",
        "import PySide6.QtCore",
    ),
    "Experiments are plain core: no Qt, no httpx, no ui, no cli": (
        "core/experiments/spec.py",
        "import flarechat.ui.control.presenting",
    ),
    "httpx only in api": ("core/session/gate.py", "import httpx"),
    "keyring only in settings.secrets": ("settings/store.py", "import keyring"),
    "Only main and cli start the emulator": ("ui/control/chat.py", "import flarechat.emulator"),
    "The emulator stands alone: it imports nothing else of the app": (
        "emulator/wire.py",
        "import flarechat.paths",
    ),
    "starlette and uvicorn only in the emulator": ("core/export.py", "import starlette"),
    "sqlite3 only in the store": ("core/session/saving.py", "import sqlite3"),
    "Controller modules import no widget module": (
        "ui/control/presenting.py",
        "import flarechat.ui.transcript.markdown",
    ),
}


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _lint(root: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(root / "app"))
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return result.stdout + result.stderr


def test_every_contract_has_a_violation_case() -> None:
    assert sorted(str(c["name"]) for c in _contracts()) == sorted(VIOLATIONS)


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_each_contract_fails_when_broken(name: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "app", tmp_path / "app", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    module, line = VIOLATIONS[name]
    target = tmp_path / "app" / "flarechat" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    broken = [row for row in _lint(tmp_path).splitlines() if "BROKEN" in row]
    assert [row for row in broken if row.startswith(name)], broken


def test_the_keyring_contract_lists_every_settings_module_but_secrets() -> None:
    contract = next(c for c in _contracts() if c["name"] == "keyring only in settings.secrets")
    sources = set(contract["source_modules"])
    modules = {
        f"flarechat.settings.{p.stem}"
        for p in (PACKAGE / "settings").glob("*.py")
        if p.stem not in ("__init__", "secrets")
    }
    assert modules <= sources


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_controller_modules_import_no_qt_widgets_or_gui() -> None:
    """import-linter cannot fence a subpackage of PySide6, so this test does."""
    for path in (PACKAGE / "ui" / "control").glob("*.py"):
        widgets = {
            n for n in _imports(path) if n.startswith(("PySide6.QtWidgets", "PySide6.QtGui"))
        }
        assert not widgets, f"{path.name} imports {sorted(widgets)}"


def test_the_session_leaves_pyside6_out_of_sys_modules() -> None:
    code = (
        "import sys, flarechat.core.session, flarechat.core.session.book; "
        "bad = sorted(m for m in sys.modules if m.startswith(('PySide6', 'qasync'))); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

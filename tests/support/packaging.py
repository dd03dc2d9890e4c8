"""The build scripts under packaging/ (plain scripts, not a package): where they live, and
loading one by its path so the packaging tests can call its functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["PACKAGING", "ROOT", "load_script"]

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"


def load_script(name: str, path: Path) -> ModuleType:
    """Import the script at ``path`` as module ``name`` (registered, so dataclasses and pickling
    inside it resolve their module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

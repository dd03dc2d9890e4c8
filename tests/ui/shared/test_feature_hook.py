"""PySide6's ``__feature__`` import hook does not read our modules' or the standard library's
sources (flarechat.ui.shared.feature_hook, issue #12), and a module that selects a feature still
gets it. Each case runs in a fresh interpreter: the hook and its table are process-wide."""

from __future__ import annotations

import json
import os
import re
import sys
import types
from pathlib import Path

import pytest

import flarechat
from flarechat.ui.shared import feature_hook
from support.fresh_python import run_fresh

APP_DIR = Path(flarechat.__file__).resolve().parent
#: A ``from __feature__ import ...`` statement (not a mention in a docstring).
SELECTS_A_FEATURE = re.compile(r"^\s*from __feature__ import", re.MULTILINE)

#: As ``flarechat.main`` does: the Qt-free modules, PySide6, optionally the filing, then the
#: window's modules; prints what the hook read (``linecache`` holds every file it read).
READS = """
import json, linecache, sys
from flarechat import main
main._import_before_qt()
import PySide6
import flarechat
from flarechat.ui.shared import feature_hook
if sys.argv[1] == "filed":
    feature_hook.file_package(flarechat)
    feature_hook.file_standard_library()
linecache.clearcache()
from flarechat.ui.app import run_gui
from flarechat.ui.window.main_window import MainWindow
print(json.dumps(sorted(linecache.cache)))
"""

SNAKE = """\
from __feature__ import snake_case
from PySide6.QtCore import QObject


def name_of(obj):
    return obj.object_name()


def sees_camel_case():
    return hasattr(QObject, "objectName")
"""

PLAIN = """\
from PySide6.QtCore import QObject


def name_of(obj):
    return obj.objectName()


def sees_camel_case():
    return hasattr(QObject, "objectName")
"""

#: Files package ``featpkg`` (as the app files flarechat), then imports a module of it that
#: selects snake_case and one that does not; prints what each sees.
FEATURES = """
import json, sys
sys.path.insert(0, sys.argv[1])
import PySide6
import featpkg  # (filed by the hook itself: imported after PySide6)
from flarechat.ui.shared import feature_hook
filed = feature_hook.file_package(featpkg)
from featpkg import plain, snake
from PySide6.QtCore import QObject
obj = QObject()
obj.setObjectName("probe")
print(json.dumps({
    "filed": filed,
    "snake": [snake.name_of(obj), snake.sees_camel_case()],
    "plain": [plain.name_of(obj), plain.sees_camel_case()],
}))
"""


def _run(script: str, *args: str) -> object:
    return json.loads(run_fresh(script, *args).splitlines()[-1])


def _ours_and_stdlib(files: object) -> tuple[list[str], list[str]]:
    assert isinstance(files, list)
    stdlib = os.path.dirname(os.__file__)
    ours = [name for name in files if name.startswith(str(APP_DIR))]
    standard = [name for name in files if name.startswith(stdlib) and "site-packages" not in name]
    return ours, standard


def test_filed_modules_are_not_read_by_the_hook() -> None:
    ours, standard = _ours_and_stdlib(_run(READS, "filed"))
    assert ours == []
    assert standard == []


def test_unfiled_the_hook_reads_them() -> None:
    """The control: without filing, the same imports make the hook read both kinds."""
    ours, standard = _ours_and_stdlib(_run(READS, "unfiled"))
    assert any(name.endswith("chat_pane.py") for name in ours)
    assert standard != []


def test_a_filed_module_that_selects_snake_case_still_gets_it(tmp_path: Path) -> None:
    package = tmp_path / "featpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "snake.py").write_text(SNAKE, encoding="utf-8")
    (package / "plain.py").write_text(PLAIN, encoding="utf-8")
    seen = _run(FEATURES, str(tmp_path))
    assert seen == {"filed": 2, "snake": ["probe", False], "plain": ["probe", True]}


def test_no_flarechat_module_selects_a_feature() -> None:
    """Filing our modules as "no feature" is only their true state while none selects one."""
    selecting = [
        str(path.relative_to(APP_DIR))
        for path in APP_DIR.rglob("*.py")
        if SELECTS_A_FEATURE.search(path.read_text(encoding="utf-8"))
    ]
    assert selecting == []


def test_module_names_come_from_the_package_files_without_importing_them() -> None:
    names = set(feature_hook.module_names(flarechat))
    assert {"flarechat", "flarechat.ui.window.main_window", "flarechat.core.session"} <= names
    assert "flarechat.emulator.server" in names or "flarechat.emulator" in names
    assert not any(".__pycache__" in name for name in names)


def test_without_the_hook_nothing_is_filed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PySide6 whose ``__feature__`` has no such table (a later version): left alone."""
    monkeypatch.setitem(sys.modules, "__feature__", types.ModuleType("__feature__"))
    assert feature_hook.file_package(flarechat) == 0
    assert feature_hook.file_standard_library() == 0

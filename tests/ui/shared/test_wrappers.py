"""Scroll areas' viewports reached by name, and PySide6's QWidget classes made after the first
paint rather than before it (flarechat.ui.shared.wrappers, issue #12)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QListView, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from flarechat.ui.shared.wrappers import viewport_of
from support.first_paint import run_probe
from support.fresh_python import run_fresh

#: In a fresh interpreter: whether QWizard's class exists after reaching a viewport by name,
#: then after ``load_widget_types``.
LOADING = """
import sys
from PySide6 import QtWidgets
from PySide6.QtWidgets import QApplication, QScrollArea
from flarechat.ui.shared.wrappers import load_widget_types, viewport_of
app = QApplication([])
viewport_of(QScrollArea())
print("QWizard" in vars(QtWidgets))
load_widget_types()
print("QWizard" in vars(QtWidgets))
"""


def test_the_viewport_by_name_is_the_scroll_areas_viewport(qtbot: QtBot) -> None:
    for area in (QScrollArea(), QListView()):
        qtbot.addWidget(area)
        found = viewport_of(area)
        assert found is area.viewport()


def test_a_viewport_set_by_the_app_is_found_too(qtbot: QtBot) -> None:
    area = QScrollArea()
    qtbot.addWidget(area)
    own = QWidget()
    area.setViewport(own)
    assert viewport_of(area) is own


def test_reaching_a_viewport_by_name_makes_no_widget_classes_until_asked() -> None:
    assert run_fresh(LOADING).split() == ["False", "True"]


#: ``python -m flarechat`` until it writes the bench's first-paint time (right after its first
#: paint, before anything it defers): then whether QWizard's class exists. No event filter: one
#: would be handed Qt's own widgets and make the classes itself.
AT_FIRST_PAINT = """
import json, os, sys
PAINT = os.environ["FLARECHAT_BENCH_PAINT_FILE"]

def at_paint(event, args):
    if event == "open" and args and args[0] == PAINT:
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            json.dump("QWizard" in vars(sys.modules["PySide6.QtWidgets"]), out)
        os._exit(0)

sys.addaudithook(at_paint)
from flarechat.main import main
sys.exit(main([]))
"""


def test_the_first_paint_makes_no_widget_classes_it_does_not_show(tmp_path: Path) -> None:
    env = {"FLARECHAT_BENCH_PAINT_FILE": str(tmp_path / "paint")}
    assert run_probe(tmp_path, AT_FIRST_PAINT, env=env) is False

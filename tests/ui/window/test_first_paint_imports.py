"""Start-up: the window's first paint does not wait for the network stack, the keychain,
Markdown, highlighting, the settings dialog or the lab's Compare and View as code; each comes
when it is used (issue #12).

Each test starts ``flarechat`` as ``python -m flarechat`` does (``flarechat.main.main``) in a
fresh interpreter, offscreen, on its own profile; an application-wide event filter records
``sys.modules`` at the main window's first paint, then closes the window (the app's ordered
shutdown runs and the process must exit 0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.first_paint import at_first_paint, run_probe

#: Loaded only once used: the HTTP client's stack, the keychain, Markdown, highlighting and the
#: settings dialogs.
NOT_AT_FIRST_PAINT = (
    "httpx",
    "httpcore",
    "httpx_sse",
    "truststore",
    # asyncio's TLS support: OpenSSL's libraries, given to asyncio with the HTTP client
    "ssl",
    "_ssl",
    "flarechat.api.client",
    "keyring",
    "markdown_it",
    "pygments",
    "flarechat.ui.settings.dialog",
    "flarechat.ui.settings.conversation_dialog",
    # the lab's parts the first paint does not show: Compare, the leaderboard, View as code
    "flarechat.ui.lab.compare_view",
    "flarechat.ui.lab.leaderboard_dialog",
    "flarechat.ui.lab.code_dialog",
    "flarechat.ui.lab.library_dialog",
    "flarechat.ui.lab.item_editors",
    "flarechat.core.lab.request_view",
    "flarechat.core.request_code",
    # the lab's items and file, read with the chat engine after the paint (LabController.start);
    # the composer's lab row needs only a template's variables (core.lab.variables)
    "flarechat.core.lab.library",
    "flarechat.core.lab.presets",
    "flarechat.core.lab.prompt_library",
    "flarechat.core.lab.templates",
    "flarechat.core.lab.documents",
    "flarechat.core.lab.exchange",
    "flarechat.core.lab.migrations",
    "flarechat.core.lab.storage",
    # dialogs and pop-ups the first frame does not show: their classes' enums cost start-up
    "flarechat.ui.window.window_dialogs",
    "flarechat.ui.models.popup",
    "flarechat.ui.capabilities.image_viewer",
    "flarechat.core.export",
    # a reply body's Markdown modules (and QTextDocument's enums): the first frame shows no reply
    "flarechat.ui.transcript.markdown_view",
    "flarechat.ui.transcript.markdown",
    # find marks (and QTextCharFormat's enums): the first frame marks no query
    "flarechat.ui.transcript.match_marks",
    # the chat engine, built on the loop turn after the paint (ChatController.start): the
    # session package's ~90 dataclasses, the turn and its stream events, and the controller's
    # parts that use them
    "flarechat.core.session",
    "flarechat.core.session.events",
    "flarechat.core.turn",
    "flarechat.api.events",
    "flarechat.ui.control.capabilities",
    "flarechat.ui.control.status_line",
    "flarechat.ui.control.viewing",
    # a request's tools and output schema: built with a request, not for the first frame
    "flarechat.api.tools",
    "flarechat.api.schema",
)


def _modules_at_first_paint(tmp_path: Path, *, env: dict[str, str]) -> set[str]:
    return set(run_probe(tmp_path, at_first_paint("sys.modules"), env=env))


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({}, id="fresh-profile"),
        # A complete account from the environment: the catalogue fetch must still wait.
        pytest.param(
            {
                "CLOUDFLARE_ACCOUNT_ID": "0123456789abcdef0123456789abcdef",
                "CLOUDFLARE_API_TOKEN": "first-paint-test-token-not-real",
                "FLARECHAT_API_BASE": "http://127.0.0.1:9/client/v4",
            },
            id="account-in-environment",
        ),
    ],
)
def test_first_paint_loads_no_network_keychain_markdown_dialog_or_chat_engine(
    tmp_path: Path, env: dict[str, str]
) -> None:
    loaded = _modules_at_first_paint(tmp_path, env=env)
    assert "flarechat.ui.window.main_window" in loaded  # the probe saw the real window
    early = [name for name in NOT_AT_FIRST_PAINT if name in loaded]
    assert early == []


#: Like ``at_first_paint``, but PySide6 is not imported before ``main`` (as in
#: ``python -m flarechat``): an audit hook installs the paint filter at the first import once
#: the QApplication exists, and ``sys.modules`` is written in import order.
PROBE_IN_ORDER = """
import json, sys
probe = None

def on_import(event, args):
    global probe
    if probe is not None or event != "import" or "PySide6.QtWidgets" not in sys.modules:
        return
    widgets, core = sys.modules["PySide6.QtWidgets"], sys.modules["PySide6.QtCore"]
    app = widgets.QApplication.instance()
    if app is None:
        return

    class AtFirstPaint(core.QObject):
        done = False

        def eventFilter(self, watched, event):
            if (
                not self.done
                and event.type() == core.QEvent.Type.Paint
                and isinstance(watched, widgets.QMainWindow)
            ):
                self.done = True
                with open(sys.argv[1], "w", encoding="utf-8") as out:
                    json.dump(list(sys.modules), out)
                core.QTimer.singleShot(0, watched.close)
            return False

    probe = AtFirstPaint()
    app.installEventFilter(probe)

sys.addaudithook(on_import)
from flarechat.main import main
sys.exit(main([]))
"""
#: Modules first imported after PySide6 by the first paint: the window's Qt modules (~70 today)
#: and little else. PySide6's ``__feature__`` import hook would read each one's source; ours and
#: the standard library's are filed with it first (ui/shared/feature_hook.py), the rest it reads.
MAX_MODULES_AFTER_PYSIDE = 90


def _modules_in_import_order(tmp_path: Path) -> list[str]:
    loaded: list[str] = run_probe(tmp_path, PROBE_IN_ORDER)
    return loaded


def test_qt_free_modules_are_imported_before_pyside(tmp_path: Path) -> None:
    """What is imported after PySide6 goes through its import hook; the window's Qt-free
    modules (core, settings, api, logging) and the third-party ones they bring come before it,
    so the hook sees ~60 modules fewer (and reads none of ours: ui/shared/feature_hook.py)."""
    order = _modules_in_import_order(tmp_path)
    assert "flarechat.ui.window.main_window" in order  # the probe saw the real window
    after_pyside = order[order.index("PySide6") :]
    qt_free_late = [
        name
        for name in after_pyside
        if name.startswith("flarechat.") and not name.startswith("flarechat.ui")
    ]
    assert qt_free_late == []
    assert "asyncio" not in after_pyside
    assert len(after_pyside) <= MAX_MODULES_AFTER_PYSIDE, after_pyside


#: Records, when the window's own first-paint hook runs (``ui.app._after_first_paint``, where
#: the bench takes its timestamp), whether Python has made the QStyle class yet, then the style
#: the window paints with; then closes the window. No application-wide event filter: every
#: event it saw would be wrapped for Python, the style's own among them (making QStyle).
PROBE_STYLE = """
import importlib.abc, importlib.util, json, sys

class PatchApp(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "flarechat.ui.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            painted = module._after_first_paint

            def record():
                widgets = sys.modules["PySide6.QtWidgets"]
                made = "QStyle" in vars(widgets)
                app = widgets.QApplication.instance()
                with open(sys.argv[1], "w", encoding="utf-8") as out:
                    json.dump([made, app.style().name()], out)
                painted()
                for window in app.topLevelWidgets():
                    if isinstance(window, widgets.QMainWindow):
                        module.QTimer.singleShot(0, window.close)

            module._after_first_paint = record

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, PatchApp())
from flarechat.main import main
sys.exit(main([]))
"""


def test_the_first_paint_is_fusion_without_python_touching_qstyle(tmp_path: Path) -> None:
    """The window paints with Fusion, chosen on the application's command line, and nothing
    before its first paint uses QStyle from Python: the class's first use makes its eleven
    enum classes (~8 ms of start-up)."""
    made_qstyle, style = run_probe(tmp_path, PROBE_STYLE)
    assert made_qstyle is False
    assert style.lower() == "fusion"


#: Like ``at_first_paint``, but records ``sys.modules`` a few loop turns after the first paint:
#: the window's post-paint steps (each a zero timer queued by then) have run.
PROBE_AFTER_PAINT = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

TURNS = 4

class AfterFirstPaint(QObject):
    done = False

    def eventFilter(self, watched, event):
        if not self.done and event.type() == QEvent.Type.Paint and isinstance(watched, QMainWindow):
            self.done = True
            QTimer.singleShot(0, lambda: self.later(watched, TURNS))
        return False

    def later(self, window, turns):
        if turns:
            QTimer.singleShot(0, lambda: self.later(window, turns - 1))
            return
        with open(sys.argv[1], "w", encoding="utf-8") as out:
            json.dump(sorted(sys.modules), out)
        window.close()

app = QApplication(sys.argv[:1])
probe = AfterFirstPaint()
app.installEventFilter(probe)
from flarechat.main import main
sys.exit(main([]))
"""


def test_reply_body_module_is_loaded_once_the_window_is_up(tmp_path: Path) -> None:
    """Kept off the first paint, the reply body's module is imported right after it, so the
    first reply shown does not pay for it either (its Markdown parser stays lazy)."""
    loaded = set(run_probe(tmp_path, PROBE_AFTER_PAINT))
    assert "flarechat.ui.transcript.markdown_view" in loaded
    assert "markdown_it" not in loaded


def test_the_chat_engine_is_built_once_the_window_is_up(tmp_path: Path) -> None:
    """Kept off the first paint, the chat engine is built on the loop turn after it."""
    loaded = set(run_probe(tmp_path, PROBE_AFTER_PAINT))
    assert {"flarechat.core.session", "flarechat.ui.control.status_line"} <= loaded


def test_the_lab_library_is_read_once_the_window_is_up(tmp_path: Path) -> None:
    """Kept off the first paint, the lab's presets, prompts and templates file is read with
    the chat engine right after it."""
    loaded = set(run_probe(tmp_path, PROBE_AFTER_PAINT))
    assert {"flarechat.core.lab.storage", "flarechat.core.lab.library"} <= loaded


#: PySide6 makes a class (with its enums) when its name is first looked up in its module: this
#: one the first frame does not need (a link's URL). (A message's text formats and cursor are
#: made with MessageView's parts: importing those where first used cost the wheel scroll far
#: more than the ~5 ms it saved the start, see the revert of 47ff257.)
NOT_MADE_AT_FIRST_PAINT = {
    "PySide6.QtCore": ("QUrl",),
}


def test_first_paint_makes_no_url_class(tmp_path: Path) -> None:
    made = (
        f"(name for module, names in {NOT_MADE_AT_FIRST_PAINT!r}.items() "
        "for name in names if name in vars(sys.modules[module]))"
    )
    early = run_probe(tmp_path, at_first_paint(made))
    assert early == []

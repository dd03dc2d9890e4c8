"""Start-up memory: the source text PySide6's import hook reads of every module imported after
it (into ``linecache``) is not kept once the window's modules are in (issue #12, idle RSS).

Runs ``flarechat`` as ``python -m flarechat`` does, in a fresh interpreter, offscreen, on its
own profile; at the main window's first paint it records which files ``linecache`` holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

START_TIMEOUT_S = 120
#: Imported before the window is built (flarechat.ui.app.WINDOW_MODULES), as their files end.
WINDOW_FILES = (
    "flarechat/core/catalogue.py",
    "flarechat/ui/control/chat.py",
    "flarechat/ui/control/workspace.py",
    "flarechat/ui/window/main_window.py",
    "flarechat/ui/chat/chat_pane.py",
)

PROBE = """
import json, linecache, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

class AtFirstPaint(QObject):
    done = False

    def eventFilter(self, watched, event):
        if not self.done and event.type() == QEvent.Type.Paint and isinstance(watched, QMainWindow):
            self.done = True
            with open(sys.argv[1], "w", encoding="utf-8") as out:
                json.dump(sorted(linecache.cache), out)
            QTimer.singleShot(0, watched.close)
        return False

app = QApplication(sys.argv[:1])
probe = AtFirstPaint()
app.installEventFilter(probe)
from flarechat.main import main
sys.exit(main([]))
"""


def test_the_window_modules_sources_are_not_kept_at_first_paint(tmp_path: Path) -> None:
    out = tmp_path / "sources.json"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "FLARECHAT_HOME": str(home),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cached = [Path(name).as_posix() for name in json.loads(out.read_text(encoding="utf-8"))]
    kept = [end for end in WINDOW_FILES if any(name.endswith(end) for name in cached)]
    assert kept == []

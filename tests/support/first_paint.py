"""Start ``flarechat`` as ``python -m flarechat`` does, in a fresh interpreter, offscreen, on its
own profile, with a probe script that writes what it records at the main window's first paint
to the JSON file named by its first argument (start-up tests, issue #12)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["KEYRING_BACKEND", "START_TIMEOUT_S", "at_first_paint", "run_probe"]

START_TIMEOUT_S = 120
#: Any keychain: a backend that answers at once without D-Bus ("no keychain").
KEYRING_BACKEND = "keyring.backends.fail.Keyring"

_AT_FIRST_PAINT = """
import json, linecache, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

class AtFirstPaint(QObject):
    done = False

    def eventFilter(self, watched, event):
        if not self.done and event.type() == QEvent.Type.Paint and isinstance(watched, QMainWindow):
            self.done = True
            with open(sys.argv[1], "w", encoding="utf-8") as out:
                json.dump(sorted(RECORDED), out)
            QTimer.singleShot(0, watched.close)
        return False

app = QApplication(sys.argv[:1])
probe = AtFirstPaint()
app.installEventFilter(probe)
from flarechat.main import main
sys.exit(main([]))
"""


def at_first_paint(recorded: str) -> str:
    """A probe that imports PySide6 first, then writes ``sorted(<recorded>)`` at first paint
    (``sys.modules``, ``linecache.cache``) and closes the window."""
    return _AT_FIRST_PAINT.replace("RECORDED", recorded)


def run_probe(tmp_path: Path, script: str, *, env: dict[str, str] | None = None) -> Any:
    """Run ``script`` on a fresh profile under ``tmp_path``; the JSON it wrote. The app's
    ordered shutdown runs after the probe closes the window, and the process must exit 0."""
    out = tmp_path / "probe.json"
    home = tmp_path / "home"
    home.mkdir()
    full_env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "FLARECHAT_HOME": str(home),
        "PYTHON_KEYRING_BACKEND": KEYRING_BACKEND,
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-c", script, str(out)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))

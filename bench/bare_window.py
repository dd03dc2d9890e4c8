"""The start-up baseline: a bare PySide6 QMainWindow, first paint reported like Flarechat's.

Same mechanism as flarechat.ui.app.FirstPaint: after the window's first paint pass the process
appends ``time.monotonic()`` to $FLARECHAT_BENCH_PAINT_FILE. Run by bench/start.py.
"""

from __future__ import annotations

import os
import sys
import time

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

#: Flarechat's default window size (ui/window/main_window.py DEFAULT_SIZE).
SIZE = (1180, 780)


class FirstPaint(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, report)
        return super().eventFilter(watched, event)


def report() -> None:
    with open(os.environ["FLARECHAT_BENCH_PAINT_FILE"], "a", encoding="utf-8") as out:
        out.write(f"{time.monotonic()}\n")


def main() -> int:
    app = QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setWindowTitle("bare")
    window.resize(*SIZE)
    probe = FirstPaint(window)
    window.installEventFilter(probe)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())

"""Start-up memory: the source text PySide6's import hook reads of every module imported after
it (into ``linecache``) is not kept once the window's modules are in (issue #12, idle RSS).

Runs ``flarechat`` as ``python -m flarechat`` does, in a fresh interpreter, offscreen, on its
own profile; at the main window's first paint it records which files ``linecache`` holds.
"""

from __future__ import annotations

from pathlib import Path

from support.first_paint import at_first_paint, run_probe

#: Imported before the window is built (flarechat.ui.app.WINDOW_MODULES), as their files end.
WINDOW_FILES = (
    "flarechat/core/catalogue.py",
    "flarechat/ui/control/chat.py",
    "flarechat/ui/control/workspace.py",
    "flarechat/ui/window/main_window.py",
    "flarechat/ui/chat/chat_pane.py",
)


def test_the_window_modules_sources_are_not_kept_at_first_paint(tmp_path: Path) -> None:
    sources: list[str] = run_probe(tmp_path, at_first_paint("linecache.cache"))
    cached = [Path(name).as_posix() for name in sources]
    kept = [end for end in WINDOW_FILES if any(name.endswith(end) for name in cached)]
    assert kept == []

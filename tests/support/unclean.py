"""An unclean close: a process that writes to the chat database and dies without closing it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["die_mid_session"]

_SCRIPT = """
import os, sys
from flarechat.core.store import ChatStore
store = ChatStore(sys.argv[1])
store.create_conversation()
os._exit(0)
"""


def die_mid_session(path: Path) -> None:
    """Open ``path`` in another process, add a conversation, exit without closing (as a kill).

    SQLite's -wal stays behind, so the next open_store runs the full integrity checks.
    """
    subprocess.run([sys.executable, "-c", _SCRIPT, str(path)], check=True)
    if not path.with_name(path.name + "-wal").exists():
        raise AssertionError("the dying session left no -wal: it did not die mid-session")

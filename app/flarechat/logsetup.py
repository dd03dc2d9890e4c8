"""The log file: rotating, in the profile's logs directory, with every known secret redacted."""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import threading
from pathlib import Path
from typing import cast

from flarechat.paths import PRIVATE_FILE_MODE, log_dir

__all__ = ["LOG_FILE", "RedactingFilter", "configure_file_logging", "register_secret"]

LOG_FILE = "flarechat.log"
#: Small enough to attach to a bug report, with a little history behind it.
MAX_BYTES = 1_000_000
BACKUP_COUNT = 3
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFilter(logging.Filter):
    """Scrubs registered secrets and anything token-shaped from a record before it is written.

    The api layer already redacts its own lines; this is the net under everything else
    (third-party libraries, tracebacks), so the log file can be shared safely.
    """

    def __init__(self) -> None:
        super().__init__()
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add_secret(self, value: str | None) -> None:
        if value:
            with self._lock:
                self._secrets.add(value)

    def filter(self, record: logging.LogRecord) -> bool:
        # Here, not at the top: a process that never logs loads no part of the api; the
        # package's names are lazy, so this loads the redaction module only, not httpx.
        from flarechat.api import redact

        with self._lock:
            secrets = tuple(self._secrets)
        record.msg = redact(record.getMessage(), secrets)
        record.args = None
        if record.exc_info:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(text, secrets)
            record.exc_info = None
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
        return True


_FILTER = RedactingFilter()


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Creates the log file (and each one after a rollover) readable by the user only."""

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        fd = os.open(self.baseFilename, flags, PRIVATE_FILE_MODE)
        return cast(
            io.TextIOWrapper, open(fd, self.mode, encoding=self.encoding, errors=self.errors)
        )


def register_secret(value: str | None) -> None:
    """Never write ``value`` to the log (call it for every token the app learns)."""
    _FILTER.add_secret(value)


def configure_file_logging(level: int = logging.INFO) -> Path:
    """Send the app's log records to ``logs/flarechat.log``; returns the file's path."""
    path = log_dir() / LOG_FILE
    handler = _PrivateRotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(_FILTER)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(min(root.level or level, level))
    return path

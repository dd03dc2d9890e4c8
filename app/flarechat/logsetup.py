"""The log file: rotating, in the profile's logs directory, with every known secret redacted."""

from __future__ import annotations

import contextlib
import io
import logging
import logging.handlers
import os
import sys
import threading
from pathlib import Path
from typing import Any, cast

from flarechat.paths import PRIVATE_FILE_MODE, log_dir, storage_refusal

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
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # the log call's own mistake: keep its words, go on
            message = f"{record.msg} {record.args!r}"
        record.msg = redact(message, secrets)
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
    """Creates the log file (and each one after a rollover) readable by the user only.

    A disk that refuses the log (full, over quota, gone read-only) is the handler's own
    business: logging's default prints a "--- Logging error ---" traceback to stderr for every
    record. Here the records are dropped and stderr gets one plain line until the file can be
    written again (the file is reopened for the next record).
    """

    def __init__(self, path: Path, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self._refused_by: str | None = None  # what the disk said, while it refuses the log

    def _open(self) -> io.TextIOWrapper:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        fd = os.open(self.baseFilename, flags, PRIVATE_FILE_MODE)
        return cast(
            io.TextIOWrapper, open(fd, self.mode, encoding=self.encoding, errors=self.errors)
        )

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)  # a failure reaches handleError, inside emit's own except
        if self._refused_by is not None and self.stream is not None:
            self._refused_by = None  # written again: a later refusal is said again

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        reason = storage_refusal(error) if isinstance(error, OSError) else None
        if reason is None:
            super().handleError(record)
            return
        self._drop_stream()
        if self._refused_by != reason:
            self._refused_by = reason
            sys.stderr.write(
                f"flarechat: the log file {self.baseFilename} can't be written: {reason}. "
                "Log messages are dropped until it can.\n"
            )

    def _drop_stream(self) -> None:
        """Let go of the file and what was buffered for it (it cannot be flushed)."""
        stream, self.stream = self.stream, None
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.close()
            with contextlib.suppress(OSError, ValueError):
                os.close(stream.fileno())


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

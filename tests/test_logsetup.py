"""The log file: it exists in the profile's logs dir and never contains a token."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat.logsetup import LOG_FILE, configure_file_logging, register_secret

TOKEN = "supersecret-token-value-1234567890"


@pytest.fixture
def log_file(isolated_profile: Path) -> Iterator[Path]:
    root = logging.getLogger()
    before = list(root.handlers)
    path = configure_file_logging()
    yield path
    for handler in root.handlers[:]:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()


def test_the_log_lives_in_the_profile(log_file: Path, isolated_profile: Path) -> None:
    assert log_file == isolated_profile / "logs" / LOG_FILE
    logging.getLogger("flarechat.test").warning("hello %s", "log")
    assert "hello log" in log_file.read_text(encoding="utf-8")


def test_registered_tokens_never_reach_the_file(log_file: Path) -> None:
    register_secret(TOKEN)
    log = logging.getLogger("flarechat.test")
    log.warning("sending with %s", TOKEN)
    log.warning("header Authorization: Bearer %s-unregistered", "abc123")
    try:
        raise RuntimeError(f"server echoed {TOKEN}")
    except RuntimeError:
        log.exception("request failed")
    text = log_file.read_text(encoding="utf-8")
    assert TOKEN not in text
    assert "abc123" not in text
    assert "[REDACTED]" in text
    assert "RuntimeError: server echoed [REDACTED]" in text  # the traceback is kept, scrubbed

"""The log file: it exists in the profile's logs dir, never contains a token, and a disk that
refuses it is said once in a plain line (never a traceback per record)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat.logsetup import LOG_FILE, configure_file_logging, register_secret
from support.full_disk import full_disk

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


def test_a_full_disk_drops_records_with_one_plain_line_not_a_traceback_per_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """On a real full disk (a tmpfs filled to ENOSPC, support.full_disk); the log resumes
    once there is room again."""
    root = logging.getLogger()
    before = list(root.handlers)
    log = logging.getLogger("flarechat.test")
    with full_disk(tmp_path / "disk") as disk:
        monkeypatch.setenv("FLARECHAT_HOME", str(disk / "profile"))
        path = configure_file_logging()  # the folder fits (an inode); no record does
        try:
            for index in range(5):
                log.warning("record %d on a full disk", index)
            err = capfd.readouterr().err
            assert "--- Logging error ---" not in err
            assert "Traceback" not in err
            assert err == (
                f"flarechat: the log file {path} can't be written: the disk is full. "
                "Log messages are dropped until it can.\n"
            )
            (disk / "filler").unlink()  # room again
            log.warning("after the disk was freed")
            for handler in root.handlers:
                handler.flush()
            assert path.read_text(encoding="utf-8").endswith("after the disk was freed\n")
            assert capfd.readouterr().err == ""
        finally:
            for handler in set(root.handlers) - set(before):
                root.removeHandler(handler)
                handler.close()


def test_a_log_call_with_a_wrong_format_neither_raises_nor_loses_its_words(
    log_file: Path,
) -> None:
    logging.getLogger("flarechat.test").warning("%d models", "nine")  # the caller's mistake
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert "%d models ('nine',)" in log_file.read_text(encoding="utf-8")

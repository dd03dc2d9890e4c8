"""`flarechat ask --idle-timeout / --deadline`: documented, validated, laid over the saved
settings, and against a slow emulator a cut-off reply exits 10 keeping its text."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from flarechat import cli
from flarechat.api.config import Connection, GatewayOptions, Secret
from flarechat.cli.args import EXIT_INTERRUPTED, EXIT_USAGE, apply_flags, build_parser
from flarechat.core.connect import Profile
from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.emulator.server import EmulatorServer
from flarechat.settings.schema import Settings
from support.cli import FAST, generation_requests, point_at

TOKEN = "cli-deadline-secret-3f08d2a6c1b9e4"
#: Upper bound for waits on the other process (never a timing assertion).
PATIENCE = 60.0
LONG_PROMPT = "Give me a long answer about streaming"
#: Slow enough that a long reply outlasts the shortest deadline (10 s) many times over.
DRIP_TPS = 2.0
#: After the first text, one token in 20 s: far past the shortest idle timeout (5 s).
STALL_TPS = 0.05


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    return point_at(emulator, monkeypatch, token=TOKEN)


def test_help_documents_both_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ask", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--idle-timeout SECONDS" in out
    assert "--deadline SECONDS" in out
    assert "no data comes for this long" in out
    assert "however steadily it streams" in out


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--idle-timeout", "1", "The idle timeout"),
        ("--idle-timeout", "soon", "The idle timeout"),
        ("--deadline", "5", "The deadline"),
        ("--deadline", "7200", "The deadline"),
    ],
)
def test_out_of_range_values_are_usage_errors(
    flag: str, value: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["ask", flag, value, "hi"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err


def _profile(settings: Settings) -> Profile:
    conn = Connection(account_id=DEMO_ACCOUNT_ID, token=Secret(TOKEN))
    return Profile(settings, conn, GatewayOptions(), reject_if_busy=False)


def test_the_saved_settings_apply_and_the_flags_win() -> None:
    profile = _profile(Settings(idle_timeout=30.0, overall_timeout=900.0))
    saved, _ = apply_flags(profile, build_parser().parse_args(["ask", "hi"]))
    assert (saved.idle_timeout, saved.overall_timeout) == (30.0, 900.0)
    args = build_parser().parse_args(["ask", "--idle-timeout", "8", "--deadline", "45", "hi"])
    flagged, _ = apply_flags(profile, args)
    assert (flagged.idle_timeout, flagged.overall_timeout) == (8.0, 45.0)


@pytest.mark.slow
def test_a_dripping_reply_meets_the_deadline_and_exits_10_keeping_its_text(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.state.set_tokens_per_second(DRIP_TPS)
    code = cli.main(["ask", "--deadline", "10", LONG_PROMPT], retry_policy=FAST)
    captured = capsys.readouterr()
    assert code == EXIT_INTERRUPTED, captured.err
    assert captured.out.strip(), "the text received before the deadline is on stdout"
    assert "still not finished after 10 s in all" in captured.err
    assert "Traceback" not in captured.err
    assert TOKEN not in captured.out + captured.err
    assert len(generation_requests(cli_env)) == 1  # a cut-off reply is not sent again


def _read_some(stream: object, *, patience: float = PATIENCE) -> bytes:
    """The first bytes the child prints, waiting at most ``patience`` for them."""
    fd = stream.fileno()  # type: ignore[attr-defined]
    ready, _, _ = select.select([fd], [], [], patience)
    assert ready, "the child printed nothing"
    return os.read(fd, 4096)


@pytest.mark.slow
def test_a_reply_that_stops_meets_the_idle_timeout_and_exits_10(
    cli_env: EmulatorServer, isolated_profile: Path
) -> None:
    env = dict(os.environ, NO_COLOR="1")
    child = subprocess.Popen(
        [sys.executable, "-m", "flarechat", "ask", "--idle-timeout", "5", LONG_PROMPT],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = _read_some(child.stdout)
        cli_env.state.set_tokens_per_second(STALL_TPS)  # the model stalls mid-reply
        rest, err = child.communicate(timeout=PATIENCE)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    text = (first + rest).decode()
    stderr = err.decode()
    assert child.returncode == EXIT_INTERRUPTED, stderr
    assert text.strip()
    assert "nothing came for 5 s" in stderr
    assert "Traceback" not in stderr
    assert TOKEN not in text + stderr

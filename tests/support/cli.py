"""The command line in-process against the emulator: the environment a user would set, one run
of ``cli.main`` with what it printed (never the token), and the generation requests it made."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from flarechat import cli
from flarechat.api.retry import RetryPolicy
from flarechat.emulator import DEMO_ACCOUNT_ID

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer
    from flarechat.emulator.state import RecordedRequest

__all__ = [
    "FAST",
    "Result",
    "generation_bodies",
    "generation_requests",
    "point_at",
    "run_cli",
    "spawn_interruptible",
]

#: Retries at once: the tests count attempts, they do not wait for them.
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)
#: The native route's path; gateway and OpenAI-compatible routes say so in the test.
NATIVE_RUN = "/ai/run/"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def point_at(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, *, token: str
) -> EmulatorServer:
    """Set the environment a user would set to point Flarechat at ``emulator``."""
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", DEMO_ACCOUNT_ID)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", token)
    monkeypatch.setenv("FLARECHAT_API_BASE", emulator.api_base)
    monkeypatch.setenv("FLARECHAT_GATEWAY_BASE", emulator.gateway_base)
    return emulator


def run_cli(
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    token: str,
    policy: RetryPolicy = FAST,
) -> Result:
    """``flarechat <argv>`` in-process; the token is never in what it printed."""
    code = cli.main(list(argv), retry_policy=policy)
    captured = capsys.readouterr()
    assert token not in captured.out
    assert token not in captured.err
    return Result(code, captured.out, captured.err)


def generation_requests(server: EmulatorServer) -> list[RecordedRequest]:
    """The native generation requests the emulator received, in order."""
    return [r for r in server.state.requests if NATIVE_RUN in r.path]


def generation_bodies(server: EmulatorServer) -> list[Any]:
    """The JSON bodies of :func:`generation_requests`."""
    return [r.json for r in generation_requests(server)]


def spawn_interruptible(argv: Sequence[str], *, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` (stdout and stderr piped) so that a SIGINT sent to it is delivered.

    A shell starts a background job (``cmd &`` without job control, ``setsid nohup``) with
    SIGINT ignored, and an ignored signal stays ignored across exec: a child of a suite run
    that way would never see the Ctrl+C a test sends. While it is started, this process's
    SIGINT is a Python handler instead, which exec resets to the default for the child.
    """
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    finally:
        if previous is signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)

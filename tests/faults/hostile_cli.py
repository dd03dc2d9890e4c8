"""``flarechat`` in-process against a hostile server, and afterwards no form of the token in
anything it printed, logged (at DEBUG) or wrote to the profile: the command line's side of
the four promises (:mod:`drive` is the window's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from leaks import assert_no_secret

from flarechat.api.retry import RetryPolicy
from flarechat.emulator import DEMO_ACCOUNT_ID
from support.cli import run_cli
from support.hostile import HostileServer

__all__ = ["NO_WAIT", "Run", "cli_against_hostile"]

#: Retries at once, and a Retry-After waited out for at most a second.
NO_WAIT = RetryPolicy(base_delay=0.0, max_delay=0.0, retry_after_cap=1.0)

#: ``run(capsys, server, *argv) -> (exit code, stdout, stderr)``
Run = Callable[..., tuple[int, str, str]]


@contextmanager
def cli_against_hostile(
    monkeypatch: pytest.MonkeyPatch,
    profile: Path,
    logged: pytest.LogCaptureFixture,
    *,
    token: str,
    policy: RetryPolicy = NO_WAIT,
) -> Iterator[Run]:
    """Yield ``run``: one ``flarechat`` command against ``server`` with ``token`` as the
    account's, no traceback on stderr; on leaving, the token is in none of the outputs, the
    log or the files under ``profile``."""
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", DEMO_ACCOUNT_ID)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", token)
    outputs: list[str] = []

    def run(
        capsys: pytest.CaptureFixture[str], server: HostileServer, *argv: str
    ) -> tuple[int, str, str]:
        monkeypatch.setenv("FLARECHAT_API_BASE", server.api_base)
        result = run_cli(capsys, *argv, token=token, policy=policy)
        outputs.extend((result.out, result.err))
        assert "Traceback" not in result.err
        return result.code, result.out, result.err

    yield run
    assert_no_secret(token, paths=[profile], texts=[*outputs, logged.text])

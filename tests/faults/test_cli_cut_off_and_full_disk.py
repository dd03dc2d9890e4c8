"""Issue 25 item 18 on the command line: `flarechat models` against a model list cut off
mid-body says so (the server did answer in HTTP), exits with the network code and prints no
half list; the token is nowhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from drive import assert_plain
from leaks import assert_no_secret

from flarechat.api.retry import RetryPolicy
from flarechat.cli import EXIT_CODES
from flarechat.emulator import DEMO_ACCOUNT_ID
from support.cut_off import CUT_OFF_WAYS, catalogue_body, cut_off
from support.hostile import HostileServer, answer

TOKEN = "tok-faults-cut-off-3e9a61b7d4"
FAST = RetryPolicy(base_delay=0.0, max_delay=0.0, retry_after_cap=1.0)
EXIT_NETWORK = 9

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(
    monkeypatch: pytest.MonkeyPatch, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> Iterator[Run]:
    """``run(capsys, server, *argv)``: ``flarechat`` in-process against ``server``; then no
    form of the token in what it printed, logged (at DEBUG) or wrote to the profile."""
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", DEMO_ACCOUNT_ID)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", TOKEN)
    from flarechat import cli as command

    outputs: list[str] = []

    def run(
        capsys: pytest.CaptureFixture[str], server: HostileServer, *argv: str
    ) -> tuple[int, str, str]:
        monkeypatch.setenv("FLARECHAT_API_BASE", server.api_base)
        code = command.main(list(argv), retry_policy=FAST)
        captured = capsys.readouterr()
        outputs.extend((captured.out, captured.err))
        assert "Traceback" not in captured.err
        return code, captured.out, captured.err

    yield run
    assert_no_secret(TOKEN, paths=[isolated_profile], texts=[*outputs, logged.text])


@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["table", "json"])
@pytest.mark.parametrize("way", CUT_OFF_WAYS)
def test_item18_models_cut_off_mid_body_says_the_list_was_cut_off(
    way: str, flags: tuple[str, ...], cli: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(answer(cut_off(catalogue_body(), way))) as server:
        code, out, err = cli(capsys, server, "models", *flags)
    assert code == EXIT_NETWORK, err
    assert EXIT_CODES[code] == "network, TLS or timeout failure"
    assert out == ""  # no half list
    message = err.removeprefix("flarechat: ").strip()
    assert message.startswith("The model list was cut off mid-way"), err
    assert "Try again" in message
    assert "did not answer in HTTP" not in err
    assert "could not read" not in err
    assert_plain(message)

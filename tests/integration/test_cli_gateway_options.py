"""`flarechat ask` AI Gateway flags: cache key, metadata, logging and retries reach the headers."""

from __future__ import annotations

import json

import pytest

from flarechat import cli
from flarechat.emulator.server import EmulatorServer
from support.cli import FAST, generation_requests, point_at

LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"
TOKEN = "cli-gateway-secret-5d1e8a0c7b39"


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    return point_at(emulator, monkeypatch, token=TOKEN)


def _ask(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(["ask", "--model", LLAMA, *argv], retry_policy=FAST)
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    return code, captured.err


def _generation_headers(server: EmulatorServer) -> list[dict[str, str]]:
    return [r.headers for r in generation_requests(server)]


def test_every_gateway_flag_reaches_its_header(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _err = _ask(
        capsys,
        "--gateway",
        "my-gw",
        "--cache-key",
        "faq-1",
        "--metadata",
        "team=docs",
        "--metadata",
        "ticket=42",
        "--no-collect-log",
        "--gateway-timeout",
        "15000",
        "--gateway-max-attempts",
        "3",
        "--gateway-retry-delay",
        "250",
        "--gateway-backoff",
        "linear",
        "hello",
    )
    assert code == cli.EXIT_OK
    (headers,) = _generation_headers(cli_env)
    assert headers["cf-aig-gateway-id"] == "my-gw"
    assert headers["cf-aig-cache-key"] == "faq-1"
    assert json.loads(headers["cf-aig-metadata"]) == {"team": "docs", "ticket": "42"}
    assert headers["cf-aig-collect-log"] == "false"
    assert headers["cf-aig-request-timeout"] == "15000"
    assert headers["cf-aig-max-attempts"] == "3"
    assert headers["cf-aig-retry-delay"] == "250"
    assert headers["cf-aig-backoff"] == "linear"


def test_unset_gateway_flags_send_no_header(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _err = _ask(capsys, "--gateway", "my-gw", "--collect-log", "hello")
    assert code == cli.EXIT_OK
    (headers,) = _generation_headers(cli_env)
    assert headers["cf-aig-collect-log"] == "true"
    for name in ("cache-key", "metadata", "request-timeout", "max-attempts", "retry-delay"):
        assert f"cf-aig-{name}" not in headers
    assert "cf-aig-backoff" not in headers


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--metadata", "no-equals-sign"], "KEY=VALUE"),
        (["--metadata", "=value"], "no key"),
        (["--gateway-max-attempts", "6"], "max attempts"),
        (["--gateway-retry-delay", "5001"], "retry delay"),
        (["--gateway-timeout", "0"], "request timeout"),
        (["--gateway-backoff", "random"], "invalid choice"),
    ],
)
def test_bad_gateway_flags_exit_2_with_the_reason(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, err = _ask(capsys, *argv, "hello")
    assert code == cli.EXIT_USAGE
    assert message in err


def test_more_than_five_metadata_entries_are_refused(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = [arg for n in range(6) for arg in ("--metadata", f"k{n}=v")]
    code, err = _ask(capsys, "--gateway", "my-gw", *entries, "hello")
    assert code == cli.EXIT_USAGE
    assert "at most 5 metadata entries" in err
    assert not _generation_headers(cli_env)


def test_help_documents_the_gateway_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ask", "--help"]) == cli.EXIT_OK
    text = capsys.readouterr().out
    for flag in (
        "--cache-key",
        "--metadata KEY=VALUE",
        "--collect-log, --no-collect-log",
        "--gateway-timeout MS",
        "--gateway-max-attempts N",
        "--gateway-retry-delay MS",
        "--gateway-backoff {constant,linear,exponential}",
    ):
        assert flag in text

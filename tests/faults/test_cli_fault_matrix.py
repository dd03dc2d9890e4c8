"""`flarechat ask` through the same faults, in-process and as a subprocess: the documented exit
code, a plain message on stderr, the partial text kept on stdout, and no token anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from drive import assert_plain
from leaks import assert_no_secret

from flarechat.api.retry import RetryPolicy
from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.emulator.server import EmulatorServer
from flarechat.emulator.state import EmulatorState
from support.hostile import HostileServer, answer, garbage, portal, redirect

MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
TOKEN = "tok-faults-cli-71d2c9e04b"
#: Immediate retries; a Retry-After past 1 s gives up at once instead of waiting.
FAST = RetryPolicy(base_delay=0.0, max_delay=0.0, retry_after_cap=1.0)
PATIENCE = 60.0

Script = Callable[[EmulatorState], None]


def _fail(code: int, status: int, **kw: object) -> Script:
    return lambda state: state.fail_next(4, code=code, status=status, **kw)  # type: ignore[arg-type]


#: name -> (fault, exit code, words on stderr, text expected on stdout)
EMULATOR_FAULTS: dict[str, tuple[Script, int, str, bool]] = {
    "capacity-3040": (_fail(3040, 429), 4, "at capacity for", False),
    "daily-allocation": (_fail(3036, 429), 5, "resets at", False),
    "rate-limit-retry-after": (_fail(3021, 429, retry_after=30.0), 6, "rate-limiting", False),
    "unauthorized": (_fail(10000, 401), 3, "rejected the API token", False),
    "gateway-not-found": (_fail(2001, 400), 11, "AI Gateway does not exist", False),
    "gateway-unauthorized": (_fail(2009, 401), 3, "gateway token", False),
    "gateway-rate-limited": (_fail(2003, 429), 6, "rate limit was reached", False),
    "model-deprecated-5028": (_fail(5028, 400), 7, "retired by Cloudflare", False),
    "paid-plan-only-5035": (_fail(5035, 403), 7, "Workers Paid plan", False),
    "terms-not-accepted-5016": (_fail(5016, 403), 7, "licence terms", False),
    "context-exceeded-5021": (_fail(5021, 400), 8, "context window", False),
    "dropped-after-k-tokens": (lambda s: s.drop_after_tokens(3), 10, "cut off", True),
    "malformed-sse": (lambda s: s.malformed_chunks(3), 0, "", True),
    "slow-first-byte": (lambda s: s.delay_first_byte(1.0), 0, "", True),
}


@pytest.fixture
def cli_env(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, isolated_profile: Path
) -> Iterator[Callable[..., tuple[int, str, str]]]:
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", DEMO_ACCOUNT_ID)
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", TOKEN)
    monkeypatch.setenv("FLARECHAT_API_BASE", emulator.api_base)
    monkeypatch.setenv("FLARECHAT_GATEWAY_BASE", emulator.gateway_base)
    from flarechat import cli

    outputs: list[str] = []

    def ask(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
        code = cli.main(
            ["ask", "--json", *extra, "What does this fault look like?"], retry_policy=FAST
        )
        captured = capsys.readouterr()
        outputs.extend((captured.out, captured.err))
        return code, captured.out, captured.err

    yield ask
    assert_no_secret(TOKEN, paths=[isolated_profile], texts=outputs)


@pytest.mark.parametrize("name", list(EMULATOR_FAULTS))
def test_api_faults_exit_with_their_code_and_say_what_happened(
    name: str,
    cli_env: Callable[..., tuple[int, str, str]],
    emulator: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fault, exit_code, words, with_text = EMULATOR_FAULTS[name]
    fault(emulator.state)
    code, out, err = cli_env(capsys)
    assert code == exit_code, err
    assert words in err
    assert "Traceback" not in err
    assert "will retry" not in err.lower()
    if with_text:
        assert '"text": ""' not in out
    if exit_code:
        assert_plain(err.splitlines()[0].removeprefix("flarechat: "))


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("name", "base", "words"),
    [
        ("connection-refused", lambda: f"http://127.0.0.1:{_closed_port()}", "Could not reach"),
        ("dns-failure", lambda: "https://flarechat-fault.invalid", "Could not reach"),
    ],
)
def test_unreachable_servers_exit_9(
    name: str,
    base: Callable[[], str],
    words: str,
    cli_env: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLARECHAT_API_BASE", f"{base()}/client/v4")
    code, _out, err = cli_env(capsys)
    assert code == 9, err
    assert words in err
    assert "Traceback" not in err


def test_tls_to_a_plain_http_port_exits_9_saying_the_server_did_not_speak_tls(
    cli_env: Callable[..., tuple[int, str, str]],
    emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FLARECHAT_API_BASE", emulator.api_base.replace("http://", "https://"))
    code, _out, err = cli_env(capsys)
    assert code == 9, err
    assert "did not speak TLS" in err
    assert "certificate" not in err


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("redirect", redirect(f"https://portal.example/in?t={TOKEN}"), "redirected the request"),
        ("captive-portal", portal(), "captive portal or proxy may be intercepting"),
        ("not-http", garbage(), "did not answer in HTTP"),
    ],
)
def test_servers_that_are_not_the_api_are_named_and_not_retried(
    name: str,
    data: bytes,
    words: str,
    cli_env: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with HostileServer(answer(data)) as server:
        monkeypatch.setenv("FLARECHAT_API_BASE", server.api_base)
        code, _out, err = cli_env(capsys)
    assert code == 11, err
    assert words in err
    assert "Cloudflare had a problem" not in err
    assert server.connections == 1


# -- as a subprocess, with -v (httpx's own debug logs on stderr) ------------------------------


def _subprocess_env(profile: Path, api_base: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "FLARECHAT_HOME": str(profile),
            "CLOUDFLARE_ACCOUNT_ID": DEMO_ACCOUNT_ID,
            "CLOUDFLARE_API_TOKEN": TOKEN,
            "FLARECHAT_API_BASE": api_base,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "fault", "exit_code", "words"),
    [
        ("unauthorized", _fail(10000, 401), 3, "rejected the API token"),
        ("dropped", lambda s: s.drop_after_tokens(2), 10, "cut off"),
    ],
)
def test_verbose_subprocess_logs_never_hold_the_token(
    name: str,
    fault: Script,
    exit_code: int,
    words: str,
    emulator: EmulatorServer,
    isolated_profile: Path,
) -> None:
    fault(emulator.state)
    done = subprocess.run(
        [sys.executable, "-m", "flarechat", "ask", "-v", "--json", "hello"],
        env=_subprocess_env(isolated_profile, emulator.api_base),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    assert done.returncode == exit_code, done.stderr
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert "HTTP" in done.stderr  # the -v log is there, redacted
    assert_no_secret(TOKEN, paths=[isolated_profile], texts=[done.stdout, done.stderr])

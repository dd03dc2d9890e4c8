"""`flarechat ask` / `models` under faults: clear messages and the documented exit codes,
never a traceback (bad model ids, undecodable text, unusable profile, closed pipes)."""

from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from flarechat import cli
from flarechat.api.retry import RetryPolicy
from flarechat.emulator.server import EmulatorServer
from flarechat.settings.schema import Settings
from flarechat.settings.store import SettingsStore
from support.cli import Result, generation_bodies, point_at, run_cli

LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"
TOKEN = "cli-faults-secret-9c4e1b7a2d60f3"
#: Upper bound for waits on other processes (never a timing assertion).
PATIENCE = 60.0
REPLACEMENT = "\N{REPLACEMENT CHARACTER}"


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    return point_at(emulator, monkeypatch, token=TOKEN)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    return run_cli(capsys, *argv, token=TOKEN)


def _no_traceback(result: Result) -> None:
    assert "Traceback" not in result.err
    assert "Error:" not in result.err  # no exception class names either


# --- model ids --------------------------------------------------------------------------------


def test_a_bad_model_flag_is_a_usage_error_naming_flarechat_models(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--model", "bad model", "hi")
    assert result.code == cli.EXIT_USAGE
    assert "not a valid Workers AI model id" in result.err
    assert "`flarechat models` lists the models" in result.err
    assert generation_bodies(cli_env) == []
    _no_traceback(result)


def test_a_bad_saved_model_falls_back_to_the_default_with_a_warning(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    SettingsStore().save(replace(Settings(), last_model="not a model!"))
    for _ in range(2):  # every later ask works too
        result = run(capsys, "ask", "--max-tokens", "5", "hi")
        assert result.code == cli.EXIT_OK, result.err
        assert "The saved model 'not a model!' is not a valid model id" in result.err
    assert {r.path.rsplit("/run/", 1)[1] for r in cli_env.state.requests} == {Settings().last_model}


def test_an_unknown_model_points_to_flarechat_models(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--model", "@cf/nobody/no-such-model", "hi")
    assert result.code == cli.EXIT_MODEL
    assert "`flarechat models` lists the models" in result.err
    assert "from the list" not in result.err


# --- text that is not UTF-8 -------------------------------------------------------------------


def test_undecodable_prompt_and_system_are_replaced_and_reported(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # argv carries undecodable bytes as surrogate escapes; "\ud800" is a lone surrogate.
    result = run(
        capsys, "ask", "--model", LLAMA, "--system", "be \ud800 brief", "caf\udce9 \udcff ok"
    )
    assert result.code == cli.EXIT_OK, result.err
    assert "The prompt held bytes that are not valid UTF-8" in result.err
    assert "The system prompt held bytes that are not valid UTF-8" in result.err
    [body] = generation_bodies(cli_env)
    assert body["messages"] == [
        {"role": "system", "content": f"be {REPLACEMENT} brief"},
        {"role": "user", "content": f"caf{REPLACEMENT} {REPLACEMENT} ok"},
    ]


def test_invalid_utf8_on_stdin_is_replaced_and_reported(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"caf\xe9 question\n")))
    result = run(capsys, "ask", "--model", LLAMA, "-")
    assert result.code == cli.EXIT_OK, result.err
    assert "from stdin held bytes that are not valid UTF-8" in result.err
    [body] = generation_bodies(cli_env)
    assert body["messages"] == [{"role": "user", "content": f"caf{REPLACEMENT} question\n"}]


@pytest.mark.parametrize("closed", ["none", "closed"])
def test_dash_with_stdin_closed_is_a_usage_error(
    cli_env: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    closed: str,
) -> None:
    stdin = None
    if closed == "closed":
        stdin = io.StringIO("")
        stdin.close()
    monkeypatch.setattr(sys, "stdin", stdin)
    result = run(capsys, "ask", "--model", LLAMA, "-")
    assert result.code == cli.EXIT_USAGE
    assert "stdin is closed" in result.err
    assert generation_bodies(cli_env) == []
    _no_traceback(result)


# --- the profile folder -----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["a file", "under a file"])
@pytest.mark.parametrize("demo", [False, True])
def test_an_unusable_flarechat_home_is_a_clear_usage_error(
    tmp_path: Path, where: str, demo: bool
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    home = blocker if where == "a file" else blocker / "profile"
    env = {**os.environ, "FLARECHAT_HOME": str(home)}
    argv = [sys.executable, "-m", "flarechat", "ask", *(["--demo"] if demo else []), "hi"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=PATIENCE)
    assert proc.returncode == cli.EXIT_USAGE, proc.stderr
    assert "FLARECHAT_HOME" in proc.stderr
    assert str(blocker) in proc.stderr
    assert "Traceback" not in proc.stderr


# --- stdout closed early ----------------------------------------------------------------------


def test_stdout_closed_mid_reply_exits_141_quietly(cli_env: EmulatorServer) -> None:
    cli_env.state.tokens_per_second = 5
    proc = subprocess.Popen(
        [sys.executable, "-m", "flarechat", "ask", "--model", LLAMA, "a long answer"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE)
        assert ready, "no reply text arrived"
        proc.stdout.close()  # like `| head -c1` exiting after its byte
        err = proc.stderr.read()
        proc.wait(timeout=PATIENCE)
    finally:
        proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == cli.EXIT_BROKEN_PIPE, err
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err
    assert TOKEN.encode() not in err


@pytest.mark.parametrize("head", ["head -c1", "head -1"])
def test_piped_into_head_exits_141_quietly(
    cli_env: EmulatorServer, tmp_path: Path, head: str
) -> None:
    cli_env.state.tokens_per_second = 20  # many writes are still to come when head exits
    errors = tmp_path / "stderr.txt"
    script = f'"$0" -m flarechat ask --model {LLAMA} "a long answer" 2>"$1" | {head}; '
    script += 'echo "exit=${PIPESTATUS[0]}"'
    proc = subprocess.run(
        ["bash", "-c", script, sys.executable, str(errors)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=PATIENCE,
        check=False,
    )
    assert proc.stdout.endswith(f"exit={cli.EXIT_BROKEN_PIPE}\n"), proc.stdout
    err = errors.read_text()
    assert "Traceback" not in err
    assert "Exception ignored" not in err


# --- wording ----------------------------------------------------------------------------------


def test_retry_notices_use_one_precision(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.state.hold_slots(LLAMA, 3600)
    policy = RetryPolicy(base_delay=0.01, max_delay=0.3)
    code = cli.main(["ask", "--reject-if-busy", "--model", LLAMA, "busy?"], retry_policy=policy)
    err = capsys.readouterr().err
    assert code == cli.EXIT_CAPACITY
    delays = re.findall(r"retrying in (\S+) s", err)
    assert len(delays) == policy.max_attempts - 1
    assert all(re.fullmatch(r"\d+\.\d", delay) for delay in delays), delays


def test_no_credentials_says_they_are_missing_not_unreachable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "ask", "hello")
    assert result.code == cli.EXIT_USAGE
    assert "No Cloudflare credentials are set up" in result.err
    assert "cannot reach" not in result.err
    assert "--demo" in result.err


def test_models_table_has_a_header_and_prices_per_million_tokens(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "models")
    assert result.code == cli.EXIT_OK
    header, *rows = result.out.splitlines()
    assert header.split() == ["MODEL", "CONTEXT", "IN", "$/M", "OUT", "$/M", "CAPABILITIES"]
    llama = next(row for row in rows if row.startswith(LLAMA + " "))
    assert re.search(r"128,000 +\$\d+\.\d{2,6} +\$\d+\.\d{2,6}", llama), llama

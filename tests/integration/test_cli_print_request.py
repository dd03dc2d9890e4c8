"""`flarechat ask --print-request`: the printed curl and Python really run against the emulator,
send what `ask` sends, and never contain the token."""

from __future__ import annotations

import ast
import base64
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from flarechat import cli
from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.emulator.server import EmulatorServer
from support.cli import FAST, generation_requests, point_at

LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"
TOKEN = "print-request-secret-4b8e2f6a1c93d7"
GATEWAY_TOKEN = "print-request-gateway-secret-77e1"
PATIENCE = 60.0
#: Quotes, a newline, non-ASCII and shell metacharacters: all must survive quoting.
AWKWARD = 'It\'s "quoted"\nsecond line: café ✓ $HOME `date` \\n !'


def _leaks(text: str) -> list[str]:
    forms = []
    for secret in (TOKEN, GATEWAY_TOKEN):
        forms += [secret, base64.b64encode(secret.encode()).decode(), quote(secret, safe="")]
    return [form for form in forms if form in text]


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    return point_at(emulator, monkeypatch, token=TOKEN)


def _generation_requests(server: EmulatorServer) -> list[tuple[dict[str, str], object]]:
    return [(r.headers, r.json) for r in generation_requests(server)]


def _printed(capsys: pytest.CaptureFixture[str], kind: str, *argv: str) -> str:
    code = cli.main(["ask", "--print-request", kind, *argv], retry_policy=FAST)
    captured = capsys.readouterr()
    assert code == cli.EXIT_OK, captured.err
    assert _leaks(captured.out + captured.err) == []
    return captured.out


def _sent_by_ask(server: EmulatorServer, capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    server.state.reset()
    assert cli.main(["ask", *argv], retry_policy=FAST) == cli.EXIT_OK
    capsys.readouterr()
    [(_, body)] = _generation_requests(server)
    server.state.reset()
    return body


def _run_with_token(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CLOUDFLARE_API_TOKEN": TOKEN, "CF_AIG_TOKEN": GATEWAY_TOKEN}
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=PATIENCE, check=False
    )


@pytest.mark.parametrize("route", [[], ["--gateway", "my-gw", "--cache-ttl", "600"]])
def test_printed_curl_runs_and_sends_what_ask_sends(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], route: list[str]
) -> None:
    argv = ["--model", LLAMA, "--system", "Be brief.", "--reject-if-busy", *route, AWKWARD]
    expected = _sent_by_ask(cli_env, capsys, *argv)
    script = _printed(capsys, "curl", *argv)
    assert _generation_requests(cli_env) == []  # printing sends nothing
    proc = _run_with_token(["bash", "-c", script])
    assert proc.returncode == 0, proc.stderr
    assert '"completion_tokens"' in proc.stdout  # a whole streamed reply, to its usage
    assert proc.stdout.rstrip().endswith("data: [DONE]")
    [(headers, body)] = _generation_requests(cli_env)
    assert body == expected
    assert headers["authorization"] == f"Bearer {TOKEN}"
    if route:
        assert headers["cf-aig-gateway-id"] == "my-gw"
        assert headers["cf-aig-cache-ttl"] == "600"


def test_printed_python_runs_and_prints_the_reply(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--model", LLAMA, "--max-tokens", "64", AWKWARD]
    expected = _sent_by_ask(cli_env, capsys, *argv)
    script = tmp_path / "ask.py"
    script.write_text(_printed(capsys, "python", *argv), encoding="utf-8")
    proc = _run_with_token([sys.executable, str(script)])
    assert proc.returncode == 0, proc.stderr
    assert "You asked" in proc.stdout
    assert "data:" not in proc.stdout  # the text, not the raw events
    [(_, body)] = _generation_requests(cli_env)
    assert body == expected


def test_printed_openai_code_targets_the_compatible_endpoint(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _printed(capsys, "openai", "--model", LLAMA, "--reject-if-busy", AWKWARD)
    tree = ast.parse(code)
    calls = {
        ast.unparse(node.func): {kw.arg: kw.value for kw in node.keywords}
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    client = calls["OpenAI"]
    expected_base = f"{cli_env.api_base}/accounts/{DEMO_ACCOUNT_ID}/ai/v1"
    assert ast.literal_eval(client["base_url"]) == expected_base
    assert ast.unparse(client["api_key"]) == "os.environ['CLOUDFLARE_API_TOKEN']"
    create = calls["client.chat.completions.create"]
    assert ast.literal_eval(create["model"]) == LLAMA
    assert ast.literal_eval(create["messages"]) == [{"role": "user", "content": AWKWARD}]
    assert ast.literal_eval(create["stream"]) is True
    assert ast.literal_eval(create["extra_body"]) == {"options": {"rejectIfBusy": True}}
    assert _generation_requests(cli_env) == []


def test_printed_binding_call_carries_the_gateway_options(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _printed(
        capsys, "binding", "--model", LLAMA, "--gateway", "my-gw", "--skip-cache", AWKWARD
    )
    assert f'env.AI.run("{LLAMA}", inputs, {{' in code
    assert '"id": "my-gw"' in code
    assert '"skipCache": true' in code
    assert "Authorization" not in code


def test_an_authenticated_gateway_token_is_an_environment_reference(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_AI_GATEWAY_ID", "my-gw")
    for kind in ("curl", "python", "openai", "binding"):
        _printed(capsys, kind, "--model", LLAMA, "hello")  # asserts no token in any form


def test_print_request_checks_the_request_first(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["ask", "--print-request", "curl", "--model", "bad id", "x"])
    assert code == cli.EXIT_USAGE
    assert "not a valid Workers AI model id" in capsys.readouterr().err

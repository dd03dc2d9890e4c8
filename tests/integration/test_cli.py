"""`flarechat ask` / `flarechat models` end to end: the real client against the emulator."""

from __future__ import annotations

import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from flarechat import cli
from flarechat.emulator.server import EmulatorServer
from support.cli import (
    FAST,
    Result,
    generation_bodies,
    generation_requests,
    point_at,
    run_cli,
    spawn_interruptible,
)

LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"
QWQ = "@cf/qwen/qwq-32b"
#: Distinctive, so a leak anywhere in the output is unmistakable.
TOKEN = "cli-secret-token-7f3a9c2e5b1d4680aa"
#: Upper bound for waits on other threads and processes (never a timing assertion).
PATIENCE = 60.0
#: Tokens per second that hold a stream open for the rest of a test (one token per ~17 min).
HELD_PACE = 0.001


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    """The environment a user would set to point Flarechat at this emulator."""
    return point_at(emulator, monkeypatch, token=TOKEN)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    return run_cli(capsys, *argv, token=TOKEN)


#: The figures as the window words them (flarechat.core.figures): "TTFT 38 ms · 39 tok/s · …".
SUMMARY_FIGURES = re.compile(
    r" · TTFT (<1 ms|\d{1,3} ms|\d+\.\d{1,2} s) · ~?\d+(\.\d)? tok/s"
    r" · [\d,]+\N{RIGHTWARDS ARROW}[\d,]+ tokens( \([\d,]+ cached\))? · \d+\.\d\d neurons"
)


# --- ask: success -----------------------------------------------------------------------------


def test_ask_streams_the_reply_and_summarises(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--model", LLAMA, "What is Flarechat?")
    assert result.code == cli.EXIT_OK
    assert "What is Flarechat?" in result.out  # the emulator echoes the question
    assert "```python" in result.out
    summary = result.err.strip().splitlines()[-1]
    assert summary.startswith(LLAMA)
    assert SUMMARY_FIGURES.search(summary), summary  # worded as in the window
    assert "request " in summary
    [body] = generation_bodies(cli_env)
    assert body["stream"] is True
    assert body["max_tokens"] == 2048  # the saved default, always sent
    assert "options" not in body  # rejectIfBusy is off by default
    assert body["messages"] == [{"role": "user", "content": "What is Flarechat?"}]


def test_ask_json_prints_one_object(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--json", "--model", LLAMA, "hello")
    assert result.code == cli.EXIT_OK
    report = json.loads(result.out)  # exactly one JSON document, nothing streamed before it
    assert report["model"] == LLAMA
    assert report["status"] == "done"
    assert report["finish_reason"] == "stop"
    assert "hello" in report["text"]
    assert report["reasoning"] == ""
    assert report["usage"]["completion_tokens"] > 0
    assert report["usage"]["prompt_tokens"] > 0
    assert report["meta"]["request_id"]
    assert report["meta"]["status_code"] == 200
    assert report["timings"]["ttft"] >= 0
    assert report["timings"]["duration"] >= report["timings"]["ttft"]
    assert report["error"] is None
    assert report["attempts"] == 1


def test_ask_options_reach_the_request(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(
        capsys,
        "ask",
        "--model",
        LLAMA,
        "--system",
        "Answer in one line.",
        "--max-tokens",
        "5",
        "--temperature",
        "0.3",
        "--reject-if-busy",
        "short",
    )
    assert result.code == cli.EXIT_OK
    assert "token limit" in result.err  # finish_reason "length" after 5 tokens
    [body] = generation_bodies(cli_env)
    assert body["max_tokens"] == 5
    assert body["temperature"] == 0.3
    assert body["options"] == {"rejectIfBusy": True}
    assert body["messages"] == [
        {"role": "system", "content": "Answer in one line."},
        {"role": "user", "content": "short"},
    ]


def test_prompt_from_stdin(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("piped question\n"))
    result = run(capsys, "ask", "--model", LLAMA, "-")
    assert result.code == cli.EXIT_OK
    [body] = generation_bodies(cli_env)
    assert body["messages"] == [{"role": "user", "content": "piped question\n"}]


def test_reasoning_is_hidden_unless_asked_for(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    hidden = run(capsys, "ask", "--json", "--model", QWQ, "why?")
    reasoning = json.loads(hidden.out)["reasoning"]
    assert reasoning
    plain = run(capsys, "ask", "--model", QWQ, "why?")
    assert reasoning not in plain.out
    assert reasoning not in plain.err
    shown = run(capsys, "ask", "--show-reasoning", "--model", QWQ, "why?")
    assert shown.code == cli.EXIT_OK
    assert reasoning in shown.err  # not a TTY: no escape codes
    assert reasoning not in shown.out


def test_gateway_flags_and_cache_status(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("ask", "--model", LLAMA, "--gateway", "my-gw", "--cache-ttl", "600", "cached?")
    first = run(capsys, *argv)
    second = run(capsys, *argv)
    bypass = run(capsys, *argv[:-1], "--skip-cache", "cached?")
    assert "cache MISS" in first.err
    assert "cache HIT" in second.err
    assert "cache BYPASS" in bypass.err
    assert "log " in first.err
    headers = [r.headers for r in cli_env.state.requests if "/ai/run/" in r.path]
    assert all(h["cf-aig-gateway-id"] == "my-gw" for h in headers)
    assert headers[0]["cf-aig-cache-ttl"] == "600"
    assert headers[2]["cf-aig-skip-cache"] == "true"


# --- ask: capacity ----------------------------------------------------------------------------


def test_capacity_with_reject_if_busy_retries_then_exits_4(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.state.hold_slots(LLAMA, 3600)
    result = run(capsys, "ask", "--reject-if-busy", "--model", LLAMA, "busy?")
    assert result.code == cli.EXIT_CAPACITY
    assert result.out == ""
    assert f"Workers AI is at capacity for {LLAMA}; retrying in" in result.err
    for upcoming in (2, 3, 4):
        assert f"(attempt {upcoming} of 4)" in result.err
    assert f"at capacity for {LLAMA} (gave up after 4 attempts)" in result.err
    assert "--no-reject-if-busy" in result.err
    bodies = generation_bodies(cli_env)
    assert len(bodies) == FAST.max_attempts
    assert all(body["options"] == {"rejectIfBusy": True} for body in bodies)
    rejected = [e for e in cli_env.state.capacity_log if e.action == "rejected"]
    assert len(rejected) == FAST.max_attempts


def test_capacity_without_reject_if_busy_waits_in_the_queue(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    state = cli_env.state
    state.hold_slots(LLAMA, 3600)
    argv = ["ask", "--no-reject-if-busy", "--model", LLAMA, "queue"]
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(cli.main, argv, retry_policy=FAST)
        deadline = time.monotonic() + PATIENCE
        while not any(e.action == "queued" for e in state.capacity_log):
            assert time.monotonic() < deadline, "the request never queued"
            time.sleep(0.01)
        state.hold_slots(LLAMA, 0)  # the hold ends; the queued request gets its slot
        code = future.result(timeout=PATIENCE)
    captured = capsys.readouterr()
    assert code == cli.EXIT_OK
    assert "queue" in captured.out
    assert "retrying" not in captured.err
    actions = [e.action for e in state.capacity_log if e.model == LLAMA]
    assert actions.index("queued") < actions.index("acquired")
    assert "rejected" not in actions


# --- ask: failures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status", "retry_after", "exit_code"),
    [
        (3021, 429, 3600.0, cli.EXIT_RATE_LIMITED),  # Retry-After beyond the cap: no retry
        (5021, 413, None, cli.EXIT_TOO_LARGE),
        (5006, 400, None, cli.EXIT_API),
    ],
)
def test_failure_classes_map_to_exit_codes(
    cli_env: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
    code: int,
    status: int,
    retry_after: float | None,
    exit_code: int,
) -> None:
    cli_env.state.fail_next(1, code=code, status=status, retry_after=retry_after)
    result = run(capsys, "ask", "--model", LLAMA, "fail")
    assert result.code == exit_code
    assert f"code {code}" in result.err
    assert len(generation_bodies(cli_env)) == 1


def test_daily_limit_exits_5_without_retry(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.state.fail_next(5, code=4006, status=429, body_style="v4-inference")
    result = run(capsys, "ask", "--model", LLAMA, "more")
    assert result.code == cli.EXIT_DAILY_LIMIT
    assert "00:00 UTC" in result.err
    assert "local time" in result.err
    assert "retrying" not in result.err
    assert len(generation_bodies(cli_env)) == 1


def test_bad_token_exits_3_and_is_never_shown(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = "invalid-token-5d2e8f1a9b3c7e60"
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", bad)
    result = run(capsys, "ask", "--model", LLAMA, "hi")
    assert result.code == cli.EXIT_AUTH
    assert bad not in result.out + result.err
    assert len(generation_bodies(cli_env)) == 1


def test_unknown_model_exits_7(cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "ask", "--model", "@cf/nobody/no-such-model", "hi")
    assert result.code == cli.EXIT_MODEL
    assert "5007" in result.err


def test_interrupted_stream_keeps_the_partial_text(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    full = run(capsys, "ask", "--model", LLAMA, "tell me")
    cli_env.state.drop_after_tokens(3)
    cut = run(capsys, "ask", "--model", LLAMA, "tell me")
    assert cut.code == cli.EXIT_INTERRUPTED
    partial = cut.out.removesuffix("\n")
    assert partial
    assert full.out.startswith(partial)
    assert len(partial) < len(full.out.strip())
    assert "retrying" not in cut.err  # text had arrived: never retried


def test_error_event_after_text_is_not_retried(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.state.error_event_after(2, code=3040)
    result = run(capsys, "ask", "--json", "--model", LLAMA, "midway")
    assert result.code == cli.EXIT_CAPACITY
    report = json.loads(result.out)
    assert report["text"]
    assert report["status"] == "failed"
    assert report["error"]["kind"] == "capacity"
    assert len(generation_bodies(cli_env)) == 1


def test_unreachable_server_exits_9(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLARECHAT_API_BASE", "http://127.0.0.1:9/client/v4")  # discard port
    result = run(capsys, "ask", "--model", LLAMA, "anyone?")
    assert result.code == cli.EXIT_NETWORK
    assert "retrying" in result.err  # connection failures are retried first


# --- configuration and usage ------------------------------------------------------------------


def test_missing_account_exits_2_naming_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "ask", "hello")
    assert result.code == cli.EXIT_USAGE
    for hint in ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_API_TOKEN", "--demo"):
        assert hint in result.err
    # One message: the tests' keyring backend always fails, so it does not also say to save
    # the token in the settings window (into the keychain it just said cannot be read).
    [line] = result.err.splitlines()
    assert "keychain could not be read" in line
    assert "save them in the settings window" not in line
    assert result.out == ""


def test_a_short_model_name_is_the_one_model_it_names(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--model", LLAMA.rsplit("/", 1)[-1], "Hello")
    assert result.code == cli.EXIT_OK, result.err
    [sent] = generation_requests(cli_env)
    assert sent.path.endswith("/ai/run/" + LLAMA)
    assert result.err.strip().splitlines()[-1].startswith(LLAMA + " · ")


def test_an_unknown_model_name_suggests_the_closest_ids_and_sends_nothing(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--model", "llama-3.1-8b-instruct-fats", "Hello")
    assert result.code == cli.EXIT_USAGE
    [line] = result.err.splitlines()
    assert "'llama-3.1-8b-instruct-fats' is not a model of this account" in line
    assert f"Did you mean one of {LLAMA}, " in line
    assert "`flarechat models`" in line
    assert generation_requests(cli_env) == []


def test_a_full_id_the_server_does_not_know_gets_the_closest_ids(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "ask", "--model", LLAMA + "s", "Hello")
    assert result.code == cli.EXIT_MODEL
    assert "code 5007" in result.err
    assert f"Did you mean one of {LLAMA}, " in result.err
    assert len(generation_requests(cli_env)) == 1  # a full id is sent without a lookup


def test_models_prints_prices_with_every_digit(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "models", "--json")
    [info] = [m for m in json.loads(result.out) if m["name"] == LLAMA]
    assert info["price_input_per_m"] == 0.045
    table = run(capsys, "models")
    [row] = [r for r in table.out.splitlines() if r.startswith(LLAMA + " ")]
    assert f"${info['price_input_per_m']} " in row
    assert f"${info['price_output_per_m']}" in row.split()


def test_models_help_lists_only_the_exit_codes_models_can_end_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["models", "--help"]) == cli.EXIT_OK
    models_help = capsys.readouterr().out
    assert cli.main(["ask", "--help"]) == cli.EXIT_OK
    ask_help = capsys.readouterr().out
    for ask_only in ("at capacity", "cut off mid-stream", "too large", "daily free allocation"):
        assert ask_only in ask_help
        assert ask_only not in models_help
    assert "the list was printed" in models_help


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask", "--cache-ttl", "5", "x"], "cache TTL"),
        (["ask", "--max-tokens", "0", "x"], "Max tokens"),
        (["ask", "--temperature", "9", "x"], "Temperature"),
        (["ask", "--gateway", "Bad Id!", "x"], "gateway ID"),
        (["ask"], "PROMPT"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    result = run(capsys, *argv)
    assert result.code == cli.EXIT_USAGE
    assert message in result.err


def test_empty_prompt_exits_2(cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "ask", "  ")
    assert result.code == cli.EXIT_USAGE
    assert "empty" in result.err
    assert generation_bodies(cli_env) == []


def test_help_lists_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "ask", "--help")
    assert result.code == 0
    for code, meaning in cli.EXIT_CODES.items():
        assert f"{code:>3}  {meaning}" in result.out
    assert "CLOUDFLARE_AI_GATEWAY_ID" in result.out


def test_token_is_in_no_file_of_the_profile(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], isolated_profile: Path
) -> None:
    run(capsys, "ask", "--model", LLAMA, "hi")
    run(capsys, "models")
    for path in isolated_profile.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


# --- models -----------------------------------------------------------------------------------


def test_models_lists_the_text_generation_catalogue(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    table = run(capsys, "models")
    assert table.code == cli.EXIT_OK
    header, *rows = table.out.splitlines()
    assert header.split()[:2] == ["MODEL", "CONTEXT"]
    names = [line.split()[0] for line in rows]
    assert LLAMA in names
    assert QWQ in names
    assert len(names) >= 6
    assert "@cf/baai/bge-m3" not in names  # an embeddings model
    qwq_line = next(line for line in table.out.splitlines() if line.startswith(QWQ))
    assert "reasoning" in qwq_line
    listed = run(capsys, "models", "--json")
    assert [model["name"] for model in json.loads(listed.out)] == names


def test_models_with_a_bad_token_exits_3(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_API_TOKEN", "invalid-token-5d2e8f1a9b3c7e60")
    assert run(capsys, "models").code == cli.EXIT_AUTH


# --- real processes ---------------------------------------------------------------------------


def test_demo_in_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "flarechat", "ask", "--demo", "--max-tokens", "40", "hello"],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    assert proc.returncode == cli.EXIT_OK, proc.stderr
    assert proc.stdout.strip()
    assert cli.DEMO_NOTICE in proc.stderr
    assert any(line.startswith("@cf/") for line in proc.stderr.splitlines())  # the summary


def test_demo_models_in_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "flarechat", "models", "--demo", "--json"],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    assert proc.returncode == cli.EXIT_OK, proc.stderr
    assert LLAMA in [model["name"] for model in json.loads(proc.stdout)]


def test_ctrl_c_exits_130_keeping_the_partial_text(cli_env: EmulatorServer) -> None:
    """Deterministic under load: SIGINT goes only after text was printed, and by then the
    stream is held open (the next token is minutes away), so it cannot finish first."""
    cli_env.state.tokens_per_second = 5  # the emulator fixture restores the pace
    proc = spawn_interruptible(
        [sys.executable, "-m", "flarechat", "ask", "--model", LLAMA, "a long answer, slowly"],
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], PATIENCE)
        assert ready, "no reply text arrived"
        cli_env.state.tokens_per_second = HELD_PACE  # hold the stream open from here on
        first = os.read(proc.stdout.fileno(), 1 << 16)
        assert proc.poll() is None, "the reply ended before Ctrl+C could be sent"
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=PATIENCE)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == cli.EXIT_CTRL_C, err
    assert first.strip()
    assert b"interrupted" in err
    assert b"Traceback" not in err
    assert TOKEN.encode() not in first + rest + err

"""`flarechat eval` end to end against the emulator: results files (the JUnit one read back by a
JUnit parser), exit statuses, bad files refused before anything is sent, batch and live with
identical verdicts, a promptfoo config, and a SIGKILL mid-run resumed without re-sending."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from flarechat.core.store import default_path
from flarechat.emulator.server import EmulatorServer
from support.cli import Result, point_at, run_cli

TOKEN = "eval-secret-token-5c1e8a0b7d3f4e21bb"
LLAMA_8B = "@cf/meta/llama-3.1-8b-instruct-fast"
LLAMA_70B = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
#: Upper bound on waiting for another process (never a timing assertion).
PATIENCE = 60.0
COUNTRIES = ("France", "Japan", "Peru", "Chad", "Fiji", "Oman")

EXPERIMENT = f"""\
name: capitals
threshold: 0.75
variants:
  - name: small
    model: "{LLAMA_8B}"
    prompt: "What is the capital of {{{{country}}}}?"
    params: {{max_tokens: 24}}
  - name: big
    model: "{LLAMA_70B}"
    prompt: "What is the capital of {{{{country}}}}?"
    params: {{max_tokens: 24}}
cases: cases.csv
assert:
  - {{type: icontains, value: "{{{{country}}}}", weight: 2}}
  - {{type: llm-rubric, value: "asked capital {{{{country}}}}"}}
  - {{type: similar, value: "{{{{expected}}}}", threshold: 0.2}}
"""
CASES = "country,expected\nFrance,The capital of France\nJapan,The capital of Japan\nPeru,Lima\n"


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    return point_at(emulator, monkeypatch, token=TOKEN)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    return run_cli(capsys, "eval", *argv, "--poll-interval", "0", token=TOKEN)


def write(folder: Path, experiment: str = EXPERIMENT, cases: str = CASES) -> Path:
    (folder / "cases.csv").write_text(cases, encoding="utf-8")
    path = folder / "exp.yaml"
    path.write_text(experiment, encoding="utf-8")
    return path


def cell_prompts(emulator: EmulatorServer) -> list[tuple[str, str]]:
    """(path, question) of every chat request of a cell (not the judge's)."""
    found = []
    for request in emulator.state.requests:
        messages = (request.json or {}).get("messages") if isinstance(request.json, dict) else None
        if isinstance(messages, list) and str(messages[-1]["content"]).startswith("What is"):
            found.append((request.path, str(messages[-1]["content"])))
    return found


def test_a_run_writes_every_output_and_exits_0(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    outputs = [tmp_path / f"out.{s}" for s in ("json", "csv", "xml", "html")]
    result = run(capsys, str(path), *(a for o in outputs for a in ("--output", str(o))))
    assert result.code == 0, result.err
    assert "small" in result.out
    assert "3/3 (100%)" in result.out
    assert "3 of 6 cells" not in result.err  # none was finished before
    assert "6 of 6 cells to send" in result.err
    assert "6/6 cells" in result.err
    document = json.loads(outputs[0].read_text(encoding="utf-8"))
    assert [s["passed"] for s in document["summary"]] == [3, 3]
    assert len(document["cells"]) == 6
    rows = list(csv.DictReader(io.StringIO(outputs[1].read_text(encoding="utf-8"))))
    assert len(rows) == 6
    assert rows[0]["country"] == "France"
    assert rows[0]["prompt"] == "What is the capital of France?"
    assert "France" in rows[0]["reply"]
    assert rows[0]["assert2_type"] == "llm-rubric"
    xml = JUnitXml.fromfile(str(outputs[2]))
    suites = list(xml)
    assert [s.name for s in suites] == ["small", "big"]
    assert [s.tests for s in suites] == [3, 3]
    assert all(s.failures == 0 for s in suites)
    for written in [*outputs, default_path()]:  # the token is in no file the run wrote
        assert TOKEN.encode() not in written.read_bytes(), written
    page = outputs[3].read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<svg" in page
    assert "src=" not in page  # self-contained: nothing fetched
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_a_failing_assertion_exits_non_zero_and_the_junit_file_says_which(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    experiment = EXPERIMENT.replace(
        "assert:\n", 'assert:\n  - {type: contains, value: "Peru", weight: 10}\n'
    )
    path = write(tmp_path, experiment)
    out = tmp_path / "junit.xml"
    result = run(capsys, str(path), "--variant", "small", "--output", str(out))
    assert result.code == 1
    suites = list(JUnitXml.fromfile(str(out)))
    assert [s.name for s in suites] == ["small"]
    (suite,) = suites
    assert (suite.tests, suite.failures) == (3, 2)
    failed = {c.name: c.result for c in suite}
    names = [name for name, results in failed.items() if results]
    assert names == ["case 1: country=France", "case 2: country=Japan"]
    failure = failed["case 1: country=France"][0]
    assert isinstance(failure, Failure)
    assert "contains: missing 'Peru'" in (failure.message or "")


@pytest.mark.parametrize(
    ("experiment", "cases", "where", "words"),
    [
        (EXPERIMENT, CASES + "Chad\n", "cases.csv:5: row:", "has 1 fields"),
        (
            EXPERIMENT.replace("type: llm-rubric", "type: javascript"),
            CASES,
            "exp.yaml:15: assert[1].type:",
            "unknown assertion 'javascript'",
        ),
        (
            EXPERIMENT,
            "nation,expected\nFrance,x\n",
            "cases.csv:2: country:",
            "uses {{country}}",
        ),
        (
            EXPERIMENT.replace(
                "assert:\n", "assert:\n  - {type: json-schema, schema: {type: 12}}\n"
            ),
            CASES,
            "exp.yaml:14: assert[0].schema:",
            "not a valid JSON Schema",
        ),
    ],
    ids=["ragged-row", "unknown-assertion", "missing-variable", "bad-schema"],
)
def test_a_bad_file_is_refused_before_anything_is_sent(
    cli_env: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    experiment: str,
    cases: str,
    where: str,
    words: str,
) -> None:
    path = write(tmp_path, experiment, cases)
    result = run(capsys, str(path))
    assert result.code == 2
    line = next(line for line in result.err.splitlines() if where in line)
    assert words in line
    assert str(tmp_path) in line  # the file is named whole
    assert "nothing was sent" in result.err
    assert cli_env.state.requests == []


def test_bad_options_are_refused_before_anything_is_sent(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    assert run(capsys, str(path), "--budget", "lots").code == 2
    result = run(capsys, str(path), "--output", str(tmp_path / "out.pdf"))
    assert result.code == 2
    assert "out.pdf: the file must end in .json, .csv, .xml, .html" in result.err
    result = run(capsys, str(path), "--variant", "huge")
    assert result.code == 2
    assert "no variant 'huge' (there are: small, big)" in result.err
    assert run(capsys, str(path), "--repeat", "0").code == 2
    assert [r for r in cli_env.state.requests if "/ai/run/" in r.path] == []


def test_batch_and_live_give_identical_verdicts(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    live_out, batch_out = tmp_path / "live.json", tmp_path / "batch.json"
    assert run(capsys, str(path), "--output", str(live_out)).code == 0
    result = run(capsys, str(path), "--batch", "--rerun", "--output", str(batch_out))
    assert result.code == 0, result.err
    assert f"{LLAMA_8B} does not take the Batch API: its cells ran live." in result.err
    assert ": queued" in result.err
    assert ": done" in result.err

    def verdicts(out: Path) -> dict[str, object]:
        cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
        return {c["id"]: (c["passed"], c["score"]) for c in cells}

    assert verdicts(batch_out) == verdicts(live_out)
    modes = {c["model"]: c["mode"] for c in json.loads(batch_out.read_text())["cells"]}
    assert modes == {LLAMA_8B: "live", LLAMA_70B: "batch"}
    assert cli_env.state.batch_count == 1


def test_a_second_run_sends_nothing_and_repeat_sends_more(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    assert run(capsys, str(path), "--variant", "small").code == 0
    sent = len(cell_prompts(cli_env))
    again = run(capsys, str(path), "--variant", "small")
    assert again.code == 0
    assert "0 of 3 cells to send (3 already finished)" in again.err
    assert len(cell_prompts(cli_env)) == sent == 3
    assert run(capsys, str(path), "--variant", "small", "--repeat", "2").code == 0
    assert len(cell_prompts(cli_env)) == 6  # the second repeat of each case, once


def test_a_budget_stops_the_run_and_exits_non_zero(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    result = run(capsys, str(path), "--budget", "1n")
    assert result.code == 1
    assert "Stopped before the budget of 1 neurons could be crossed" in result.err
    assert cell_prompts(cli_env) == []


def test_3036_stops_with_the_reset_time_and_its_exit_code(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    cli_env.state.fail_next(1, code=3036, status=429, model=LLAMA_8B)
    result = run(capsys, str(path), "--variant", "small")
    assert result.code == 5
    assert "The free allocation resets at" in result.err
    assert "00:00 UTC" in result.err


PROMPTFOO = f"""\
description: capitals from promptfoo
prompts:
  - "What is the capital of {{{{country}}}}?"
providers:
  - id: cloudflare-ai:chat:{LLAMA_8B}
    label: small
    config: {{max_tokens: 24, temperature: 0}}
  - openai:chat:{LLAMA_70B}
defaultTest:
  assert:
    - type: icontains
      value: "{{{{country}}}}"
    - type: latency
      threshold: 60000
tests:
  - vars: {{country: France}}
  - vars: {{country: Japan}}
    assert:
      - type: not-contains
        value: Atlantis
"""


def test_a_promptfoo_config_imports_and_runs(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(PROMPTFOO, encoding="utf-8")
    out = tmp_path / "out.json"
    result = run(capsys, str(path), "--output", str(out))
    assert result.code == 0, result.err
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["experiment"] == "capitals from promptfoo"
    assert [s["variant"] for s in document["summary"]] == [
        "small",
        "llama-3.3-70b-instruct-fp8-fast",
    ]
    assert [len(c["verdicts"]) for c in document["cells"]] == [2, 3, 2, 3]


def test_what_promptfoo_has_and_flarechat_does_not_is_named(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = (
        PROMPTFOO.replace(f"openai:chat:{LLAMA_70B}", "openai:chat:gpt-4o-mini").replace(
            "type: latency", "type: javascript"
        )
        + "scenarios: []\n"
    )
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(config, encoding="utf-8")
    result = run(capsys, str(path))
    assert result.code == 2
    lines = result.err.splitlines()
    assert any(":8: providers[1]:" in line and "gpt-4o-mini" in line for line in lines)
    assert any(
        ":13: defaultTest.assert[1].type:" in line
        and "assertion 'javascript' is not supported" in line
        for line in lines
    )
    assert any(":21: scenarios:" in line and "not supported" in line for line in lines)
    assert cli_env.state.requests == []


def _committed(db: Path, kind: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {kind}").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0
    finally:
        conn.close()


def _finished_questions(db: Path) -> list[str]:
    """The question of each reply the killed run committed (its text quotes it)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT result_json FROM experiment_cells WHERE kind = 'reply'")
        texts = [json.loads(row[0])["text"] for row in rows]
    finally:
        conn.close()
    return [re.search(r"What is the capital of \w+\?", t).group(0) for t in texts]  # type: ignore[union-attr]


def _spawn(path: Path, *extra: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "flarechat", "eval", str(path), "--poll-interval", "0.05", *extra]
    return subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ)
    )


def _kill_when(process: subprocess.Popen[bytes], ready: object) -> None:
    deadline = time.monotonic() + PATIENCE
    while not ready():  # type: ignore[operator]
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(PATIENCE)
    if process.stderr is not None:
        process.stderr.close()


@pytest.mark.slow
def test_sigkill_mid_live_run_resumes_without_resending_a_finished_cell(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    experiment = EXPERIMENT.replace("  - {type: llm-rubric", "  # - {type: llm-rubric")
    path = write(
        tmp_path,
        experiment,
        "country,expected\n"
        + "".join(
            f"{c},The capital of {c}\n" for c in ("France", "Japan", "Peru", "Chad", "Fiji", "Oman")
        ),
    )
    cli_env.state.set_tokens_per_second(60)  # each reply takes a while: the kill lands mid-run
    db = default_path()
    process = _spawn(path, "--variant", "small")
    _kill_when(process, lambda: _committed(db, "experiment_cells WHERE kind = 'reply'") >= 2)
    committed = _finished_questions(db)
    assert 2 <= len(committed) < 6  # killed mid-run
    cli_env.state.set_tokens_per_second(10_000)
    result = run(capsys, str(path), "--variant", "small")
    assert result.code == 0, result.err
    left = 6 - len(committed)
    assert f"{left} of 6 cells to send ({len(committed)} already finished)" in result.err
    every = [question for _, question in cell_prompts(cli_env)]
    assert set(every) == {f"What is the capital of {c}?" for c in COUNTRIES}
    for question in committed:  # a finished cell's request went out once, before the kill
        assert every.count(question) == 1, question


@pytest.mark.slow
def test_sigkill_mid_batch_run_polls_the_stored_batch(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path)
    cli_env.state.set_batch_pace(queued=100_000, running=0)  # it stays queued until the kill
    db = default_path()
    process = _spawn(path, "--variant", "big", "--batch")
    _kill_when(process, lambda: _committed(db, "experiment_batches") >= 1)
    assert cli_env.state.batch_count == 1
    cli_env.state.set_batch_pace(queued=0, running=0)
    result = run(capsys, str(path), "--variant", "big", "--batch")
    assert result.code == 0, result.err
    assert cli_env.state.batch_count == 1  # polled after the restart, never queued again
    assert len(cell_prompts(cli_env)) == 0  # and no cell went live instead

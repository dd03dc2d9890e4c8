"""The issue's scale: 200 cases x 3 variants with mixed assertions (a judge and a similarity
check among them), live and as batches through `flarechat eval`, with identical verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarechat.emulator.server import EmulatorServer
from support.cli import point_at, run_cli

TOKEN = "scale-secret-token-0a9b8c7d6e5f4a3b2c"
MODELS = (
    "@cf/meta/llama-3.1-8b-instruct-fast",
    "@cf/meta/llama-3.3-70b-instruct-fp8-fast",  # the only one of the three that batches
    "@cf/mistralai/mistral-small-3.1-24b-instruct",
)
CASES = 200


def experiment(folder: Path) -> Path:
    rows = "".join(f"Land {i},The capital of Land {i}\n" for i in range(CASES))
    (folder / "cases.csv").write_text("country,expected\n" + rows, encoding="utf-8")
    variants = "".join(
        f'  - model: "{m}"\n    prompt: "What is the capital of {{{{country}}}}?"\n'
        "    params: {max_tokens: 32, temperature: 0}\n"
        for m in MODELS
    )
    text = (
        "name: scale\nthreshold: 0.9\nvariants:\n" + variants + "cases: cases.csv\nassert:\n"
        '  - {type: icontains, value: "{{country}}", weight: 2}\n'
        "  - {type: not-contains, value: Atlantis}\n"
        "  - {type: length, min: 20, max: 4000}\n"
        "  - {type: regex, value: 'capital of Land (1|2)'}\n"
        '  - {type: llm-rubric, value: "asked capital {{country}}", threshold: 0.6}\n'
        '  - {type: similar, value: "{{expected}}", threshold: 0.3}\n'
    )
    path = folder / "scale.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
def test_200_cases_by_3_variants_live_and_batched_agree(
    emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    point_at(emulator, monkeypatch, token=TOKEN)
    emulator.state.set_tokens_per_second(1_000_000)
    path = experiment(tmp_path)
    live_out, batch_out = tmp_path / "live.json", tmp_path / "batch.json"
    live = run_cli(capsys, "eval", str(path), "--output", str(live_out), token=TOKEN)
    batch = run_cli(
        capsys,
        "eval",
        str(path),
        "--batch",
        "--rerun",
        "--poll-interval",
        "0",
        "--output",
        str(batch_out),
        token=TOKEN,
    )
    assert live.code == batch.code == 1  # a case the regex fails scores 6/7, under 0.9
    live_cells = json.loads(live_out.read_text(encoding="utf-8"))["cells"]
    batch_cells = json.loads(batch_out.read_text(encoding="utf-8"))["cells"]
    assert len(live_cells) == len(batch_cells) == CASES * len(MODELS)

    def verdicts(cells: list[dict[str, object]]) -> dict[object, object]:
        return {c["id"]: (c["passed"], c["score"]) for c in cells}

    assert verdicts(batch_cells) == verdicts(live_cells)
    assert {c["status"] for c in batch_cells} == {"done"}
    modes = {(c["model"], c["mode"]) for c in batch_cells}
    assert modes == {(MODELS[0], "live"), (MODELS[1], "batch"), (MODELS[2], "live")}
    # the regex decides: Land 1, 2, 10-29 and 100-199 pass, for each of the three models
    passing = sum(1 for i in range(CASES) if str(i).startswith(("1", "2")))
    assert sum(1 for c in live_cells if c["passed"]) == passing * len(MODELS)
    assert emulator.state.batch_count == 1

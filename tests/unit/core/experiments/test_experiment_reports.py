"""Reports from a run's results: the Wilson interval, percentiles, and files a parser reads."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from flarechat.api.config import ChatMessage
from flarechat.core.connect import build_request
from flarechat.core.experiments import reports
from flarechat.core.experiments.assertions import Observation, Verdict
from flarechat.core.experiments.budget import CellCost, Forecast, parse_budget
from flarechat.core.experiments.runner import Cell, CellResult, RunResult
from flarechat.core.experiments.spec import Case, Experiment, Variant

VARIANT = Variant("v", "@cf/meta/llama-3.1-8b-instruct-fast", "Say {{word}}")
CASES = tuple(Case({"word": w}) for w in ("a", "b", "c", "d"))
EXPERIMENT = Experiment("demo", (VARIANT,), CASES, threshold=1.0)
COST = CellCost(1, 1, None)


def cell(index: int) -> Cell:
    values = dict(CASES[index].vars)
    request = build_request(model=VARIANT.model, history=[ChatMessage("user", "x")])
    return Cell(VARIANT, index, CASES[index], 0, request, f"k{index}", values, COST)


def result() -> RunResult:
    ok = Verdict("contains", True, 1.0, "contains it")
    bad = Verdict("contains", False, 0.0, "missing 'z'")
    results = [
        CellResult(
            cell(0), "done", "live", Observation("fine", total_ms=100.0, usd=0.01), (ok,), 1.0, True
        ),
        CellResult(
            cell(1),
            "done",
            "live",
            Observation("bell \x07 x", total_ms=300.0),
            (ok, bad),
            0.5,
            False,
        ),
        CellResult(cell(2), "failed", "live", error="capacity"),
        CellResult(cell(3), "not_sent", "live"),
    ]
    forecast = Forecast(4, 4, 0, 4, 4, 0.0, 0.0)
    return RunResult("run-1", EXPERIMENT, results, "budget", forecast, notes=["note"])


def test_wilson_interval() -> None:
    assert reports.wilson(0, 0) == (0.0, 1.0)
    low, high = reports.wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert reports.wilson(10, 10)[1] == pytest.approx(1.0)


def test_the_summary_counts_graded_cells_only() -> None:
    (summary,) = reports.summarise(result())
    assert (summary.cells, summary.graded, summary.passed) == (4, 2, 1)
    assert summary.mean_score == 0.75
    assert (summary.p50_ms, summary.p95_ms) == (100.0, 300.0)
    assert summary.usd == 0.01
    assert "1/2 (50%)" in reports.summary_table(result())


def test_junit_reads_back_with_every_kind_of_outcome(tmp_path: Path) -> None:
    path = tmp_path / "out.xml"
    reports.write_output(result(), path)
    (suite,) = list(JUnitXml.fromfile(str(path)))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 1, 1)
    outcomes = [type(c.result[0]) if c.result else None for c in suite]
    assert outcomes == [None, Failure, Error, Skipped]
    failure = list(suite)[1].result[0]
    assert "missing 'z'" in (failure.message or "")
    assert "\ufffd" in path.read_text(encoding="utf-8")  # the bell could not be XML


def test_csv_has_a_row_per_cell_with_each_verdict() -> None:
    rows = list(csv.DictReader(io.StringIO(reports.to_csv(result()))))
    assert [r["status"] for r in rows] == ["done", "done", "failed", "not_sent"]
    assert rows[1]["word"] == "b"
    assert rows[1]["prompt"] == "Say b"
    assert (rows[1]["assert2_type"], rows[1]["assert2_passed"]) == ("contains", "False")
    assert rows[2]["error"] == "capacity"


def test_an_unknown_output_suffix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.json, \.csv, \.xml, \.html"):
        reports.render(result(), tmp_path / "out.pdf")


@pytest.mark.parametrize(
    ("text", "neurons", "usd"),
    [("500", 500.0, None), ("500n", 500.0, None), ("2 neurons", 2.0, None), ("$0.05", None, 0.05)],
)
def test_budgets(text: str, neurons: float | None, usd: float | None) -> None:
    budget = parse_budget(text)
    assert (budget.neurons, budget.usd) == (neurons, usd)


def test_a_bad_budget_says_what_is_meant() -> None:
    with pytest.raises(ValueError, match="give neurons"):
        parse_budget("lots")


def test_repeats_show_how_stable_each_case_is() -> None:
    from dataclasses import replace

    ok = Verdict("contains", True, 1.0, "contains it")
    bad = Verdict("contains", False, 0.0, "missing 'z'")
    seen = Observation("x")
    results = [
        CellResult(replace(cell(0), repeat=0), "done", "live", seen, (ok,), 1.0, True),
        CellResult(replace(cell(0), repeat=1), "done", "live", seen, (bad,), 0.5, False),
        CellResult(replace(cell(1), repeat=0), "done", "live", seen, (ok,), 1.0, True),
        CellResult(replace(cell(1), repeat=1), "done", "live", seen, (ok,), 1.0, True),
    ]
    run = replace(result(), results=results, status="done")
    (summary,) = reports.summarise(run)
    assert summary.stable == 0.5  # case 1 agreed with itself, case 0 did not
    assert summary.spread == pytest.approx(0.125)  # (0.25 + 0) / 2
    assert "stable" in reports.summary_table(run)
    assert "stable" not in reports.summary_table(result())

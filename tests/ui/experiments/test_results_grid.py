"""The results grid against a live run on the emulator: the verdicts the core gives, filled
as cells finish, a summary row from reports.summarise, the filters and a cell's detail."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import Connection, Secret
from flarechat.api.retry import RetryPolicy
from flarechat.core.experiments import reports
from flarechat.core.experiments.budget import Forecast
from flarechat.core.experiments.runner import CellFinished, ExperimentRunner, RunEvent, RunResult
from flarechat.core.experiments.spec import AssertionSpec, Case, Experiment, Variant
from flarechat.core.store import ExperimentStore
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN
from flarechat.ui.experiments.grid import RESULT_ROLE, summary_text, verdict_text
from flarechat.ui.experiments.view import ResultsView

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

pytestmark = pytest.mark.asyncio

MODELS = ("@cf/meta/llama-3.1-8b-instruct-fast", "@cf/meta/llama-3.3-70b-instruct-fp8-fast")
COUNTRIES = ("France", "Japan", "Peru")


def spec() -> Experiment:
    """The emulator's reply quotes the question: {{country}} is in it; "Paris" is only in one."""
    return Experiment(
        name="capitals",
        variants=tuple(
            Variant(
                m.rsplit("/", 1)[-1],
                m,
                "What is the capital of {{country}}?",
                params={"max_tokens": 24},
            )
            for m in MODELS
        ),
        cases=tuple(Case({"country": c}) for c in COUNTRIES),
        asserts=(
            AssertionSpec("icontains", "{{country}}"),
            AssertionSpec("icontains", "France", weight=3),
        ),
        threshold=0.75,
    )


@pytest_asyncio.fixture
async def client() -> AsyncIterator[WorkersAIClient]:
    async with WorkersAIClient() as made:
        yield made


async def test_a_live_run_fills_the_grid_with_the_cores_verdicts(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret(DEMO_TOKEN),
        api_base=emulator.api_base,
        gateway_base=emulator.gateway_base,
    )
    experiment = spec()
    with ExperimentStore(tmp_path / "flarechat.sqlite3") as store:
        start = RunResult("", experiment, [], "done", Forecast(0, 0, 0, 0, 0, 0.0, 0.0))
        view = ResultsView(start)
        seen: list[int] = []

        def on_event(event: RunEvent) -> None:
            if isinstance(event, CellFinished):
                view.model.add(event.result)
                seen.append(event.finished)

        runner = ExperimentRunner(
            experiment,
            client=client,
            conn=conn,
            store=store,
            policy=RetryPolicy(),
            on_event=on_event,
        )
        result = await runner.run()
    assert result.status == "done"
    assert len(seen) == 6
    model = view.model
    for r in result.results:
        row = r.cell.case_index
        column = [v.name for v in experiment.variants].index(r.cell.variant.name)
        shown = model.index(row, column)
        assert shown.data() == verdict_text(r)
        assert shown.data().startswith("PASS" if r.passed else "FAIL")
    # France passes in both variants, Japan and Peru fail in both
    assert [model.index(i, 0).data()[:4] for i in range(3)] == ["PASS", "FAIL", "FAIL"]
    summaries = reports.summarise(result)
    assert [model.index(model.summary_row, c).data() for c in range(2)] == [
        summary_text(s) for s in summaries
    ]
    assert "33%" in model.index(model.summary_row, 0).data()

    view.failed_only.setChecked(True)
    assert view.filter.rowCount() == 3  # Japan, Peru, and the summary row
    view.query.setText("peru")
    assert view.filter.rowCount() == 2
    assert view.filter.index(0, 0).data(RESULT_ROLE).cell.values["country"] == "Peru"
    view.failed_only.setChecked(False)
    view.query.setText("")
    assert view.filter.rowCount() == 4

    dialog = view.open_cell(view.filter.index(1, 1))
    assert dialog is not None
    text = dialog.text.toPlainText()
    failed = model.index(1, 1).data(RESULT_ROLE)
    assert failed.observation.text in text
    assert "FAIL icontains" in text
    assert "PASS icontains" in text
    for verdict in failed.verdicts:
        assert verdict.reason in text

    shots = tmp_path  # the look is checked by hand from a copy; see the report
    view.resize(900, 260)
    view.grab().save(str(shots / "grid-light.png"))
    dialog.grab().save(str(shots / "grid-detail-light.png"))

"""The runner against the emulator over loopback HTTP, with a real SQLite file: live and batch
cells, every finished cell committed, resume and reuse without re-sending, the budget, 3036."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio
from experiment_helpers import (
    LLAMA_8B,
    LLAMA_70B,
    catalogue,
    chat_prompts,
    emulator_conn,
    experiment,
    open_store,
    run_bodies,
    runner,
)

from flarechat.api.client import WorkersAIClient
from flarechat.core.experiments.budget import Budget
from flarechat.core.experiments.runner import (
    BatchChanged,
    Cell,
    CellFinished,
    RunEvent,
    RunNote,
    RunOptions,
    RunResult,
)
from flarechat.core.experiments.spec import ExperimentError

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

NOW_POLL = RunOptions(batch=True, poll_interval=0.0)


@pytest_asyncio.fixture
async def client() -> AsyncIterator[WorkersAIClient]:
    async with WorkersAIClient() as made:
        yield made


def verdicts(result: RunResult) -> dict[str, tuple[bool | None, float | None]]:
    return {r.cell.id: (r.passed, r.score) for r in result.results}


def replies(emulator: EmulatorServer) -> list[str]:
    """Prompts of the cells' own chat requests (not the judge's)."""
    return [p for p in chat_prompts(emulator) if p.startswith("What is the capital")]


@pytest.mark.asyncio
async def test_a_live_run_grades_every_cell_and_commits_it(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment()
    with open_store(tmp_path) as store:
        result = await runner(spec, client=client, conn=conn, store=store, models=models).run()
        assert result.status == "done"
        assert len(result.results) == 6
        assert all(r.status == "done" and r.mode == "live" for r in result.results)
        first = result.results[0]
        assert first.observation is not None
        assert "What is the capital of France?" in first.observation.text
        by_type = {v.type: v for v in first.verdicts}
        assert set(by_type) == {
            "icontains",
            "not-contains",
            "length",
            "latency",
            "llm-rubric",
            "similar",
        }
        assert by_type["icontains"].passed
        assert by_type["llm-rubric"].reason  # the judge's reason is kept
        assert 0.0 < by_type["similar"].score <= 1.0
        assert first.observation.ttft_ms is not None
        assert first.observation.neurons is not None
        assert first.observation.neurons > 0
        # 6 replies, 6 grades, 6 pairs of embeddings: every one committed under its key
        assert store.cell_count(result.run_id) == 18
        (run,) = store.runs("capitals")
        assert (run.status, run.mode, run.summary) == ("done", "live", {"cells": 6, "passed": 6})
    assert len(replies(emulator)) == 6


@pytest.mark.asyncio
async def test_a_failing_assertion_fails_its_case(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    from dataclasses import replace

    from flarechat.core.experiments.spec import AssertionSpec

    conn = emulator_conn(emulator)
    base = experiment(models=(LLAMA_8B,), cases=2, judge=False, similar=False)
    spec = replace(base, asserts=(*base.asserts, AssertionSpec("contains", "Atlantis", weight=5)))
    with open_store(tmp_path) as store:
        result = await runner(spec, client=client, conn=conn, store=store, models={}).run()
    assert [r.passed for r in result.results] == [False, False]
    assert not result.all_passed
    assert result.results[0].score == pytest.approx(5 / 10)


@pytest.mark.asyncio
async def test_a_rerun_sends_nothing_for_finished_cells_unless_asked(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment()
    with open_store(tmp_path) as store:
        first = await runner(spec, client=client, conn=conn, store=store, models=models).run()
        sent = len(run_bodies(emulator))
        again = await runner(spec, client=client, conn=conn, store=store, models=models).run()
        assert len(run_bodies(emulator)) == sent  # not one request more
        assert all(r.status == "reused" for r in again.results)
        assert verdicts(again) == verdicts(first)
        assert again.forecast.to_send == 0
        fresh = runner(spec, client=client, conn=conn, store=store, models=models)
        await fresh.run(RunOptions(rerun=True))
    assert len(replies(emulator)) == 12


def cell_requests(emulator: EmulatorServer) -> list[tuple[str, str]]:
    """(path, question) of every cell's own chat request (judge requests left out)."""
    return [
        (b["path"], str(b["messages"][-1]["content"]))
        for b in run_bodies(emulator)
        if isinstance(b.get("messages"), list)
        and str(b["messages"][-1]["content"]).startswith("What is the capital")
    ]


@pytest.mark.asyncio
async def test_a_run_cancelled_mid_way_resumes_without_resending_a_finished_cell(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(cases=5)
    finished: list[Cell] = []
    task: asyncio.Task[RunResult] | None = None

    def on_event(event: RunEvent) -> None:
        if isinstance(event, CellFinished):
            finished.append(event.result.cell)
            if len(finished) == 3 and task is not None:
                task.cancel()

    with open_store(tmp_path) as store:
        made = runner(spec, client=client, conn=conn, store=store, models=models, on_event=on_event)
        cells = made.plan()
        task = asyncio.create_task(made.run())
        with pytest.raises(asyncio.CancelledError):
            await task
        (run,) = store.runs()
        assert run.status == "cancelled"
        replies_kept = len(store.cells(c.key for c in cells))
    before = cell_requests(emulator)
    judged_before = len(chat_prompts(emulator)) - len(before)
    assert replies_kept >= 3
    with open_store(tmp_path) as store:  # a new process would open the file again
        resumed = await runner(spec, client=client, conn=conn, store=store, models=models).run()
    assert resumed.status == "done"
    assert all(r.passed for r in resumed.results)
    every = cell_requests(emulator)
    # only the cells without a committed reply were sent again, each once
    assert len(every) == len(before) + (len(cells) - replies_kept)
    assert len(set(every)) == len(cells)
    for cell in finished[:3]:
        path = f"/ai/run/{cell.variant.model}"
        sent = [q for p, q in every if p.endswith(path) and q == cell.prompt]
        assert len(sent) == 1, cell.id
    # the three graded cells were not graded again: 10 judge requests in all, at most
    judged = len(chat_prompts(emulator)) - len(every)
    assert judged <= len(cells) + (judged_before - 3)


@pytest.mark.asyncio
async def test_batch_and_live_give_identical_verdicts_and_a_model_without_batch_runs_live(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment()
    (tmp_path / "live").mkdir()
    with open_store(tmp_path / "live") as store:
        live = await runner(spec, client=client, conn=conn, store=store, models=models).run()
    events: list[RunEvent] = []
    (tmp_path / "batch").mkdir()
    emulator.state.set_batch_pace(queued=1, running=1)
    with open_store(tmp_path / "batch") as store:
        made = runner(
            spec, client=client, conn=conn, store=store, models=models, on_event=events.append
        )
        batch = await made.run(NOW_POLL)
        assert store.pending_batches() == []
    assert verdicts(batch) == verdicts(live)
    modes = {r.cell.variant.model: r.mode for r in batch.results}
    assert modes == {LLAMA_70B: "batch", LLAMA_8B: "live"}
    assert any(f"{LLAMA_8B} does not take the Batch API" in n for n in batch.notes)
    statuses = [e.status for e in events if isinstance(e, BatchChanged)]
    assert statuses == ["queued", "running", "done"]
    assert emulator.state.batch_count == 1
    latency = next(
        v for r in batch.results if r.mode == "batch" for v in r.verdicts if v.type == "latency"
    )
    assert (latency.weight, latency.reason) == (0.0, "not measured for a batch reply")


@pytest.mark.asyncio
async def test_a_pending_batch_is_polled_after_a_restart_not_sent_again(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(models=(LLAMA_70B,), judge=False)
    emulator.state.set_batch_pace(queued=2, running=0)
    task: asyncio.Task[RunResult] | None = None

    def on_event(event: RunEvent) -> None:
        if isinstance(event, BatchChanged) and event.status == "queued" and task is not None:
            task.cancel()  # as if the app quit right after queueing

    with open_store(tmp_path) as store:
        made = runner(spec, client=client, conn=conn, store=store, models=models, on_event=on_event)
        task = asyncio.create_task(made.run(NOW_POLL))
        with pytest.raises(asyncio.CancelledError):
            await task
        (pending,) = store.pending_batches()
        assert pending.model == LLAMA_70B
        assert len(pending.keys) == 3
    assert emulator.state.batch_count == 1
    with open_store(tmp_path) as store:
        resumed = await runner(spec, client=client, conn=conn, store=store, models=models).run(
            NOW_POLL
        )
        assert store.pending_batches() == []
    assert emulator.state.batch_count == 1  # polled, never queued again
    assert resumed.status == "done"
    assert all(r.passed for r in resumed.results)


@pytest.mark.asyncio
async def test_a_failed_batch_item_fails_alone(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(models=(LLAMA_70B,), judge=False, similar=False)
    with open_store(tmp_path) as store:
        cells = runner(spec, client=client, conn=conn, store=store, models=models).plan()
        emulator.state.fail_batch_items([cells[1].key], code=3040, status=429)
        result = await runner(spec, client=client, conn=conn, store=store, models=models).run(
            NOW_POLL
        )
    assert [r.status for r in result.results] == ["done", "failed", "done"]
    assert result.results[1].error
    assert not result.all_passed


@pytest.mark.asyncio
async def test_the_forecast_is_counted_from_catalogue_prices(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    from flarechat.core import ledger
    from flarechat.core.meters import MESSAGE_OVERHEAD_TOKENS, estimate_tokens

    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(models=(LLAMA_8B,), cases=2, judge=False, similar=False)
    with open_store(tmp_path) as store:
        made = runner(spec, client=client, conn=conn, store=store, models=models)
        forecast = made.estimate(made.plan())
    info = models[LLAMA_8B]
    prompts = ["What is the capital of France?", "What is the capital of Japan?"]
    prompt_tokens = sum(estimate_tokens(p) + 2 * MESSAGE_OVERHEAD_TOKENS for p in prompts)
    assert (forecast.cells, forecast.to_send, forecast.reused) == (2, 2, 0)
    assert forecast.prompt_tokens == prompt_tokens
    assert forecast.completion_tokens == 2 * 24
    assert info.price_input_per_m is not None
    assert info.price_output_per_m is not None
    usd = (prompt_tokens * info.price_input_per_m + 48 * info.price_output_per_m) / 1e6
    assert forecast.usd == pytest.approx(usd)
    assert forecast.neurons == pytest.approx(usd / ledger.USD_PER_NEURON)
    assert forecast.free_share == pytest.approx(forecast.neurons / 10_000)
    assert "2 of 2 cells to send" in forecast.text()


@pytest.mark.asyncio
async def test_a_budget_cap_stops_the_run_before_it_is_crossed(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(models=(LLAMA_8B,), cases=5, judge=False, similar=False)
    with open_store(tmp_path) as store:
        made = runner(spec, client=client, conn=conn, store=store, models=models)
        per_cell = made.estimate(made.plan()).neurons / 5
        cap = Budget(neurons=per_cell * 2.5)
        result = await made.run(RunOptions(budget=cap))
        (run,) = store.runs()
    assert result.status == "budget"
    assert [r.status for r in result.results] == [
        "done",
        "done",
        "not_sent",
        "not_sent",
        "not_sent",
    ]
    assert result.spent_neurons <= cap.neurons  # type: ignore[operator]
    assert len(replies(emulator)) == 2
    assert "Stopped before the budget" in result.notes[-1]
    assert run.status == "budget"


@pytest.mark.asyncio
async def test_3036_mid_run_stops_cleanly_with_the_reset_time(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    spec = experiment(models=(LLAMA_8B,), cases=5, judge=False, similar=False)
    notes: list[str] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, CellFinished) and event.finished == 2:
            emulator.state.fail_next(5, code=3036, status=429)
        if isinstance(event, RunNote):
            notes.append(event.text)

    with open_store(tmp_path) as store:
        made = runner(spec, client=client, conn=conn, store=store, models={}, on_event=on_event)
        result = await made.run()
        kept = store.cell_count(result.run_id)
    assert result.status == "daily_limit"
    assert [r.status for r in result.results][:2] == ["done", "done"]
    assert all(r.status == "not_sent" for r in result.results[3:])
    assert kept == 2
    assert result.resets_at is not None
    assert result.resets_at.strftime("%H:%M UTC") in notes[-1]
    assert "resets at" in result.notes[-1]
    assert len(replies(emulator)) == 3  # two answered, one refused; none after it


@pytest.mark.asyncio
async def test_an_unknown_variant_is_refused_before_anything_is_sent(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    with open_store(tmp_path) as store:
        made = runner(experiment(), client=client, conn=conn, store=store, models={})
        with pytest.raises(ExperimentError) as caught:
            await made.run(RunOptions(variants=("nope",)))
    assert "no variant 'nope'" in str(caught.value)
    assert run_bodies(emulator) == []


@pytest.mark.asyncio
async def test_repeats_and_variant_choice(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    spec = experiment(cases=2, judge=False, similar=False)
    with open_store(tmp_path) as store:
        made = runner(spec, client=client, conn=conn, store=store, models={})
        result = await made.run(RunOptions(repeat=3, variants=("llama-3.1-8b-instruct-fast",)))
    ids = [r.cell.id for r in result.results]
    assert ids == [f"llama-3.1-8b-instruct-fast/{c}/{r}" for c in range(2) for r in range(3)]
    assert len(replies(emulator)) == 6  # each repeat is sent: its key has its number


@pytest.mark.asyncio
async def test_a_request_asked_twice_in_one_run_is_sent_once(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    from dataclasses import replace

    conn = emulator_conn(emulator)
    base = experiment(models=(LLAMA_8B,), cases=2, judge=False, similar=False)
    twin = replace(base.variants[0], name="the same again")
    spec = replace(base, variants=(base.variants[0], twin))
    with open_store(tmp_path) as store:
        result = await runner(spec, client=client, conn=conn, store=store, models={}).run()
    assert [r.status for r in result.results] == ["done", "done", "reused", "reused"]
    assert (
        verdicts(result)["the same again/0/0"] == verdicts(result)["llama-3.1-8b-instruct-fast/0/0"]
    )
    assert len(replies(emulator)) == 2


@pytest.mark.asyncio
async def test_reject_if_busy_rides_on_live_cells_only(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    from experiment_helpers import FAST

    from flarechat.core.experiments.runner import ExperimentRunner
    from flarechat.core.session.gate import ModelGate

    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(cases=1, judge=False, similar=False)
    with open_store(tmp_path) as store:
        made = ExperimentRunner(
            spec,
            client=client,
            conn=conn,
            store=store,
            policy=FAST,
            models=models,
            gate=ModelGate(per_model=1),
            reject_if_busy=True,
        )
        result = await made.run(NOW_POLL)
    assert result.status == "done"
    bodies = run_bodies(emulator)
    live = [b for b in bodies if "messages" in b]
    (submit,) = [b for b in bodies if "requests" in b]
    assert [b["options"] for b in live] == [{"rejectIfBusy": True}]
    assert all("options" not in item for item in submit["requests"])


@pytest.mark.asyncio
async def test_a_3040_before_the_first_token_is_retried_as_in_chat(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    spec = experiment(models=(LLAMA_8B,), cases=1, judge=False, similar=False)
    emulator.state.fail_next(1, code=3040, status=429, model=LLAMA_8B)
    with open_store(tmp_path) as store:
        result = await runner(spec, client=client, conn=conn, store=store, models={}).run()
    assert [r.status for r in result.results] == ["done"]
    assert len(replies(emulator)) == 2  # the refused attempt, then the answered one


@pytest.mark.asyncio
async def test_batches_are_split_under_the_payload_limit(
    emulator: EmulatorServer,
    client: WorkersAIClient,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flarechat.core.experiments import runner as runner_module

    conn = emulator_conn(emulator)
    models = await catalogue(client, conn)
    spec = experiment(models=(LLAMA_70B,), cases=5, judge=False, similar=False)
    monkeypatch.setattr(runner_module, "MAX_BATCH_BYTES", 600)  # a few items a batch
    events: list[RunEvent] = []
    with open_store(tmp_path) as store:
        made = runner(
            spec, client=client, conn=conn, store=store, models=models, on_event=events.append
        )
        result = await made.run(NOW_POLL)
    submits = [b for b in run_bodies(emulator) if "requests" in b]
    sizes = [len(b["requests"]) for b in submits]
    assert len(sizes) >= 2
    assert sum(sizes) == 5
    assert all(len(json.dumps(b["requests"])) < 600 for b in submits)
    assert emulator.state.batch_count == len(sizes)
    done = [e for e in events if isinstance(e, BatchChanged) and e.status == "done"]
    assert sorted(e.size for e in done) == sorted(sizes)
    assert all(r.status == "done" and r.mode == "batch" for r in result.results)


@pytest.mark.asyncio
async def test_another_accounts_cells_are_not_answered_from_these(
    emulator: EmulatorServer, client: WorkersAIClient, tmp_path: Path
) -> None:
    """A demo run's replies (the emulator's account) never answer a real account's cells."""
    from dataclasses import replace

    conn = emulator_conn(emulator)
    spec = experiment(models=(LLAMA_8B,), cases=2, judge=False, similar=False)
    with open_store(tmp_path) as store:
        first = runner(spec, client=client, conn=conn, store=store, models={})
        other = runner(
            spec, client=client, conn=replace(conn, account_id="f" * 32), store=store, models={}
        )
        assert {c.key for c in first.plan()}.isdisjoint(c.key for c in other.plan())
        await first.run()
        assert other.estimate(other.plan()).to_send == 2

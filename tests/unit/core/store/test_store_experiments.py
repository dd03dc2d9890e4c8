"""ExperimentStore: runs, finished cells and pending batches survive closing the file."""

from __future__ import annotations

from pathlib import Path

from flarechat.core.store import ChatStore, ExperimentStore, RunRecord


def test_cells_batches_and_runs_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "flarechat.sqlite3"
    with ExperimentStore(path, clock=lambda: 100.0) as store:
        store.start_run(RunRecord("r1", "capitals", "exp.yaml", {"a": 1}, "batch", "running", 1.0))
        store.save_cell("k1", run_id="r1", kind="reply", model="m", result={"text": "Paris"})
        store.save_batch("req-1", run_id="r1", model="m", keys=["k2", "k3"])
        store.save_batch("req-2", run_id="r1", model="m", keys=["k4"])
        store.end_batch("req-2", status="done")
    with ExperimentStore(path) as store:
        assert store.cells(["k1", "k9"]) == {"k1": {"text": "Paris"}}
        (pending,) = store.pending_batches()
        assert (pending.request_id, pending.keys, pending.submitted_at) == (
            "req-1",
            ("k2", "k3"),
            100.0,
        )
        store.finish_run("r1", status="done", note="ok", summary={"cells": 1})
        (run,) = store.runs("capitals")
        assert (run.status, run.note, run.summary, run.spec) == (
            "done",
            "ok",
            {"cells": 1},
            {"a": 1},
        )
        assert store.runs("other") == []
        assert store.cell_count("r1") == 1
    with ChatStore(path) as chat:  # the chat store opens the same file, tables and all
        assert chat.list_conversations() == []

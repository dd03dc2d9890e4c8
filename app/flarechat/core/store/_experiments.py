"""ExperimentStore: experiment runs, finished cells and pending batches in the chat database.

It shares the chat database file (one file to back up, one migration history) and opens it
through :class:`ChatStore`, so opening, migrating and refusing a too-new file work as for chat.
Every write is one transaction committed before the call returns: a cell saved is a cell kept,
whatever happens to the process next.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flarechat.core.store._chat import ChatStore

__all__ = ["BatchRecord", "ExperimentStore", "RunRecord"]

BATCH_PENDING = "pending"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of an experiment as stored: what ran, how, and how it ended."""

    id: str
    name: str
    source: str
    spec: Mapping[str, Any]
    mode: str
    status: str
    started_at: float
    finished_at: float | None = None
    note: str = ""
    summary: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """A batch queued on the Batch API: its request_id, model and the cell keys it carries."""

    request_id: str
    run_id: str
    model: str
    keys: tuple[str, ...]
    status: str
    submitted_at: float
    error: str | None = None


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class ExperimentStore:
    """Runs, cells and batches; synchronous (call it from a worker thread in the window)."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self._chat = ChatStore(path, clock=clock)
        self._clock = clock
        self.path = self._chat.path

    def close(self) -> None:
        self._chat.close()

    def __enter__(self) -> ExperimentStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------------------------

    def start_run(self, run: RunRecord) -> None:
        with self._chat.locked_write() as conn:
            conn.execute(
                "INSERT INTO experiment_runs (id, name, source, spec_json, mode, status, "
                "started_at, finished_at, note, summary_json) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    run.id,
                    run.name,
                    run.source,
                    _dumps(dict(run.spec)),
                    run.mode,
                    run.status,
                    run.started_at,
                    run.finished_at,
                    run.note,
                    None if run.summary is None else _dumps(dict(run.summary)),
                ),
            )

    def finish_run(
        self, run_id: str, *, status: str, note: str = "", summary: Mapping[str, Any] | None = None
    ) -> None:
        with self._chat.locked_write() as conn:
            conn.execute(
                "UPDATE experiment_runs SET status = ?, finished_at = ?, note = ?, "
                "summary_json = ? WHERE id = ?",
                (
                    status,
                    self._clock(),
                    note,
                    None if summary is None else _dumps(dict(summary)),
                    run_id,
                ),
            )

    def runs(self, name: str | None = None) -> list[RunRecord]:
        """Every run (of the experiment ``name``), oldest first."""
        query = "SELECT * FROM experiment_runs"
        args: tuple[str, ...] = ()
        if name is not None:
            query += " WHERE name = ?"
            args = (name,)
        rows = self._chat.locked_read(query + " ORDER BY started_at, rowid", args)
        return [
            RunRecord(
                id=row["id"],
                name=row["name"],
                source=row["source"],
                spec=json.loads(row["spec_json"]),
                mode=row["mode"],
                status=row["status"],
                started_at=row["started_at"],
                finished_at=row["finished_at"],
                note=row["note"],
                summary=None if row["summary_json"] is None else json.loads(row["summary_json"]),
            )
            for row in rows
        ]

    # -- cells ------------------------------------------------------------------------------

    def save_cell(
        self, key: str, *, run_id: str, kind: str, model: str, result: Mapping[str, Any]
    ) -> None:
        """Commit one finished cell (a reply, a grade, embeddings) under its request hash."""
        with self._chat.locked_write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO experiment_cells "
                "(key, run_id, kind, model, result_json, created_at) VALUES (?,?,?,?,?,?)",
                (key, run_id, kind, model, _dumps(dict(result)), self._clock()),
            )

    def cells(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The finished cells among ``keys``, by key."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._chat.locked_read(
                f"SELECT key, result_json FROM experiment_cells WHERE key IN ({marks})",
                tuple(chunk),
            )
            found.update({row["key"]: json.loads(row["result_json"]) for row in rows})
        return found

    def cell_count(self, run_id: str | None = None) -> int:
        query, args = "SELECT count(*) FROM experiment_cells", tuple[str, ...]()
        if run_id is not None:
            query, args = query + " WHERE run_id = ?", (run_id,)
        return int(self._chat.locked_read(query, args)[0][0])

    # -- batches ----------------------------------------------------------------------------

    def save_batch(self, request_id: str, *, run_id: str, model: str, keys: Sequence[str]) -> None:
        """Remember a queued batch at once: a restart polls it instead of sending it again."""
        with self._chat.locked_write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO experiment_batches "
                "(request_id, run_id, model, keys_json, status, submitted_at, error) "
                "VALUES (?,?,?,?,?,?,NULL)",
                (request_id, run_id, model, _dumps(list(keys)), BATCH_PENDING, self._clock()),
            )

    def end_batch(self, request_id: str, *, status: str, error: str | None = None) -> None:
        with self._chat.locked_write() as conn:
            conn.execute(
                "UPDATE experiment_batches SET status = ?, error = ? WHERE request_id = ?",
                (status, error, request_id),
            )

    def pending_batches(self) -> list[BatchRecord]:
        rows = self._chat.locked_read(
            "SELECT * FROM experiment_batches WHERE status = ? ORDER BY submitted_at, rowid",
            (BATCH_PENDING,),
        )
        return [
            BatchRecord(
                request_id=row["request_id"],
                run_id=row["run_id"],
                model=row["model"],
                keys=tuple(json.loads(row["keys_json"])),
                status=row["status"],
                submitted_at=row["submitted_at"],
                error=row["error"],
            )
            for row in rows
        ]

"""``flarechat eval FILE``: run an experiment without the window, for a terminal or CI.

The file (an experiment, or a promptfoo config) is read and checked whole first: a bad file
is reported by file, line and field and nothing is sent. Then the forecast, a progress bar on
stderr, the per-variant summary on stdout, the ``--output`` files, and an exit status that is
non-zero when any assertion failed (or a cell could not run), so a team can gate a change.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from flarechat.api.client import WorkersAIClient
from flarechat.api.errors import WorkersAIError
from flarechat.cli.args import EXIT_DAILY_LIMIT, EXIT_FAILED, EXIT_OK, EXIT_USAGE, exit_code_for
from flarechat.core.connect import Profile
from flarechat.core.experiments import promptfoo, reports
from flarechat.core.experiments.budget import Budget, parse_budget
from flarechat.core.experiments.loading import load_experiment
from flarechat.core.experiments.runner import (
    BatchChanged,
    CellFinished,
    ExperimentRunner,
    RunEvent,
    RunNote,
    RunOptions,
)
from flarechat.core.experiments.spec import Experiment, ExperimentError
from flarechat.core.store import ExperimentStore, StoreError, default_path
from flarechat.core.turn import RetryDecider

__all__ = ["Progress", "read_file", "run_eval"]

_BAR = 30
#: Without a terminal, a progress line each time this share more of the cells finished.
_LINE_STEP = 0.1
_PREFIX = "flarechat: eval: "


class Stream(Protocol):
    """Where output goes (``cli.terminal.TerminalStream``, or a plain text file)."""

    def write(self, text: str) -> int: ...
    def flush(self) -> None: ...
    def isatty(self) -> bool: ...


def read_file(path: Path) -> Experiment:
    """An experiment file, or a promptfoo config (by its name or its shape)."""
    if promptfoo.is_promptfoo(path):
        return promptfoo.load_promptfoo(path)
    return load_experiment(path)


class Progress:
    """The run's progress on stderr: a bar redrawn in place on a terminal, else a line per
    tenth of the cells; batch status changes and notes as their own lines."""

    def __init__(self, err: Stream, *, tty: bool) -> None:
        self._err = err
        self._tty = tty
        self._failed = 0
        self._next_line = _LINE_STEP
        self._bar_shown = False

    def __call__(self, event: RunEvent) -> None:
        if isinstance(event, CellFinished):
            if event.result.passed is False or event.result.status == "failed":
                self._failed += 1
            self._cell(event.finished, event.total)
        elif isinstance(event, BatchChanged):
            self.line(
                f"batch {event.request_id} ({event.size} cells, {event.model}): {event.status}"
            )
        elif isinstance(event, RunNote):
            self.line(event.text)

    def _cell(self, finished: int, total: int) -> None:
        text = f"{finished}/{total} cells · {self._failed} failed"
        if self._tty:
            filled = _BAR * finished // max(total, 1)
            self._err.write(f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {text}")
            self._err.flush()
            self._bar_shown = True
        elif finished >= total or finished / max(total, 1) >= self._next_line:
            self._err.write(f"{_PREFIX}{text}\n")
            while self._next_line <= finished / max(total, 1):
                self._next_line += _LINE_STEP

    def line(self, text: str) -> None:
        self.end()
        self._err.write(f"{_PREFIX}{text}\n")
        self._err.flush()

    def end(self) -> None:
        if self._bar_shown:
            self._err.write("\n")
            self._bar_shown = False


def _options(args: argparse.Namespace) -> RunOptions:
    budget: Budget | None = parse_budget(args.budget) if args.budget else None
    return RunOptions(
        batch=args.batch,
        budget=budget,
        repeat=args.repeat,
        variants=tuple(args.variant or ()),
        rerun=args.rerun,
        poll_interval=args.poll_interval,
    )


def _check_outputs(paths: list[Path]) -> list[str]:
    problems = []
    for path in paths:
        if path.suffix.lower() not in reports.OUTPUT_SUFFIXES:
            kinds = ", ".join(reports.OUTPUT_SUFFIXES)
            problems.append(f"--output {path}: the file must end in {kinds}")
        elif not path.parent.is_dir():
            problems.append(f"--output {path}: no folder {path.parent}")
    return problems


async def run_eval(
    args: argparse.Namespace,
    *,
    profile: Profile,
    policy: RetryDecider,
    out: Stream,
    err: Stream,
    client_factory: Callable[[], WorkersAIClient] = WorkersAIClient,
) -> int:
    """Run ``args.file``; returns the exit status."""
    outputs = [Path(p) for p in args.output or ()]
    try:
        options = _options(args)
    except ValueError as error:
        err.write(f"flarechat: --budget: {error}\n")
        return EXIT_USAGE
    problems = _check_outputs(outputs)
    try:
        experiment = read_file(Path(args.file))
    except ExperimentError as error:
        problems = [str(p) for p in error.problems] + problems
    if problems:
        for problem in problems:
            err.write(f"flarechat: {problem}\n")
        err.write("flarechat: nothing was sent.\n")
        return EXIT_USAGE
    progress = Progress(err, tty=err.isatty())
    try:
        store = ExperimentStore(default_path())
    except StoreError as error:
        err.write(f"flarechat: {error}\n")
        return EXIT_USAGE
    with contextlib.closing(store):
        async with client_factory() as client:
            try:
                models = {m.name: m for m in await client.list_models(profile.conn)}
            except WorkersAIError as error:
                err.write(f"flarechat: the model list could not be read: {error.message}\n")
                return exit_code_for(error)
            runner = ExperimentRunner(
                experiment,
                client=client,
                conn=profile.conn,
                store=store,
                policy=policy,
                models=models,
                gateway=profile.gateway,
                reject_if_busy=profile.reject_if_busy,
                on_event=progress,
            )
            try:
                runner.plan(options)
                result = await runner.run(options)
            except ExperimentError as error:
                for found in error.problems:
                    err.write(f"flarechat: {found}\n")
                err.write("flarechat: nothing was sent.\n")
                return EXIT_USAGE
            finally:
                progress.end()
    out.write(reports.to_json(result) if args.json else reports.summary_table(result))
    for path in outputs:
        try:
            reports.write_output(result, path)
        except OSError as error:
            err.write(f"flarechat: --output {path}: {error.strerror or error}\n")
            return EXIT_USAGE
        progress.line(f"wrote {path}")
    if result.status == "daily_limit":
        return EXIT_DAILY_LIMIT
    return EXIT_OK if result.all_passed else EXIT_FAILED

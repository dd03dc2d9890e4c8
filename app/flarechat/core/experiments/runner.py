"""Running an experiment: every cell live or on the Batch API, each committed as it lands.

A *cell* is one variant x one case x one repeat. Its request is built by the chat's own
builder (``core.connect.build_request``) and identified by the SHA-256 of the body that would
be sent (plus the repeat number and the account it is sent for): a cell whose key is
already in the store is reused, never sent again, so a run killed at any moment resumes
where it was, and a byte-identical request in another run costs nothing
(``RunOptions.rerun`` sends them anyway).

Live cells stream through the app's per-model gate (``core.session.gate``) with the chat's
retry rule (``core.turn.run_turn`` + the caller's ``RetryPolicy``: 3040 retried only before
the first token, Retry-After waited, *Reject if busy* sent as the settings say). Batch cells go
to Workers AI's Batch API for models whose catalogue entry says it takes them; the request_id
of each batch is stored before the first poll, so polling survives a restart. A model without
batch support runs live, and the run says so.

The judge (``llm-rubric``) and embeddings (``similar``) are requests like any other: cached
under their own keys, so a resumed run re-grades nothing it graded.

A budget cap stops the run before a cell that could cross it is sent; 3036/4006 (the daily
free allocation) stops it at once, keeping every finished cell, with the reset time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, Protocol

from flarechat.api._decode import decode_complete
from flarechat.api._routes import build_chat_request
from flarechat.api.batch import MAX_BATCH_BYTES, BatchPoll, BatchRequestUnknown, BatchTicket
from flarechat.api.config import (
    DEFAULT_MAX_TOKENS,
    ChatMessage,
    ChatRequest,
    Connection,
    Endpoint,
    GatewayOptions,
    SamplingParams,
)
from flarechat.api.errors import DailyAllocationExhausted, WorkersAIError
from flarechat.api.models import ModelInfo
from flarechat.core import ledger
from flarechat.core.connect import build_request, capabilities_from
from flarechat.core.conversation import new_id
from flarechat.core.experiments import assertions as checks
from flarechat.core.experiments.budget import Budget, CellCost, Forecast, cell_cost, forecast
from flarechat.core.experiments.loading import SAMPLING_KEYS
from flarechat.core.experiments.spec import (
    AssertionSpec,
    Case,
    Experiment,
    ExperimentError,
    Problem,
    Variant,
)
from flarechat.core.lab.variables import fill
from flarechat.core.meters import reply_neurons
from flarechat.core.session import records
from flarechat.core.session.gate import GatedStreamer, ModelGate
from flarechat.core.store import ExperimentStore, RunRecord
from flarechat.core.turn import ChatStreamer, RetryDecider, TurnState, fail, fold, run_turn

__all__ = [
    "BatchChanged",
    "Cell",
    "CellFinished",
    "CellResult",
    "ExperimentClient",
    "ExperimentRunner",
    "RunEvent",
    "RunNote",
    "RunOptions",
    "RunResult",
    "RunStatus",
    "judge_prompt",
]

Mode = Literal["live", "batch"]
RunStatus = Literal["done", "budget", "daily_limit", "cancelled"]
CellStatus = Literal["done", "reused", "failed", "not_sent"]

#: Seconds between polls of a pending batch.
DEFAULT_POLL_INTERVAL = 5.0
#: A batch's share of the 10 MB limit we fill (the envelope and item indexes need room).
_BATCH_FILL = 0.9
_MAX_BATCH_ITEMS = 1000
_JUDGE_MAX_TOKENS = 256
_MS = 1000.0
_KIND_REPLY, _KIND_JUDGE, _KIND_EMBED = "reply", "judge", "embed"
#: Body fields that say how a request is delivered, not what it asks (rejectIfBusy rides in
#: ``options``; the Batch API is not to get it).
_NOT_HASHED = frozenset({"stream", "options"})
_BATCH_DONE, _BATCH_UNKNOWN, _BATCH_FAILED = "done", "unknown", "failed"
_EXPECTED = "expected"
_JUDGE_INSTRUCTIONS = (
    "Grade the output against the rubric. Answer with one JSON object only: "
    '{"score": <0 to 1>, "pass": <true|false>, "reason": "<one sentence>"}.'
)


class ExperimentClient(ChatStreamer, Protocol):
    """The client calls a run makes (``flarechat.api.client.WorkersAIClient`` has them)."""

    async def submit_batch(
        self, conn: Connection, model: str, items: Sequence[Mapping[str, Any]]
    ) -> BatchTicket: ...

    async def poll_batch(self, conn: Connection, ticket: BatchTicket) -> BatchPoll: ...

    async def embed(
        self, conn: Connection, model: str, texts: Sequence[str]
    ) -> list[list[float]]: ...


@dataclass(frozen=True, slots=True)
class Cell:
    """One variant x case x repeat, with the request it sends and that request's key."""

    variant: Variant
    case_index: int
    case: Case
    repeat: int
    request: ChatRequest
    key: str
    #: the case's variables and ``expected``: what the prompt and assertions are filled with
    values: Mapping[str, str]
    cost: CellCost

    @property
    def id(self) -> str:
        return f"{self.variant.name}/{self.case_index}/{self.repeat}"

    @property
    def prompt(self) -> str:
        return fill(self.variant.prompt, self.values)


@dataclass(frozen=True, slots=True)
class CellResult:
    """A cell's outcome: its reply's observation and each assertion's verdict, or why not."""

    cell: Cell
    status: CellStatus
    mode: Mode
    observation: checks.Observation | None = None
    verdicts: tuple[checks.Verdict, ...] = ()
    score: float | None = None
    passed: bool | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CellFinished:
    result: CellResult
    finished: int
    total: int


@dataclass(frozen=True, slots=True)
class BatchChanged:
    """A batch's status moved: queued, running, done, failed (or unknown to the server)."""

    request_id: str
    model: str
    status: str
    size: int


@dataclass(frozen=True, slots=True)
class RunNote:
    text: str


RunEvent = CellFinished | BatchChanged | RunNote


@dataclass(frozen=True, slots=True)
class RunOptions:
    batch: bool = False
    budget: Budget | None = None
    #: repeats per cell (None: the experiment's own)
    repeat: int | None = None
    #: run only these variants (empty: all)
    variants: tuple[str, ...] = ()
    #: send cells again even when a byte-identical request already finished
    rerun: bool = False
    poll_interval: float = DEFAULT_POLL_INTERVAL


@dataclass(slots=True)
class RunResult:
    """What a run did: every cell's result (in plan order), how it ended, what it cost."""

    run_id: str
    experiment: Experiment
    results: list[CellResult]
    status: RunStatus
    forecast: Forecast
    notes: list[str] = field(default_factory=list)
    spent_neurons: float = 0.0
    spent_usd: float = 0.0
    resets_at: datetime | None = None

    @property
    def all_passed(self) -> bool:
        """True when every cell ran and passed (what ``flarechat eval`` exits 0 for)."""
        return self.status == "done" and all(r.passed for r in self.results)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _key(kind: str, account: str, payload: object) -> str:
    """A request's key: its kind, the account it is sent for (the demo's replies never answer
    a real account's cells), and what it asks."""
    return hashlib.sha256(_dumps([kind, account, payload]).encode("utf-8")).hexdigest()


def _sampling(params: Mapping[str, Any]) -> SamplingParams:
    chosen = {k: params[k] for k in SAMPLING_KEYS if k in params}
    chosen.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
    return SamplingParams(**chosen)


def judge_prompt(rubric: str, output: str) -> str:
    """The grading prompt: the rubric and the output in their own sections."""
    return f"{_JUDGE_INSTRUCTIONS}\n\n<rubric>{rubric}</rubric>\n\n<output>{output}</output>"


def _grade(text: str) -> checks.Grade | None:
    """The judge's JSON answer read leniently (the first object in the text)."""
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char != "{":
            continue
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        score = value.get("score") if isinstance(value, dict) else None
        if isinstance(score, int | float) and not isinstance(score, bool):
            return checks.Grade(max(0.0, min(1.0, float(score))), str(value.get("reason", "")))
    return None


def _observation(record: Mapping[str, Any]) -> checks.Observation:
    calls = tuple(
        checks.ToolUse(str(c.get("name", "")), _arguments(c.get("arguments")))
        for c in record.get("tool_calls", [])
        if isinstance(c, Mapping)
    )
    return checks.Observation(
        text=str(record.get("text", "")),
        ttft_ms=record.get("ttft_ms"),
        total_ms=record.get("total_ms"),
        prompt_tokens=record.get("prompt_tokens"),
        completion_tokens=record.get("completion_tokens"),
        neurons=record.get("neurons"),
        usd=record.get("usd"),
        tool_calls=calls,
    )


def _arguments(text: object) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _reply_record(state: TurnState, info: ModelInfo | None, *, mode: Mode) -> dict[str, Any]:
    """What is kept of a finished reply: its text and every figure an assertion reads."""
    usage = records.usage_record(state)
    meta = records.meta_record(state)
    charge = ledger.charge(usage, meta, info)
    neurons = None if charge is None else charge.neurons
    if reply_neurons(usage, meta) is None and charge is not None and charge.cost is not None:
        neurons = charge.cost / ledger.USD_PER_NEURON  # a batch item: priced, not billed alone

    def ms(seconds: float | None) -> float | None:  # a batch reply has no timings of its own
        return None if seconds is None or mode == "batch" else round(seconds * _MS, 3)

    return {
        "mode": mode,
        "text": state.text,
        "reasoning": state.reasoning,
        "finish_reason": state.finish_reason,
        "ttft_ms": ms(state.ttft),
        "total_ms": ms(state.duration),
        "prompt_tokens": (usage or {}).get("prompt_tokens"),
        "completion_tokens": state.completion_tokens,
        "neurons": neurons,
        "usd": None if charge is None else charge.cost,
        "tool_calls": [{"name": c.name, "arguments": c.arguments_json} for c in state.calls],
    }


class _Stop(Exception):
    """Raised inside a worker to end the run (budget, daily limit)."""


class ExperimentRunner:
    """Plans an experiment's cells and runs them; one runner runs one experiment."""

    def __init__(
        self,
        experiment: Experiment,
        *,
        client: ExperimentClient,
        conn: Connection,
        store: ExperimentStore,
        policy: RetryDecider,
        models: Mapping[str, ModelInfo] | None = None,
        gate: ModelGate | None = None,
        gateway: GatewayOptions | None = None,
        reject_if_busy: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> None:
        self.experiment = experiment
        self._client = client
        self._conn = conn
        self._store = store
        self._policy = policy
        self._models = dict(models or {})
        self._gate = gate or ModelGate()
        self._streamer = GatedStreamer(client, self._gate)
        self._gateway = gateway or GatewayOptions()
        self._reject = reject_if_busy
        self._clock = clock
        self._sleep = sleep
        self._emit = on_event or (lambda _event: None)
        # per run
        self._run_id = ""
        self._budget: Budget | None = None
        self._spent_neurons = 0.0
        self._spent_usd = 0.0
        self._reserved = 0.0
        self._stop: tuple[RunStatus, str, datetime | None] | None = None
        self._results: dict[str, CellResult] = {}
        #: cells whose request another cell of the run sends: they get its reply
        self._twins: dict[str, list[Cell]] = {}
        self._total = 0
        self._rerun = False

    # -- planning ---------------------------------------------------------------------------

    def plan(self, options: RunOptions | None = None) -> list[Cell]:
        """Every cell with its request built (nothing is sent); ExperimentError when a request
        cannot be built or ``options`` name a variant the experiment does not have."""
        options = options or RunOptions()
        experiment = self.experiment
        source = experiment.source or experiment.name
        unknown = [n for n in options.variants if n not in {v.name for v in experiment.variants}]
        if unknown:
            names = ", ".join(v.name for v in experiment.variants)
            raise ExperimentError(
                [
                    Problem(source, None, "--variant", f"no variant {n!r} (there are: {names})")
                    for n in unknown
                ]
            )
        variants = [
            v for v in experiment.variants if not options.variants or v.name in options.variants
        ]
        repeats = options.repeat or experiment.repeat
        cells: list[Cell] = []
        problems: list[Problem] = []
        for variant in variants:
            for index, case in enumerate(experiment.cases):
                values = dict(case.vars)
                if case.expected is not None:
                    values.setdefault(_EXPECTED, case.expected)
                for repeat in range(repeats):
                    try:
                        cells.append(self._cell(variant, index, case, repeat, values))
                    except ValueError as error:
                        where = case.origin or source
                        problems.append(Problem(where, None, variant.name, str(error)))
                        break
        if problems:
            raise ExperimentError(list(dict.fromkeys(problems)))
        return cells

    def _cell(
        self, variant: Variant, index: int, case: Case, repeat: int, values: Mapping[str, str]
    ) -> Cell:
        params = variant.request_params()
        if repeat and "seed" in params:  # each repeat its own seed, where the model takes one
            params = {**params, "seed": int(params["seed"]) + repeat}
        prompt = fill(variant.prompt, values)
        system = fill(variant.system, values)
        request = build_request(
            model=variant.model,
            history=[ChatMessage(role="user", content=prompt)],
            system_prompt=system,
            params=_sampling(params),
            reject_if_busy=self._reject,
            gateway=self._gateway,
            capabilities=capabilities_from(params),
            model_info=self._models.get(variant.model),
        )
        body = self._body(request)
        key = _key(
            _KIND_REPLY,
            self._conn.account_id,
            {"model": variant.model, "body": body, "repeat": repeat},
        )
        info = self._models.get(variant.model)
        cost = cell_cost([system, prompt], max_tokens=request.params.max_tokens, info=info)
        return Cell(variant, index, case, repeat, request, key, values, cost)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        """The native body this request sends, without ``stream`` and ``options`` (how it is
        delivered, not what is asked): a batch item's body, and what a cell's key hashes."""
        conn = replace(self._conn, endpoint=Endpoint.NATIVE)
        prepared = build_chat_request(conn, replace(request, stream=False), user_agent="")
        return {k: v for k, v in prepared.body.items() if k not in _NOT_HASHED}

    def estimate(self, cells: Sequence[Cell], *, rerun: bool = False) -> Forecast:
        """The forecast of running ``cells``: finished ones (in the store) cost nothing."""
        done = set() if rerun else set(self._store.cells(c.key for c in cells))
        costs: list[tuple[str, CellCost]] = []
        for cell in cells:
            if cell.key in done:
                continue
            costs.append((cell.variant.model, cell.cost))
            costs.extend(self._judge_costs(cell))
        reused = sum(1 for c in cells if c.key in done)
        return forecast(costs, cells=len(cells), reused=reused)

    def _costs(self, cell: Cell) -> list[CellCost]:
        """The cell's forecast and its judge requests'."""
        return [cell.cost, *(cost for _, cost in self._judge_costs(cell))]

    def _judge_costs(self, cell: Cell) -> list[tuple[str, CellCost]]:
        model = self.experiment.judge_model
        info = self._models.get(model)
        return [
            (
                model,
                cell_cost(
                    [_JUDGE_INSTRUCTIONS, str(spec.value)],
                    max_tokens=_JUDGE_MAX_TOKENS,
                    info=info,
                ),
            )
            for spec in self.experiment.assertions_for(cell.case)
            if spec.type == "llm-rubric"
        ]

    # -- running ----------------------------------------------------------------------------

    async def run(self, options: RunOptions | None = None) -> RunResult:
        """Run every planned cell; returns when all finished or the run stopped. Cancelling
        the task stops it cleanly: finished cells are committed already."""
        options = options or RunOptions()
        cells = self.plan(options)
        estimate = self.estimate(cells, rerun=options.rerun)
        self._begin(options, cells)
        mode = "batch" if options.batch else "live"
        self._store.start_run(
            RunRecord(
                id=self._run_id,
                name=self.experiment.name,
                source=self.experiment.source,
                spec=_spec_record(self.experiment, options),
                mode=mode,
                status="running",
                started_at=time.time(),
            )
        )
        notes: list[str] = [estimate.text()]
        self._emit(RunNote(estimate.text()))
        status: RunStatus = "cancelled"
        try:
            finished = {} if options.rerun else self._store.cells(c.key for c in cells)
            todo = []
            for cell in cells:  # a request asked twice in one run is sent once
                if cell.key in finished:
                    continue
                if cell.key in self._twins:
                    self._twins[cell.key].append(cell)
                else:
                    self._twins[cell.key] = []
                    todo.append(cell)
            for cell in cells:
                if cell.key in finished:
                    await self._finish(cell, finished[cell.key], reused=True)
            live, batched = self._split(todo, batch=options.batch, notes=notes)
            await asyncio.gather(
                self._run_live(live),
                *(
                    self._run_batches(model, group, options.poll_interval)
                    for model, group in batched.items()
                ),
            )
            status = "done" if self._stop is None else self._stop[0]
        finally:
            if self._stop is not None:
                notes.append(self._stop[1])
            result = self._result(cells, status, estimate, notes)
            summary = {"cells": len(cells), "passed": sum(1 for r in result.results if r.passed)}
            self._store.finish_run(
                self._run_id, status=status, note="\n".join(notes[1:]), summary=summary
            )
        return result

    def _begin(self, options: RunOptions, cells: Sequence[Cell]) -> None:
        self._run_id = new_id()
        self._budget = options.budget
        self._spent_neurons = self._spent_usd = self._reserved = 0.0
        self._stop = None
        self._results = {}
        self._twins = {}
        self._total = len(cells)
        self._rerun = options.rerun

    def _split(
        self, cells: Sequence[Cell], *, batch: bool, notes: list[str]
    ) -> tuple[list[Cell], dict[str, list[Cell]]]:
        if not batch:
            return list(cells), {}
        live: list[Cell] = []
        batched: dict[str, list[Cell]] = {}
        for cell in cells:
            info = self._models.get(cell.variant.model)
            if info is not None and info.batch:
                batched.setdefault(cell.variant.model, []).append(cell)
            else:
                live.append(cell)
        for model in dict.fromkeys(c.variant.model for c in live):
            text = f"{model} does not take the Batch API: its cells ran live."
            notes.append(text)
            self._emit(RunNote(text))
        return live, batched

    def _result(
        self, cells: Sequence[Cell], status: RunStatus, estimate: Forecast, notes: list[str]
    ) -> RunResult:
        results = [
            self._results.get(c.key + c.id) or CellResult(c, "not_sent", "live") for c in cells
        ]
        resets = self._stop[2] if self._stop is not None else None
        return RunResult(
            run_id=self._run_id,
            experiment=self.experiment,
            results=results,
            status=status,
            forecast=estimate,
            notes=notes,
            spent_neurons=self._spent_neurons,
            spent_usd=self._spent_usd,
            resets_at=resets,
        )

    # -- budget and stopping ----------------------------------------------------------------

    def _reserve(self, costs: Iterable[CellCost]) -> float:
        """Reserve the forecast of what is about to be sent, or stop the run before the cap."""
        if self._stop is not None:
            raise _Stop
        neurons = sum(c.neurons for c in costs)
        budget = self._budget
        if budget is not None:
            at_most = self._spent_neurons + self._reserved + neurons
            usd = at_most * ledger.USD_PER_NEURON
            if budget.crossed_by(neurons=at_most, usd=usd):
                self._halt(
                    "budget",
                    f"Stopped before the budget of {budget} could be crossed "
                    f"(spent ≈ {self._spent_neurons:,.1f} neurons, ${self._spent_usd:.4f}); "
                    "the finished cells are kept.",
                )
                raise _Stop
        self._reserved += neurons
        return neurons

    def _spend(self, reserved: float, record: Mapping[str, Any]) -> None:
        self._reserved -= reserved
        self._spent_neurons += float(record.get("neurons") or 0.0)
        self._spent_usd += float(record.get("usd") or 0.0)

    def _halt(self, status: RunStatus, text: str, resets_at: datetime | None = None) -> None:
        if self._stop is None:
            self._stop = (status, text, resets_at)
            self._emit(RunNote(text))

    def _daily_limit(self, error: DailyAllocationExhausted) -> None:
        reset = error.resets_at
        when = reset.strftime("%Y-%m-%d %H:%M UTC")
        self._halt(
            "daily_limit",
            f"Stopped: {error.message} The free allocation resets at {when}; the finished "
            "cells are kept and a rerun resumes from them.",
            reset,
        )

    # -- live -------------------------------------------------------------------------------

    async def _run_live(self, cells: Sequence[Cell]) -> None:
        queues: dict[str, deque[Cell]] = {}
        for cell in cells:
            queues.setdefault(cell.variant.model, deque()).append(cell)
        workers = [
            self._live_worker(queue)
            for model, queue in queues.items()
            for _ in range(self._gate.limit(model))
        ]
        await asyncio.gather(*workers)

    async def _live_worker(self, queue: deque[Cell]) -> None:
        while queue and self._stop is None:
            cell = queue.popleft()
            try:
                reserved = self._reserve(self._costs(cell))
            except _Stop:
                return
            try:
                record = await self._stream(cell.request, mode="live")
            except DailyAllocationExhausted as error:
                self._reserved -= reserved
                self._daily_limit(error)
                return
            except WorkersAIError as error:
                self._reserved -= reserved
                self._record(CellResult(cell, "failed", "live", error=error.message))
                continue
            self._spend(reserved, record)
            await self._save(cell.key, _KIND_REPLY, cell.variant.model, record)
            await self._finish(cell, record, reused=False)

    async def _stream(self, request: ChatRequest, *, mode: Mode) -> dict[str, Any]:
        state = TurnState(started_at=self._clock())
        events = run_turn(
            self._streamer, self._conn, request, policy=self._policy, sleep=self._sleep
        )
        try:
            async with aclosing(events) as stream:
                async for event in stream:
                    state = fold(state, event, now=self._clock())
        except WorkersAIError as error:
            state = fail(state, error, now=self._clock())
            raise
        return _reply_record(state, self._models.get(request.model), mode=mode)

    async def _save(self, key: str, kind: str, model: str, record: Mapping[str, Any]) -> None:
        await asyncio.to_thread(
            self._store.save_cell, key, run_id=self._run_id, kind=kind, model=model, result=record
        )

    # -- grading ----------------------------------------------------------------------------

    async def _finish(self, cell: Cell, record: Mapping[str, Any], *, reused: bool) -> None:
        """Grade a finished reply (judge and embeddings as needed) and report the cell."""
        seen = _observation(record)
        specs = self.experiment.assertions_for(cell.case)
        mode: Mode = "batch" if record.get("mode") == "batch" else "live"
        try:
            verdicts = [await self._verdict(spec, cell, seen, mode) for spec in specs]
        except DailyAllocationExhausted as error:
            self._daily_limit(error)
            self._record(CellResult(cell, "failed", mode, seen, error=error.message))
            return
        except WorkersAIError as error:
            text = f"The reply came, but grading it failed: {error.message}"
            self._record(CellResult(cell, "failed", mode, seen, error=text))
            return
        score = checks.case_score(verdicts)
        passed = checks.case_passed(verdicts, self.experiment.threshold)
        status: CellStatus = "reused" if reused else "done"
        self._record(CellResult(cell, status, mode, seen, tuple(verdicts), score, passed))
        for twin in self._twins.pop(cell.key, []):
            await self._finish(twin, record, reused=True)

    def _record(self, result: CellResult) -> None:
        self._results[result.cell.key + result.cell.id] = result
        self._emit(CellFinished(result, len(self._results), self._total))
        if result.status == "failed":
            for twin in self._twins.pop(result.cell.key, []):
                self._record(replace(result, cell=twin))

    async def _verdict(
        self, spec: AssertionSpec, cell: Cell, seen: checks.Observation, mode: Mode
    ) -> checks.Verdict:
        if spec.type == "latency" and mode == "batch":
            # a batch reply has no latency of its own: the check is left out, and says so
            return checks.Verdict(spec.type, True, 1.0, "not measured for a batch reply", 0.0)
        if spec.type == "llm-rubric":
            rubric = str(checks.filled_value(spec, cell.values))
            seen = replace(seen, grade=await self._judge(rubric, seen.text))
        elif spec.type == "similar":
            value = checks.filled_value(spec, cell.values)
            expected = str(value if value is not None else cell.values.get(_EXPECTED, ""))
            seen = replace(seen, similarity=await self._similarity(expected, seen.text))
        return checks.evaluate(spec, seen, cell.values)

    async def _judge(self, rubric: str, output: str) -> checks.Grade | None:
        model = self.experiment.judge_model
        request = build_request(
            model=model,
            history=[ChatMessage(role="user", content=judge_prompt(rubric, output))],
            params=SamplingParams(max_tokens=_JUDGE_MAX_TOKENS, temperature=0.0),
            reject_if_busy=self._reject,
            gateway=self._gateway,
            model_info=self._models.get(model),
        )
        key = _key(
            _KIND_JUDGE, self._conn.account_id, {"model": model, "body": self._body(request)}
        )
        record = None if self._rerun else self._store.cells([key]).get(key)
        if record is None:
            record = await self._stream(request, mode="live")
            self._spend(0.0, record)
            await self._save(key, _KIND_JUDGE, model, record)
        return _grade(str(record.get("text", "")))

    async def _similarity(self, expected: str, output: str) -> float:
        model = self.experiment.embedding_model
        key = _key(
            _KIND_EMBED, self._conn.account_id, {"model": model, "texts": [expected, output]}
        )
        record = None if self._rerun else self._store.cells([key]).get(key)
        if record is None:
            vectors = await self._client.embed(self._conn, model, [expected, output])
            record = {"similarity": checks.cosine(vectors[0], vectors[1])}
            await self._save(key, _KIND_EMBED, model, record)
        return float(record["similarity"])

    # -- batches ----------------------------------------------------------------------------

    async def _run_batches(self, model: str, cells: Sequence[Cell], interval: float) -> None:
        by_key = {c.key: c for c in cells}
        polls = []
        for pending in self._store.pending_batches():
            if pending.model == model and any(k in by_key for k in pending.keys):
                ticket = BatchTicket(pending.request_id, model)
                self._emit(BatchChanged(ticket.request_id, model, "queued", len(pending.keys)))
                mine = {k: by_key[k] for k in pending.keys if k in by_key}
                polls.append(self._collect(ticket, pending.keys, mine, interval, reserved=0.0))
                for key in pending.keys:
                    by_key.pop(key, None)
        for chunk in self._chunks(list(by_key.values())):
            try:
                reserved = self._reserve(
                    [
                        cost
                        for c in chunk
                        for cost in (c.cost, *(j for _, j in self._judge_costs(c)))
                    ]
                )
            except _Stop:
                break
            items = [{**self._body(c.request), "external_reference": c.key} for c in chunk]
            try:
                ticket = await self._client.submit_batch(self._conn, model, items)
            except DailyAllocationExhausted as error:
                self._reserved -= reserved
                self._daily_limit(error)
                break
            except WorkersAIError as error:
                self._reserved -= reserved
                for cell in chunk:
                    self._record(CellResult(cell, "failed", "batch", error=error.message))
                continue
            keys = [c.key for c in chunk]
            await asyncio.to_thread(
                self._store.save_batch,
                ticket.request_id,
                run_id=self._run_id,
                model=model,
                keys=keys,
            )
            self._emit(BatchChanged(ticket.request_id, model, "queued", len(keys)))
            mine = {c.key: c for c in chunk}
            polls.append(self._collect(ticket, keys, mine, interval, reserved=reserved))
        await asyncio.gather(*polls)

    def _chunks(self, cells: Sequence[Cell]) -> list[list[Cell]]:
        """Cells in batches whose payload stays under the Batch API's size limit."""
        limit = MAX_BATCH_BYTES * _BATCH_FILL
        chunks: list[list[Cell]] = []
        size = 0.0
        for cell in cells:
            item = len(_dumps({**self._body(cell.request), "external_reference": cell.key}))
            if not chunks or size + item > limit or len(chunks[-1]) >= _MAX_BATCH_ITEMS:
                chunks.append([])
                size = 0.0
            chunks[-1].append(cell)
            size += item + 1
        return chunks

    async def _collect(
        self,
        ticket: BatchTicket,
        keys: Sequence[str],
        cells: Mapping[str, Cell],
        interval: float,
        *,
        reserved: float,
    ) -> None:
        """Poll a batch until it is done, then commit and grade each of its cells."""
        wanted = {k: cells[k] for k in keys if k in cells}
        status = "queued"
        attempt = 0
        while True:
            try:
                poll = await self._client.poll_batch(self._conn, ticket)
            except BatchRequestUnknown as error:
                await self._end_batch(ticket, _BATCH_UNKNOWN, error.message, len(keys))
                for cell in wanted.values():
                    self._record(CellResult(cell, "failed", "batch", error=error.message))
                self._reserved -= reserved
                return
            except DailyAllocationExhausted as error:
                self._reserved -= reserved
                self._daily_limit(error)
                return
            except WorkersAIError as error:
                attempt += 1
                delay = self._policy.next_delay(error, attempt=attempt, received_tokens=False)
                if delay is None:  # the batch stays pending in the store: a rerun polls it
                    self._reserved -= reserved
                    for cell in wanted.values():
                        self._record(CellResult(cell, "failed", "batch", error=error.message))
                    return
                await self._sleep(delay)
                continue
            attempt = 0
            if poll.status.value != status:
                status = poll.status.value
                if status != _BATCH_DONE:
                    self._emit(BatchChanged(ticket.request_id, ticket.model, status, len(keys)))
            if status == _BATCH_DONE:
                break
            await self._sleep(interval)
        self._reserved -= reserved
        self._spent_neurons += poll.neurons or 0.0
        info = self._models.get(ticket.model)
        for index, key in enumerate(keys):
            item = poll.items.get(index)
            target = wanted.get(key)
            if item is None or not item.ok or item.result is None:
                if target is not None:
                    why = item.error_message if item is not None else "the batch left it out"
                    self._record(CellResult(target, "failed", "batch", error=why))
                continue
            state = TurnState()
            for event in decode_complete(item.result, model=ticket.model):
                state = fold(state, event)
            record = _reply_record(state, info, mode="batch")
            self._spent_usd += float(record.get("usd") or 0.0)
            await self._save(key, _KIND_REPLY, ticket.model, record)
            if target is not None:
                await self._finish(target, record, reused=False)
        await self._end_batch(ticket, _BATCH_DONE, None, len(keys))

    async def _end_batch(
        self, ticket: BatchTicket, status: str, error: str | None, size: int
    ) -> None:
        await asyncio.to_thread(
            self._store.end_batch, ticket.request_id, status=status, error=error
        )
        shown = _BATCH_FAILED if status == _BATCH_UNKNOWN else status
        self._emit(BatchChanged(ticket.request_id, ticket.model, shown, size))


def _spec_record(experiment: Experiment, options: RunOptions) -> dict[str, Any]:
    """The experiment as it ran (JSON-able), with the options it ran with."""
    spec = asdict(experiment)
    spec["options"] = {
        "batch": options.batch,
        "repeat": options.repeat,
        "variants": list(options.variants),
        "rerun": options.rerun,
        "budget": None if options.budget is None else asdict(options.budget),
    }
    plain: dict[str, Any] = json.loads(json.dumps(spec, default=str))
    return plain

"""A compare run on a real ChatSession against the emulator: one column waits for capacity
while the others finish; metrics and costs from what each reply left behind."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import random
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import Connection, GatewayOptions, SamplingParams, Secret
from flarechat.api.models import ModelInfo
from flarechat.api.retry import RetryPolicy
from flarechat.core.conversation import Conversation, ConversationTree, Message, new_id
from flarechat.core.lab.compare import (
    ColumnMetrics,
    ColumnSetup,
    CompareRun,
    blind_order,
    estimate_cost,
    metrics_of,
)
from flarechat.core.lab.compare_export import compare_csv, compare_json, compare_record
from flarechat.core.lab.votes import Verdict, Vote
from flarechat.core.session import ChatSession, RetryPlanned, SessionEvent, TurnFinished
from flarechat.core.store import AsyncChatStore
from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN
from flarechat.emulator.server import EmulatorServer

BUSY = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
FREE = "@cf/meta/llama-3.1-8b-instruct-fast"
LONG_DELAY = 60.0  # only the test ends this retry wait


@dataclass
class _Settings:
    conn: Connection

    def connection(self) -> Connection:
        return self.conn

    def sampling(self, params: Mapping[str, object]) -> SamplingParams:
        max_tokens = params.get("max_tokens", 256)
        temperature = params.get("temperature")
        return SamplingParams(
            max_tokens=max_tokens if isinstance(max_tokens, int) else 256,
            temperature=temperature if isinstance(temperature, float) else None,
        )

    def reject_if_busy(self) -> bool:
        return True

    def gateway_options(self) -> GatewayOptions:
        return GatewayOptions()

    def default_model(self) -> str:
        return FREE


@dataclass
class _Events:
    seen: list[SessionEvent] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: SessionEvent) -> None:
        self.seen.append(event)
        self.changed.set()

    async def first(self, kind: type, message_id: str) -> SessionEvent:
        async with asyncio.timeout(20):
            while True:
                for event in self.seen:
                    if isinstance(event, kind) and _id_of(event) == message_id:
                        return event
                self.changed.clear()
                await self.changed.wait()


def _id_of(event: SessionEvent) -> str:
    if isinstance(event, TurnFinished):
        return event.message.id
    return str(getattr(event, "message_id", ""))


@asynccontextmanager
async def _session(
    emulator: EmulatorServer, tmp_path: Path
) -> AsyncIterator[tuple[ChatSession, _Events]]:
    conn = Connection(
        account_id=DEMO_ACCOUNT_ID,
        token=Secret(DEMO_TOKEN),
        api_base=emulator.api_base,
        gateway_base=emulator.gateway_base,
    )
    client = WorkersAIClient()
    store = await AsyncChatStore.open(tmp_path / "chat.sqlite3")
    events = _Events()
    session = ChatSession(
        ConversationTree(Conversation(id=new_id(), model=FREE)),
        client=client,
        store=store,
        settings=_Settings(conn),
        listener=events,
        stored=False,
        policy_factory=lambda: RetryPolicy(base_delay=LONG_DELAY, max_delay=LONG_DELAY),
    )
    try:
        yield session, events
    finally:
        await session.shutdown()
        await client.aclose()
        await store.close()


@pytest.mark.asyncio
async def test_one_column_waits_for_capacity_while_the_others_finish(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    run = CompareRun(
        [
            ColumnSetup(BUSY),
            ColumnSetup(FREE, params={"max_tokens": 64}),
            ColumnSetup(FREE, params={"temperature": 0.2}, system_prompt="Be brief."),
        ]
    )
    async with _session(emulator, tmp_path) as (session, events):
        emulator.state.hold_slots(BUSY, 600)
        ids = session.send_compare("Name a colour", run.specs())
        assert ids is not None
        run.add_round("Name a colour", ids)
        plan = await events.first(RetryPlanned, ids[0])
        assert isinstance(plan, RetryPlanned)
        assert plan.model == BUSY
        for reply_id in ids[1:]:
            done = await events.first(TurnFinished, reply_id)
            assert isinstance(done, TurnFinished)
            assert done.message.status == "done"
            metrics = metrics_of(done.message)
            assert metrics.ttft is not None
            assert metrics.completion_tokens
            assert metrics.neurons is not None
            assert metrics.cost_usd is not None
            assert metrics.finish_reason in ("stop", "length")
        assert session.is_running(ids[0])  # still waiting; nobody waited for it
        assert run.column_of(ids[2]) == 2
        session.cancel_retry(ids[0])
        failed = await events.first(TurnFinished, ids[0])
        assert isinstance(failed, TurnFinished)
        assert failed.message.status == "failed"
        assert metrics_of(failed.message).completion_tokens is None
        second, third = (session.tree.get(i).request or {} for i in ids[1:])
        assert second["params"]["max_tokens"] == 64
        assert (third["params"]["temperature"], third["system_prompt"]) == (0.2, "Be brief.")


@pytest.mark.asyncio
async def test_follow_ups_continue_each_column(emulator: EmulatorServer, tmp_path: Path) -> None:
    run = CompareRun([ColumnSetup(FREE), ColumnSetup(BUSY)])
    async with _session(emulator, tmp_path) as (session, events):
        for prompt in ("Hello", "And again"):
            ids = session.send_compare(prompt, run.specs(), after=run.last_replies())
            assert ids is not None
            run.add_round(prompt, ids)
            for reply_id in ids:
                await events.first(TurnFinished, reply_id)
            await session.drain()  # every column's task has ended: the next round may go
        first, second = run.rounds
        for column in range(2):
            user = session.tree.get(session.tree.get(second.replies[column]).parent_id or "")
            assert user.parent_id == first.replies[column]
            assert run.column_of(second.replies[column]) == column


def test_a_run_has_two_to_four_columns_and_blind_labels_until_revealed() -> None:
    with pytest.raises(ValueError, match="2 to 4"):
        CompareRun([ColumnSetup(FREE)])
    with pytest.raises(ValueError, match="2 to 4"):
        CompareRun([ColumnSetup(FREE)] * 5)
    run = CompareRun([ColumnSetup(FREE), ColumnSetup(BUSY)], blind=True)
    assert [run.shown_name(i) for i in range(2)] == ["Model A", "Model B"]
    run.revealed = True
    assert run.shown_name(1) == "llama-3.3-70b-instruct-fp8-fast"
    run.set_model(1, FREE)
    assert run.columns[1].model == FREE


def test_blind_order_is_a_shuffle_of_every_column() -> None:
    orders = {tuple(blind_order(4, random.Random(seed))) for seed in range(40)}
    assert all(sorted(order) == [0, 1, 2, 3] for order in orders)
    assert len(orders) > 10  # not one fixed order
    assert (0, 1, 2, 3) in orders  # the chosen order may come up too: nothing to infer


def test_estimated_cost_from_catalogue_prices_else_neurons() -> None:
    info = ModelInfo(FREE, price_input_per_m=0.5, price_output_per_m=2.0, price_cached_per_m=0.1)
    usage = {"prompt_tokens": 1000, "completion_tokens": 500, "cached_tokens": 400}
    assert estimate_cost(usage, info) == pytest.approx((600 * 0.5 + 400 * 0.1 + 500 * 2.0) / 1e6)
    no_cache_price = ModelInfo(FREE, price_input_per_m=0.5, price_output_per_m=2.0)
    assert estimate_cost(usage, no_cache_price) == pytest.approx((1000 * 0.5 + 500 * 2.0) / 1e6)
    assert estimate_cost(usage, None, neurons=100.0) == pytest.approx(0.0011)
    assert estimate_cost(None, None) is None


def test_metrics_lines_read_like_the_rest_of_the_app() -> None:
    message = Message(
        "m", "c", "u", "assistant", "hi", model=FREE, finish_reason="stop",
        timings={"queue_wait": 2.5, "ttft": 0.42, "tokens_per_second": 38.0, "streamed": True},
        usage={"prompt_tokens": 152, "completion_tokens": 418},
        meta={"neurons": 1.98, "cache_status": "HIT"},
    )  # fmt: skip
    lines = metrics_of(message).lines()
    assert lines[:5] == [
        "queue 2.50 s",
        "TTFT 420 ms",
        "38 tok/s",
        "152\N{RIGHTWARDS ARROW}418 tokens",
        "1.98 neurons",
    ]
    assert lines[5].startswith("\N{ALMOST EQUAL TO} $0.0000")  # neurons x $0.011 per 1,000
    assert lines[5].endswith("(estimate)")
    assert lines[6:] == ["cache HIT", "finish: stop"]


@pytest.mark.asyncio
async def test_a_finished_blind_run_exports_everything_but_the_token(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    run = CompareRun(
        [
            ColumnSetup(FREE, params={"max_tokens": 64}, system_prompt="Be brief."),
            ColumnSetup(BUSY),
        ],
        blind=True,
        conversation_id="conv",
    )
    async with _session(emulator, tmp_path) as (session, events):
        ids = session.send_compare("Name a colour", run.specs())
        assert ids is not None
        run.add_round("Name a colour", ids)
        for reply_id in ids:
            await events.first(TurnFinished, reply_id)
        await session.drain()
        messages = {i: session.tree.get(i) for i in ids}
    vote = Vote((FREE, BUSY), Verdict.BEST, winner=1)
    catalogue = {FREE: ModelInfo(FREE, price_input_per_m=1.0, price_output_per_m=1.0)}
    record = compare_record(run, messages, catalogue=catalogue, vote=vote)
    text, table = compare_json(record), compare_csv(record)
    for exported in (text, table):
        assert DEMO_TOKEN not in exported
        assert "Bearer" not in exported
    document = json.loads(text)
    assert document["format"] == "flarechat.compare"
    assert document["blind"] is True
    assert document["vote"] == {"id": vote.id, "verdict": "best", "winner": "B", "words": "B best"}
    assert [c["model"] for c in document["columns"]] == [FREE, BUSY]
    assert document["columns"][0]["params"] == {"max_tokens": 64}
    assert document["columns"][0]["system_prompt"] == "Be brief."
    (round_,) = document["rounds"]
    assert round_["prompt"] == "Name a colour"
    replies = round_["replies"]
    assert [r["text"] for r in replies] == [messages[i].content for i in ids]
    assert replies[0]["request"]["system_prompt"] == "Be brief."
    assert replies[0]["metrics"]["cost_usd"] == estimate_cost(
        messages[ids[0]].usage, catalogue[FREE]
    )
    assert replies[1]["metrics"]["neurons"] is not None
    rows = list(csv.DictReader(io.StringIO(table)))
    assert [(r["round"], r["column"], r["model"]) for r in rows] == [
        ("1", "A", FREE),
        ("1", "B", BUSY),
    ]
    assert rows[0]["reply"] == messages[ids[0]].content
    assert json.loads(rows[0]["params"]) == {"max_tokens": 64}
    assert {r["vote"] for r in rows} == {"B best"}
    assert rows[1]["ttft"]
    assert rows[1]["completion_tokens"]
    assert rows[1]["finish_reason"]


def test_blind_figures_leave_out_what_tells_the_models_apart() -> None:
    metrics = ColumnMetrics(
        status="done", ttft=0.42, tokens_per_second=55.0, prompt_tokens=12,
        completion_tokens=80, neurons=3.5, cost_usd=0.00012, queue_wait=1.5,
        finish_reason="stop",
    )  # fmt: skip
    assert metrics.lines(blind=True) == ["12\N{RIGHTWARDS ARROW}80 tokens", "finish: stop"]
    assert len(metrics.lines()) == 7

"""ChatSession's turn flows on plain asyncio: the emulator over loopback, real SQLite, no Qt."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from session_helpers import (
    MODEL,
    OTHER_MODEL,
    Harness,
    Settings,
    emulator_conn,
    session_env,
    slow_policy,
    until,
)

from flarechat.api.errors import ErrorKind
from flarechat.api.events import Finished, ResponseMeta, TextDelta, UsageReport
from flarechat.core.session import (
    BusyChanged,
    ColumnSpec,
    ConversationStored,
    EditingChanged,
    MessageAdded,
    ModelGate,
    PathChanged,
    Phase,
    PhaseChanged,
    RetryOver,
    RetryPlanned,
    SiblingsChanged,
    TextAppended,
    TurnFailed,
    TurnStarted,
)
from flarechat.emulator.server import EmulatorServer


def _retrying(message_id: str, event: RetryPlanned) -> bool:
    return event.message_id == message_id


def _rejected(emulator: EmulatorServer) -> list[bool]:
    """For each generation request so far: did it ask to be rejected when busy?"""
    flags = []
    for request in emulator.state.requests:
        if "/ai/run/" in request.path and isinstance(request.json, dict):
            options = request.json.get("options") or {}
            flags.append(bool(options.get("rejectIfBusy")))
    return flags


@asynccontextmanager
async def _held_by_capacity(
    emulator: EmulatorServer, tmp_path: Path
) -> AsyncIterator[tuple[Harness, str]]:
    """A session whose first reply ("Hello") waits to retry: its model is at capacity."""
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(
        emulator, tmp_path, settings=settings, policy_factory=slow_policy()
    ) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.session.send("Hello")
        assert reply_id is not None
        await env.events.wait(RetryPlanned)
        yield env, reply_id


@pytest.mark.asyncio
async def test_send_commits_the_user_message_then_streams_and_saves_the_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(emulator, tmp_path, settings=settings) as env:
        reply_id = env.session.send("Hello there")
        assert reply_id is not None
        done = await env.events.finished(reply_id)
        assert done.message.status == "done"
        assert done.message.content
        text = "".join(e.text for e in env.events.of(TextAppended))
        assert text == done.message.content
        kinds = [type(e) for e in env.events.seen]
        assert kinds.index(MessageAdded) < kinds.index(TurnStarted) < kinds.index(TextAppended)
        assert env.events.of(ConversationStored)
        assert [e.busy for e in env.events.of(BusyChanged)] == [True, False]
        phases = [e.phase for e in env.events.of(PhaseChanged)]
        assert phases == [Phase.SENT, Phase.STREAMING]
        stored = await env.store.load_tree(env.session.id)
        assert [m.role for m in stored.path()] == ["user", "assistant"]
        assert stored.get(reply_id).content == done.message.content
        assert stored.get(reply_id).request is not None
        assert stored.get(reply_id).timings is not None


@pytest.mark.asyncio
async def test_regenerate_keeps_the_old_reply_as_a_branch(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        first = env.session.send("Pick a colour")
        assert first is not None
        await env.events.finished(first)
        second = env.session.regenerate(first)
        assert second is not None
        assert second != first
        await env.events.finished(second)
        siblings = env.events.of(SiblingsChanged)
        assert (siblings[-1].message_id, siblings[-1].index, siblings[-1].count) == (second, 1, 2)
        assert env.events.of(PathChanged)[-1].first_gone == first
        tree = await env.store.load_tree(env.session.id)
        assert [m.id for m in tree.siblings(second)] == [first, second]


@pytest.mark.asyncio
async def test_edit_and_resend_makes_a_branch_of_the_user_message(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        reply = env.session.send("Name a fruit")
        assert reply is not None
        await env.events.finished(reply)
        user = env.session.tree.path()[0]
        env.session.start_edit(user.id)
        assert env.events.of(EditingChanged)[-1].text == "Name a fruit"
        again = env.session.send("Name a vegetable")
        assert again is not None
        await env.events.finished(again)
        path = env.session.tree.path()
        assert path[0].content == "Name a vegetable"
        assert [m.content for m in env.session.tree.siblings(path[0].id)] == [
            "Name a fruit",
            "Name a vegetable",
        ]
        assert env.events.of(PathChanged)[-1].first_gone == user.id
        env.session.switch_branch(path[0].id, -1)
        assert env.session.tree.path()[0].id == user.id


@pytest.mark.asyncio
async def test_capacity_retries_are_reported_then_succeed(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(emulator, tmp_path, settings=settings) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.session.send("Hello")
        assert reply_id is not None
        plan = await env.events.wait(RetryPlanned)
        assert (plan.message_id, plan.attempt, plan.model) == (reply_id, 1, MODEL)
        assert plan.kind is ErrorKind.CAPACITY
        assert plan.max_attempts == 4
        emulator.state.advance_time(601)
        done = await env.events.finished(reply_id)
        assert done.message.status == "done"
        assert env.events.of(RetryOver)
        assert Phase.RETRY_WAIT in [e.phase for e in env.events.of(PhaseChanged)]
        assert done.message.timings is not None
        assert done.message.timings["attempts"] >= 2


@pytest.mark.asyncio
async def test_wait_in_queue_resends_once_without_reject_if_busy(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _held_by_capacity(emulator, tmp_path) as (env, reply_id):
        assert env.session.pending_retry() is not None
        env.session.wait_in_queue()
        await env.events.wait(PhaseChanged, lambda e: e.phase is Phase.QUEUED)
        await until(lambda: any(e.action == "queued" for e in emulator.state.capacity_log))
        emulator.state.advance_time(601)
        done = await env.events.finished(reply_id, "done")
        assert done.message.request is not None
        assert done.message.request["reject_if_busy"] is False
        assert _rejected(emulator) == [True, False]


@pytest.mark.asyncio
async def test_switch_model_resends_a_reply_held_up_by_capacity(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _held_by_capacity(emulator, tmp_path) as (env, reply_id):
        env.session.set_model(OTHER_MODEL)
        done = await env.events.finished(reply_id, "done")
        assert done.message.model == OTHER_MODEL
        assert done.message.request is not None
        assert done.message.request["model"] == OTHER_MODEL
        assert env.session.tree.conversation.model == OTHER_MODEL


@pytest.mark.asyncio
async def test_cancel_retry_marks_the_reply_failed_without_a_banner(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _held_by_capacity(emulator, tmp_path) as (env, reply_id):
        env.session.cancel_retry()
        done = await env.events.finished(reply_id)
        assert done.message.status == "failed"
        assert done.message.error is not None
        assert done.message.error["kind"] == "capacity"
        assert not env.events.of(TurnFailed)


@pytest.mark.asyncio
async def test_spent_retry_budget_fails_then_retry_now_resends_in_place(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(emulator, tmp_path, settings=settings) as env:
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.session.send("Hello")
        assert reply_id is not None
        failed = await env.events.wait(TurnFailed)
        assert (failed.message_id, failed.kind, failed.extra["attempts"]) == (
            reply_id,
            ErrorKind.CAPACITY,
            4,
        )
        emulator.state.advance_time(601)
        env.session.retry_now()
        done = await env.events.finished(reply_id, "done")
        assert done.message.content


@pytest.mark.asyncio
async def test_stop_keeps_the_partial_text(emulator: EmulatorServer, tmp_path: Path) -> None:
    emulator.state.set_tokens_per_second(40)
    async with session_env(emulator, tmp_path) as env:
        reply_id = env.session.send("Tell me a long story")
        assert reply_id is not None
        await env.events.wait(TextAppended)
        env.session.stop()
        done = await env.events.finished(reply_id)
        assert done.message.status == "stopped"
        assert done.message.content
        stored = await env.store.load_tree(env.session.id)
        assert stored.get(reply_id).content == done.message.content


@pytest.mark.asyncio
async def test_no_account_fails_the_reply_with_a_config_kind(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path, settings=Settings(None)) as env:
        reply_id = env.session.send("Hello")
        assert reply_id is not None
        failed = await env.events.wait(TurnFailed)
        assert failed.kind is ErrorKind.CONFIG
        done = await env.events.finished(reply_id)
        assert done.message.status == "failed"
        await env.session.drain()
        stored = await env.store.load_tree(env.session.id)
        assert stored.get(reply_id).status == "failed"  # the user's words and the attempt stay


@pytest.mark.asyncio
async def test_sessions_stream_at_once_and_share_only_the_gate(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    gate = ModelGate(per_model=1)
    emulator.state.set_tokens_per_second(200)
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(emulator, tmp_path, gate=gate, settings=settings) as env:
        other = env.new_session(gate=gate, model=OTHER_MODEL)
        third = env.new_session(gate=gate)
        ids = [s.send("Hello") for s in (env.session, other, third)]
        assert None not in ids
        held = await env.events.wait(PhaseChanged, lambda e: e.phase is Phase.HELD)
        assert held.conversation_id == third.id  # same model as the first: waits its turn
        for reply_id in ids:
            assert reply_id is not None
            await env.events.finished(reply_id, "done")
        sent = [e for e in env.events.of(PhaseChanged) if e.conversation_id == third.id]
        assert [e.phase for e in sent][:2] == [Phase.HELD, Phase.SENT]
        for session in (other, third):
            await session.shutdown()


@pytest.mark.asyncio
async def test_compare_columns_run_alone_and_one_waiting_for_capacity_blocks_none(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(
        emulator, tmp_path, settings=settings, policy_factory=slow_policy()
    ) as env:
        emulator.state.hold_slots(MODEL, 600)  # the first column's model is at capacity
        columns = [
            ColumnSpec(MODEL),
            ColumnSpec(OTHER_MODEL, params={"max_tokens": 64}),
            ColumnSpec(OTHER_MODEL, system_prompt="Answer like a pirate."),
        ]
        ids = env.session.send_compare("Name a colour", columns)
        assert ids is not None
        assert len(set(ids)) == 3
        plan = await env.events.wait(RetryPlanned)
        assert plan.message_id == ids[0]
        for other in ids[1:]:
            assert (await env.events.finished(other, "done")).message.content
        assert env.session.is_running(ids[0])  # still waiting; the others did not wait for it
        env.session.cancel_retry(ids[0])
        failed = await env.events.finished(ids[0], "failed")
        assert failed.message.error is not None
        tree = await env.store.load_tree(env.session.id)
        assert [m.id for m in tree.siblings(ids[0])] == ids
        assert [tree.get(i).model for i in ids] == [MODEL, OTHER_MODEL, OTHER_MODEL]
        second, third = (tree.get(i).request or {} for i in ids[1:])
        assert second["params"]["max_tokens"] == 64
        assert third["system_prompt"] == "Answer like a pirate."


@pytest.mark.asyncio
async def test_compare_follow_ups_continue_each_column_and_the_winner_is_chosen(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        columns = [ColumnSpec(MODEL), ColumnSpec(OTHER_MODEL)]
        first = env.session.send_compare("Hello", columns)
        assert first is not None
        for reply_id in first:
            await env.events.finished(reply_id, "done")
        follow = env.session.send_compare("And again", columns, after=first)
        assert follow is not None
        for before, reply_id in zip(first, follow, strict=True):
            done = await env.events.finished(reply_id, "done")
            user = env.session.tree.get(done.message.parent_id or "")
            assert (user.content, user.parent_id) == ("And again", before)
        env.session.choose_branch(follow[1])  # continue with the winner
        assert env.session.tree.path()[-1].id == follow[1]
        assert env.session.tree.path()[1].id == first[1]


@pytest.mark.asyncio
async def test_retry_now_for_one_column_leaves_the_other_waiting(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True)
    async with session_env(
        emulator, tmp_path, settings=settings, policy_factory=slow_policy()
    ) as env:
        emulator.state.hold_slots(MODEL, 600)
        emulator.state.hold_slots(OTHER_MODEL, 600)
        ids = env.session.send_compare("Hi", [ColumnSpec(MODEL), ColumnSpec(OTHER_MODEL)])
        assert ids is not None
        for reply_id in ids:
            await env.events.wait(RetryPlanned, functools.partial(_retrying, reply_id))
        emulator.state.set_slots(OTHER_MODEL, 4)
        emulator.state.hold_slots(OTHER_MODEL, 0)
        env.session.retry_now(ids[1])
        await env.events.finished(ids[1], "done")
        assert env.session.is_running(ids[0])
        assert env.session.pending_retry() is not None


@pytest.mark.asyncio
async def test_compare_columns_with_their_own_prompts_branch_from_one_place(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        rows = ["Describe Paris", "Describe Rome"]  # a template filled with two rows
        ids = env.session.send_compare("", [ColumnSpec(MODEL, prompt=row) for row in rows])
        assert ids is not None
        for reply_id, row in zip(ids, rows, strict=True):
            done = await env.events.finished(reply_id, "done")
            user = env.session.tree.get(done.message.parent_id or "")
            assert (user.content, user.parent_id) == (row, None)
        tree = await env.store.load_tree(env.session.id)
        assert [m.content for m in tree.children(None)] == rows


class _BurstClient:
    """Every event of a long reply already buffered: the stream never waits on the network."""

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens

    async def stream_chat(self, conn: Any, request: Any) -> AsyncIterator[Any]:
        yield ResponseMeta(status_code=200)
        for _ in range(self.tokens):
            yield TextDelta("word ")
        yield UsageReport(prompt_tokens=3, completion_tokens=self.tokens)
        yield Finished("stop")


@pytest.mark.asyncio
async def test_a_burst_of_buffered_tokens_gives_the_loop_turns(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flarechat.core.session import running

    monkeypatch.setattr(running, "YIELD_EVERY", 0.0)  # a turn after every event
    turns = 0

    async def tick() -> None:
        nonlocal turns
        while True:
            await asyncio.sleep(0)
            turns += 1

    async with session_env(emulator, tmp_path, client=_BurstClient(500)) as env:
        ticker = asyncio.get_running_loop().create_task(tick())
        reply_id = env.session.send("Burst")
        assert reply_id is not None
        done = await env.events.finished(reply_id, "done")
        ticker.cancel()
        assert len(done.message.content) == 500 * len("word ")
        assert turns >= 400  # the window would have painted throughout, not once at the end

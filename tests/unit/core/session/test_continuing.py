"""Continue after max_tokens extends the same reply: the request it sends (the reply so far as
an assistant prefill, or in words for a reasoning model), the one message it grows, its summed
usage, and the first part kept whatever becomes of the continuation. Emulator over loopback,
real SQLite, no Qt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from capability_helpers import catalogue_of, chat_bodies
from session_helpers import (
    MODEL,
    Harness,
    Settings,
    emulator_conn,
    session_env,
    slow_policy,
    until,
)

from flarechat.core import ledger
from flarechat.core.conversation import Message
from flarechat.core.lab.request_view import request_code_for, request_of
from flarechat.core.session import (
    CONTINUE_PROMPT,
    MessageAdded,
    Phase,
    PhaseChanged,
    RetryPlanned,
    TurnFailed,
    TurnFinished,
    can_continue,
    continue_hint,
)
from flarechat.core.session.continuing import combined
from flarechat.emulator import catalogue as emulated
from flarechat.emulator import replies
from flarechat.emulator.server import EmulatorServer

REASONING_MODEL = "@cf/zai-org/glm-4.7-flash"
LONG = "Write a long answer"


async def _turn(env: Harness, message_id: str, nth: int) -> TurnFinished:
    """The ``nth`` (1-based) TurnFinished of ``message_id``: each Continue finishes it again."""

    def done(event: TurnFinished) -> bool:
        ends = [e for e in env.events.of(TurnFinished) if e.message.id == message_id]
        return len(ends) >= nth and event is ends[nth - 1]

    return await env.events.wait(TurnFinished, done)


async def _cut_reply(env: Harness) -> Message:
    reply = env.session.send(LONG)
    assert reply is not None
    message = (await _turn(env, reply, 1)).message
    assert message.finish_reason == "length"
    return message


def _snapshot(message: Message) -> dict[str, Any]:
    return {
        "content": message.content,
        "usage": dict(message.usage or {}),
        "meta": dict(message.meta or {}),
    }


def _generation_usage(body: dict[str, Any], model: str, completion: int) -> tuple[int, float]:
    """The prompt tokens and neurons the emulator bills for ``body`` (its request log)."""
    prompt = replies.prompt_tokens(body)
    found = emulated.find(model)
    assert found is not None
    neurons = emulated.neurons(found, prompt_tokens=prompt, completion_tokens=completion)
    return prompt, neurons


@pytest.mark.asyncio
async def test_continue_extends_the_same_reply_from_an_assistant_prefill(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), max_tokens=6)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        first = await _cut_reply(env)
        before = _snapshot(first)
        added = len(env.events.of(MessageAdded))
        hint = continue_hint(env.session.tree, first, catalogue(MODEL))
        assert "sends the reply so far back for the model to extend" in hint
        assert CONTINUE_PROMPT not in hint

        assert env.session.continue_reply(first.id) == first.id  # the same reply, extended
        done = (await _turn(env, first.id, 2)).message
        # What went out: the conversation up to and including the cut reply, as its last
        # message, so the model goes on from it.
        body = chat_bodies(emulator)[-1]
        assert body["messages"][-1] == {"role": "assistant", "content": before["content"]}
        assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
        # One message, grown: no user turn, no second reply, in the tree or the database.
        assert len(env.events.of(MessageAdded)) == added
        assert [m.role for m in env.session.tree.path()] == ["user", "assistant"]
        assert done.content.startswith(before["content"])
        assert len(done.content) > len(before["content"])
        await env.session.drain()
        stored = await env.store.load_tree(env.session.id)
        assert [(m.id, m.content) for m in stored.path()][1] == (first.id, done.content)
        # Its usage is the sum of both requests.
        prompt, neurons = _generation_usage(body, MODEL, 6)
        usage = stored.get(first.id).usage or {}
        assert usage["prompt_tokens"] == before["usage"]["prompt_tokens"] + prompt
        assert usage["completion_tokens"] == before["usage"]["completion_tokens"] + 6
        spent = ledger.charge(usage, stored.get(first.id).meta, catalogue(MODEL))
        alone = ledger.charge(before["usage"], before["meta"], catalogue(MODEL))
        assert spent is not None
        assert alone is not None
        assert spent.neurons == pytest.approx(alone.neurons + neurons, abs=0.02)
        assert spent.cost is not None
        assert alone.cost is not None
        assert spent.cost > alone.cost

        # Cut again, it can be continued again; the text joins up with what one request with
        # the larger limit answers.
        assert done.finish_reason == "length"
        assert can_continue(env.session.tree, done)
        assert env.session.continue_reply(first.id) == first.id
        again = (await _turn(env, first.id, 3)).message
        env.settings.max_tokens = 18
        whole = env.new_session()
        reply = whole.send(LONG)
        assert reply is not None
        assert again.content == (await _turn(env, reply, 1)).message.content
        await whole.shutdown()


@pytest.mark.asyncio
async def test_a_reasoning_model_is_asked_in_words_and_its_answer_joins_the_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conn = emulator_conn(emulator)
    settings = Settings(conn, model=REASONING_MODEL, max_tokens=60)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        first = await _cut_reply(env)
        before = _snapshot(first)
        hint = continue_hint(env.session.tree, first, catalogue(REASONING_MODEL))
        quoted = f"\N{LEFT DOUBLE QUOTATION MARK}{CONTINUE_PROMPT}\N{RIGHT DOUBLE QUOTATION MARK}"
        assert f"Continue, which asks {quoted}" in hint

        assert env.session.continue_reply(first.id) == first.id
        done = (await _turn(env, first.id, 2)).message
        body = chat_bodies(emulator)[-1]
        assert body["messages"][-1] == {"role": "user", "content": CONTINUE_PROMPT}
        prefill = body["messages"][-2]
        assert prefill["role"] == "assistant"
        assert prefill["content"] == before["content"]
        # The words are sent, never stored or shown: one reply, grown.
        assert [m.role for m in env.session.tree.path()] == ["user", "assistant"]
        assert done.content.startswith(before["content"])
        assert len(done.content) > len(before["content"])
        # View as code shows that request: the prefill and the words included.
        request = request_of(env.session.tree, first.id)
        assert [m.role for m in request.messages][-2:] == ["assistant", "user"]
        assert request.messages[-1].content == CONTINUE_PROMPT


@pytest.mark.asyncio
async def test_view_as_code_shows_the_last_request_and_says_it_is_the_continuation(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), max_tokens=6)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        first = await _cut_reply(env)
        cut = first.content
        env.session.continue_reply(first.id)
        await _turn(env, first.id, 2)
        await env.session.drain()
        for tree in (env.session.tree, await env.store.load_tree(env.session.id)):
            request = request_of(tree, first.id)
            assert request.messages[-1].role == "assistant"
            assert request.messages[-1].content == cut  # the prefill sent, not the whole text
            code = request_code_for(tree, first.id, conn=settings.conn)
            assert "2 requests" in code.note
            assert "extend" in code.note
        # Continued again, it was made by three; View as code shows the third.
        grown = env.session.tree.get(first.id).content
        env.session.continue_reply(first.id)
        await _turn(env, first.id, 3)
        request = request_of(env.session.tree, first.id)
        assert request.messages[-1].content == grown
        assert "3 requests" in request_code_for(env.session.tree, first.id, conn=None).note
        earlier = env.session.tree.get(first.id).request or {}
        assert len(earlier["earlier"]) == 2  # the records of the two requests before it


@pytest.mark.asyncio
async def test_a_continuation_cut_off_mid_stream_keeps_the_first_part(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), max_tokens=6)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        first = await _cut_reply(env)
        before = _snapshot(first)
        emulator.state.drop_after_tokens(2, model=MODEL)
        env.session.continue_reply(first.id)
        failed = await env.events.wait(TurnFailed, lambda e: e.message_id == first.id)
        assert failed.extra["partial"] > 0
        message = env.session.tree.get(first.id)
        assert message.content.startswith(before["content"])
        await env.session.drain()
        stored = (await env.store.load_tree(env.session.id)).get(first.id)
        assert stored.content == message.content
        assert (stored.usage or {}).get("completion_tokens", 0) >= 6  # the first part's kept
        # Still cut short: Continue is offered again, and goes on from the new end.
        assert stored.finish_reason == "length"
        assert can_continue(env.session.tree, message)
        kept = message.content
        assert env.session.continue_reply(first.id) == first.id
        done = (await _turn(env, first.id, 3)).message
        assert done.content.startswith(kept)
        assert chat_bodies(emulator)[-1]["messages"][-1]["content"] == kept


@pytest.mark.asyncio
@pytest.mark.parametrize("when", ["before sending", "waiting for the answer"])
async def test_a_continuation_stopped_keeps_the_first_part(
    emulator: EmulatorServer, tmp_path: Path, when: str
) -> None:
    settings = Settings(emulator_conn(emulator), max_tokens=6)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        first = await _cut_reply(env)
        before = _snapshot(first)
        if when == "waiting for the answer":
            emulator.state.delay_first_byte(30, model=MODEL)
        env.session.continue_reply(first.id)
        if when == "waiting for the answer":

            def sent(event: PhaseChanged) -> bool:
                return event.message_id == first.id and event.phase is Phase.SENT

            phases = [e for e in env.events.of(PhaseChanged) if sent(e)]
            await env.events.wait(PhaseChanged, lambda e: sent(e) and e not in phases)
        env.session.stop(first.id)
        stopped = (await _turn(env, first.id, 2)).message
        assert stopped.content == before["content"]
        await env.session.drain()
        stored = (await env.store.load_tree(env.session.id)).get(first.id)
        assert stored.content == before["content"]
        assert stored.finish_reason == "length"
        assert can_continue(env.session.tree, env.session.tree.get(first.id))
        assert [m.role for m in env.session.tree.path()] == ["user", "assistant"]


@pytest.mark.asyncio
async def test_wait_in_queue_during_a_continuation_goes_on_from_the_first_part(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True, max_tokens=6)
    catalogue = await catalogue_of(emulator)
    async with session_env(
        emulator, tmp_path, settings=settings, catalogue=catalogue, policy_factory=slow_policy()
    ) as env:
        first = await _cut_reply(env)
        cut = first.content
        emulator.state.hold_slots(MODEL, 600)
        env.session.continue_reply(first.id)
        await env.events.wait(RetryPlanned, lambda e: e.message_id == first.id)
        env.session.wait_in_queue(first.id)  # sent again at once, waiting in the queue
        await until(lambda: any(e.action == "queued" for e in emulator.state.capacity_log))
        emulator.state.advance_time(601)
        done = (await _turn(env, first.id, 2)).message
        assert done.status == "done"
        assert done.content.startswith(cut)
        assert len(done.content) > len(cut)
        body = chat_bodies(emulator)[-1]
        assert body["messages"][-1] == {"role": "assistant", "content": cut}
        assert [m.role for m in env.session.tree.path()] == ["user", "assistant"]


@pytest.mark.asyncio
async def test_a_continuation_that_ran_out_of_retries_is_sent_again_from_its_text(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), busy=True, max_tokens=6)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        first = await _cut_reply(env)
        cut = first.content
        emulator.state.hold_slots(MODEL, 600)
        env.session.continue_reply(first.id)
        failed = (await _turn(env, first.id, 2)).message
        assert failed.status == "failed"
        assert failed.content == cut  # kept, and still cut short
        assert failed.finish_reason == "length"
        env.session.wait_in_queue()  # the failed reply, sent again: it goes on from its text
        await until(lambda: any(e.action == "queued" for e in emulator.state.capacity_log))
        emulator.state.advance_time(601)
        done = (await _turn(env, first.id, 3)).message
        assert done.status == "done"
        assert done.content.startswith(cut)
        assert len(done.content) > len(cut)
        assert chat_bodies(emulator)[-1]["messages"][-1] == {"role": "assistant", "content": cut}


def test_combined_usage_counts_what_each_request_was_billed() -> None:
    first = (
        {"prompt_tokens": 10, "completion_tokens": 6, "neurons": 1.0},
        {"neurons": 1.0, "log_id": "L1"},
    )
    then = ({"prompt_tokens": 20, "completion_tokens": 4}, {"neurons": 2.5, "log_id": "L2"})
    usage, meta = combined(first, then)
    assert usage == {"prompt_tokens": 30, "completion_tokens": 10, "neurons": 1.0}
    assert meta is not None
    assert meta["neurons"] == 3.5
    assert meta["log_id"] == "L2"  # the last request's ids, the earlier ones kept
    assert meta["earlier"] == [{"log_id": "L1"}]
    third = ({"prompt_tokens": 40, "completion_tokens": 2}, {"neurons": 1.5, "log_id": "L3"})
    _, after = combined((usage, meta), third)
    assert after is not None
    assert after["earlier"] == [{"log_id": "L1"}, {"log_id": "L2"}]
    charged = ledger.charge(usage, meta, None)
    assert charged is not None
    assert charged.neurons == 3.5
    # A continuation the gateway answered from its cache ran no inference: only the first
    # part is billed, and the reply is not called a cache HIT.
    hit = ({"prompt_tokens": 20, "completion_tokens": 4}, {"neurons": 2.5, "cache_status": "HIT"})
    usage, meta = combined(first, hit)
    assert usage is not None
    assert meta is not None
    assert meta.get("cache_status") != "HIT"
    charged = ledger.charge(usage, meta, None)
    assert charged is not None
    assert charged.neurons == 1.0
    assert usage["prompt_tokens"] == 10
    # Both answered from the cache: nothing billed, and it says so.
    usage, meta = combined(hit, hit)
    assert ledger.charge(usage, meta, None) == ledger.Charge(0.0, 0.0, cached=True)

"""core.turn: the pure TurnState fold and run_turn's retry sequencing (fake client, no network)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, fields

import pytest

from flarechat.api.config import ChatMessage, ChatRequest, Connection, Secret
from flarechat.api.errors import (
    AuthenticationFailed,
    CapacityExceeded,
    DailyAllocationExhausted,
    StreamInterrupted,
    WorkersAIError,
)
from flarechat.api.events import (
    Finished,
    ReasoningDelta,
    ResponseMeta,
    StreamEvent,
    TextDelta,
    UsageReport,
)
from flarechat.core.turn import (
    RetryDecider,
    RetryScheduled,
    Rope,
    TurnEvent,
    TurnState,
    fail,
    fold,
    run_turn,
    stop,
)

CONN = Connection(account_id="0" * 32, token=Secret("unit-test-token"))
REQUEST = ChatRequest(
    model="@cf/meta/llama-3.1-8b-instruct-fast", messages=(ChatMessage("user", "hi"),)
)
META = ResponseMeta(status_code=200, request_id="req-1", neurons=1.5)

Step = StreamEvent | WorkersAIError


class ScriptedClient:
    """A stand-in for WorkersAIClient: each call to stream_chat plays the next script."""

    def __init__(self, *scripts: Sequence[Step], hang_after: int | None = None) -> None:
        self.scripts = list(scripts)
        self.calls = 0
        self.closed = 0
        self.hang_after = hang_after  # last script: block forever after this many events

    async def stream_chat(
        self, conn: Connection, request: ChatRequest
    ) -> AsyncIterator[StreamEvent]:
        assert conn is CONN
        assert request is REQUEST
        script = self.scripts[self.calls]
        self.calls += 1
        try:
            for index, step in enumerate(script):
                await asyncio.sleep(0)
                if index == self.hang_after:
                    await asyncio.Event().wait()
                if isinstance(step, WorkersAIError):
                    raise step
                yield step
        finally:
            self.closed += 1


@dataclass
class FakePolicy:
    """Mirrors RetryPolicy's rules with fixed delays, and records every question asked."""

    max_attempts: int = 3
    delay: float = 2.5
    asked: list[tuple[str, int, bool]] = field(default_factory=list)

    def next_delay(
        self, error: WorkersAIError, *, attempt: int, received_tokens: bool
    ) -> float | None:
        self.asked.append((error.kind, attempt, received_tokens))
        if received_tokens or not error.retryable or attempt >= self.max_attempts:
            return None
        return error.retry_after if error.retry_after is not None else self.delay * attempt


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def capacity(retry_after: float | None = None) -> CapacityExceeded:
    return CapacityExceeded("busy", status=429, code=3040, retry_after=retry_after)


async def collect(
    client: ScriptedClient, policy: RetryDecider, sleep: FakeSleep
) -> list[TurnEvent]:
    return [ev async for ev in run_turn(client, CONN, REQUEST, policy=policy, sleep=sleep)]


async def collect_into(
    seen: list[TurnEvent], client: ScriptedClient, policy: FakePolicy, sleep: FakeSleep
) -> None:
    async for event in run_turn(client, CONN, REQUEST, policy=policy, sleep=sleep):
        seen.append(event)


# --- fold -------------------------------------------------------------------------------------


def fold_all(events: Sequence[tuple[float, TurnEvent]]) -> TurnState:
    state = TurnState()
    for now, event in events:
        state = fold(state, event, now=now)
    return state


def test_fold_accumulates_text_reasoning_and_metadata() -> None:
    usage = UsageReport(prompt_tokens=10, completion_tokens=30, total_tokens=40)
    state = fold_all(
        [
            (100.0, META),
            (100.5, ReasoningDelta("think ")),
            (101.0, TextDelta("Hello")),
            (101.5, ReasoningDelta("more")),
            (102.0, TextDelta(", world")),
            (102.5, usage),
            (103.0, Finished("stop")),
        ]
    )
    assert state.text == "Hello, world"
    assert state.reasoning == "think more"
    assert state.meta == META
    assert state.usage == usage
    assert state.finish_reason == "stop"
    assert state.status == "done"
    assert state.is_final
    assert state.started_at == 100.0
    assert state.ttft == pytest.approx(0.5)
    assert state.duration == pytest.approx(3.0)
    # 30 reported completion tokens over 100.5 -> 103.0
    assert state.tokens_per_second == pytest.approx(12.0)
    assert not state.tokens_are_estimated
    assert state.neurons == 1.5


def test_fold_statuses_while_streaming() -> None:
    state = fold(TurnState(started_at=5.0), META, now=6.0)
    assert state.status == "waiting"
    assert state.ttft is None
    assert state.tokens_per_second is None
    state = fold(state, TextDelta("a"), now=7.0)
    assert state.status == "streaming"
    assert not state.is_final
    assert state.ttft == pytest.approx(2.0)
    assert state.started_at == 5.0  # an explicit start is kept


def test_tokens_per_second_estimates_from_characters_without_usage() -> None:
    state = fold_all(
        [(0.0, TextDelta("x" * 40)), (2.0, TextDelta("y" * 40)), (2.0, Finished("stop"))]
    )
    assert state.tokens_are_estimated
    assert state.completion_tokens == 20  # 80 chars / 4
    assert state.tokens_per_second == pytest.approx(10.0)


def test_neurons_fall_back_to_usage() -> None:
    state = fold_all(
        [
            (0.0, ResponseMeta(status_code=200)),
            (1.0, UsageReport(completion_tokens=3, neurons=7.25)),
        ]
    )
    assert state.neurons == 7.25
    assert fold(TurnState(), TextDelta("x")).neurons is None


def test_fold_without_clock_keeps_times_empty() -> None:
    state = fold(fold(TurnState(), TextDelta("hi")), Finished("length"))
    assert state.text == "hi"
    assert state.finish_reason == "length"
    assert state.ttft is None
    assert state.duration is None
    assert state.tokens_per_second is None


def test_retry_scheduled_resets_the_failed_attempts_response() -> None:
    error = capacity()
    retry = RetryScheduled(attempt=1, max_attempts=4, delay=2.0, error=error)
    state = fold_all([(0.0, META), (0.1, UsageReport(prompt_tokens=1)), (0.2, retry)])
    assert state.status == "waiting"
    assert state.meta is None
    assert state.usage is None
    assert state.attempt == 2
    assert state.last_retry is retry
    assert state.started_at == 0.0


def test_fold_is_pure() -> None:
    before = TurnState(text_rope=Rope.of("a"))
    after = fold(before, TextDelta("b"), now=1.0)
    assert before.text == "a"
    assert after.text == "ab"


def test_a_long_reply_leaves_no_object_per_piece_for_the_collector() -> None:
    # A linked node per token made every token an object that a full garbage collection
    # walks: one such pass paused the window for ~100 ms in the middle of a long reply.
    pieces = 5_000
    state = TurnState()
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(pieces):
        state = fold(state, TextDelta("tok "), now=1.0)
    grown = len(gc.get_objects()) - before
    assert grown < pieces // 100
    assert state.text == "tok " * pieces


def test_a_delta_changes_only_the_text_and_token_times() -> None:
    retry = RetryScheduled(attempt=1, max_attempts=4, delay=2.0, error=capacity())
    before = TurnState(
        text_rope=Rope.of("a"),
        usage=UsageReport(prompt_tokens=3),
        finish_reason="length",
        meta=META,
        attempt=2,
        last_retry=retry,
        started_at=0.5,
        headers_at=0.7,
        first_token_at=0.8,
        last_token_at=0.9,
        finished_at=None,
        note="json mode",
    )
    after = fold(before, TextDelta("b"), now=2.0)
    changed = {"status", "text_rope", "last_token_at"}
    for name in (f.name for f in fields(TurnState)):
        if name not in changed:
            assert getattr(after, name) is getattr(before, name), name
    assert (after.status, after.text, after.last_token_at) == ("streaming", "ab", 2.0)
    untimed = fold(TurnState(), ReasoningDelta("r"))
    assert (untimed.reasoning, untimed.first_token_at, untimed.last_token_at) == ("r", None, None)


def test_an_older_rope_grows_apart_from_the_newer() -> None:
    first = Rope.of("a").plus("b")
    newer = first.plus("c")
    fork = first.plus("x")  # an older state grown again keeps its own text
    assert (str(first), str(newer), str(fork)) == ("ab", "abc", "abx")
    assert (len(newer), len(fork)) == (3, 3)
    assert str(newer.plus("d")) == "abcd"
    assert str(first) == "ab"
    assert newer != fork
    assert Rope.of("abc") == newer


def test_fail_marks_interrupted_or_failed_and_keeps_text() -> None:
    partial = fold_all([(0.0, TextDelta("partial"))])
    cut = fail(partial, StreamInterrupted("cut"), now=3.0)
    assert (cut.status, cut.text, cut.finished_at) == ("interrupted", "partial", 3.0)
    assert isinstance(cut.error, StreamInterrupted)
    refused = fail(TurnState(), AuthenticationFailed("no", status=401, code=10000))
    assert refused.status == "failed"
    assert refused.is_final


def test_stop_keeps_partial_text() -> None:
    stopped = stop(fold_all([(0.0, TextDelta("so far"))]), now=1.0)
    assert (stopped.status, stopped.text, stopped.finished_at) == ("stopped", "so far", 1.0)


# --- run_turn ---------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_success_passes_events_through_without_retry() -> None:
    script: list[Step] = [META, TextDelta("Hi"), UsageReport(completion_tokens=1), Finished("stop")]
    client, policy, sleep = ScriptedClient(script), FakePolicy(), FakeSleep()
    assert await collect(client, policy, sleep) == script
    assert (client.calls, client.closed) == (1, 1)
    assert policy.asked == []
    assert sleep.delays == []


@pytest.mark.asyncio
async def test_retries_before_the_first_token() -> None:
    error = capacity()
    client = ScriptedClient([error], [META, error], [META, TextDelta("ok"), Finished("stop")])
    policy, sleep = FakePolicy(max_attempts=3, delay=1.0), FakeSleep()
    events = await collect(client, policy, sleep)
    assert events == [
        RetryScheduled(attempt=1, max_attempts=3, delay=1.0, error=error),
        META,
        RetryScheduled(attempt=2, max_attempts=3, delay=2.0, error=error),
        META,
        TextDelta("ok"),
        Finished("stop"),
    ]
    assert sleep.delays == [1.0, 2.0]
    assert policy.asked == [("capacity", 1, False), ("capacity", 2, False)]
    assert (client.calls, client.closed) == (3, 3)


@pytest.mark.asyncio
async def test_no_retry_after_the_first_token() -> None:
    error = StreamInterrupted("cut")
    client = ScriptedClient([META, TextDelta("part"), error], [META, TextDelta("never")])
    policy, sleep = FakePolicy(), FakeSleep()
    seen: list[TurnEvent] = []
    with pytest.raises(StreamInterrupted):
        await collect_into(seen, client, policy, sleep)
    assert seen == [META, TextDelta("part")]
    assert policy.asked == [("interrupted", 1, True)]
    assert sleep.delays == []
    assert client.calls == 1


@pytest.mark.asyncio
async def test_reasoning_counts_as_a_received_token() -> None:
    client = ScriptedClient([META, ReasoningDelta("hmm"), capacity()])
    policy = FakePolicy()
    with pytest.raises(CapacityExceeded):
        await collect(client, policy, FakeSleep())
    assert policy.asked == [("capacity", 1, True)]


@pytest.mark.asyncio
async def test_retry_after_is_what_gets_slept() -> None:
    client = ScriptedClient([capacity(retry_after=7.0)], [META, Finished("stop")])
    sleep = FakeSleep()
    events = await collect(client, FakePolicy(), sleep)
    assert sleep.delays == [7.0]
    assert isinstance(events[0], RetryScheduled)
    assert events[0].delay == 7.0


@pytest.mark.asyncio
async def test_budget_exhausted_raises_the_last_error() -> None:
    errors = [capacity() for _ in range(3)]
    client = ScriptedClient(*([e] for e in errors))
    policy, sleep = FakePolicy(max_attempts=3), FakeSleep()
    with pytest.raises(CapacityExceeded) as raised:
        await collect(client, policy, sleep)
    assert raised.value is errors[-1]
    assert client.calls == 3
    assert len(sleep.delays) == 2
    assert [attempt for _, attempt, _ in policy.asked] == [1, 2, 3]


@pytest.mark.parametrize(
    "error",
    [
        DailyAllocationExhausted("daily", status=429, code=4006),
        AuthenticationFailed("auth", status=401, code=10000),
    ],
)
@pytest.mark.asyncio
async def test_non_retryable_raises_at_once(error: WorkersAIError) -> None:
    client = ScriptedClient([error], [META])
    policy, sleep = FakePolicy(), FakeSleep()
    with pytest.raises(type(error)):
        await collect(client, policy, sleep)
    assert client.calls == 1
    assert sleep.delays == []
    assert policy.asked == [(error.kind, 1, False)]


@pytest.mark.asyncio
async def test_retry_sleep_may_return_early_and_the_next_attempt_starts() -> None:
    """The UI's "Retry now" resolves the sleep early; run_turn just carries on."""
    woken = asyncio.Event()

    async def interruptible_sleep(delay: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(woken.wait(), timeout=delay)

    client = ScriptedClient([capacity()], [META, TextDelta("now"), Finished("stop")])
    turn = run_turn(
        client, CONN, REQUEST, policy=FakePolicy(delay=3600.0), sleep=interruptible_sleep
    )
    async with contextlib.aclosing(turn):
        first = await anext(turn)
        assert isinstance(first, RetryScheduled)
        woken.set()
        rest = [event async for event in turn]
    assert rest == [META, TextDelta("now"), Finished("stop")]


@pytest.mark.asyncio
async def test_cancellation_mid_stream_closes_the_client_stream() -> None:
    client = ScriptedClient([META, TextDelta("a"), TextDelta("b")], hang_after=2)
    seen: list[TurnEvent] = []
    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in run_turn(client, CONN, REQUEST, policy=FakePolicy(), sleep=FakeSleep()):
            seen.append(event)
            if isinstance(event, TextDelta):
                got_text.set()

    task = asyncio.create_task(consume())
    await got_text.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == [META, TextDelta("a")]
    assert client.closed == 1


@pytest.mark.asyncio
async def test_cancellation_during_the_retry_wait() -> None:
    client = ScriptedClient([capacity()], [META])
    retry_seen = asyncio.Event()

    async def consume() -> None:
        turn = run_turn(client, CONN, REQUEST, policy=FakePolicy(delay=3600.0))
        async for event in turn:
            if isinstance(event, RetryScheduled):
                retry_seen.set()

    task = asyncio.create_task(consume())
    await retry_seen.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (client.calls, client.closed) == (1, 1)


@pytest.mark.asyncio
async def test_breaking_out_early_closes_the_client_stream() -> None:
    client = ScriptedClient([META, TextDelta("a"), TextDelta("b"), Finished("stop")])
    turn = run_turn(client, CONN, REQUEST, policy=FakePolicy(), sleep=FakeSleep())
    async with contextlib.aclosing(turn):
        async for event in turn:
            if isinstance(event, TextDelta):
                break
    assert client.closed == 1


# --- with the real api.retry.RetryPolicy --------------------------------------------------------


@pytest.mark.asyncio
async def test_real_policy_waits_retry_after_then_backoff() -> None:
    from flarechat.api.errors import RateLimited
    from flarechat.api.retry import RetryPolicy

    limited = RateLimited("slow down", status=429, code=3021, retry_after=7.0)
    client = ScriptedClient([limited], [capacity()], [META, TextDelta("ok"), Finished("stop")])
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0, random=lambda: 0.0)
    sleep = FakeSleep()
    events = [e async for e in run_turn(client, CONN, REQUEST, policy=policy, sleep=sleep)]
    # Retry-After is waited exactly; then equal-jitter backoff (half fixed) for attempt 2
    assert sleep.delays == [7.0, 1.0]
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert [(r.attempt, r.max_attempts) for r in retries] == [(1, 4), (2, 4)]
    assert events[-1] == Finished("stop")


@pytest.mark.asyncio
async def test_real_policy_never_retries_after_text_or_for_the_daily_limit() -> None:
    from flarechat.api.retry import RetryPolicy

    policy = RetryPolicy(random=lambda: 0.0)
    after_text = ScriptedClient([META, TextDelta("x"), capacity()])
    with pytest.raises(CapacityExceeded):
        await collect(after_text, policy, FakeSleep())
    daily = ScriptedClient([DailyAllocationExhausted("daily", status=429, code=4006)])
    sleep = FakeSleep()
    with pytest.raises(DailyAllocationExhausted):
        await collect(daily, policy, sleep)
    assert (after_text.calls, daily.calls, sleep.delays) == (1, 1, [])


def test_tool_call_fragments_accumulate_per_index_and_finished_calls_win() -> None:
    from flarechat.api.events import StreamingDisabled, ToolCallDelta
    from flarechat.api.tools import ToolCall

    state = TurnState()
    for event in (
        ToolCallDelta(0, id="call_a", name="get_weather", arguments='{"ci'),
        ToolCallDelta(1, id="call_b", name="get_time"),
        ToolCallDelta(0, arguments='ty":"Paris"}'),
        ToolCallDelta(1, arguments="{}"),
    ):
        state = fold(state, event, now=1.0)
    assert state.received_tokens
    assert [(c.id, c.name, c.arguments) for c in state.calls] == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_time", {}),
    ]
    final = ToolCall.of(id="call_a", name="get_weather", arguments={"city": "Paris"})
    state = fold(state, Finished("tool_calls", tool_calls=(final,)), now=2.0)
    assert state.tool_calls == state.calls == (final,)
    noted = fold(TurnState(), StreamingDisabled("JSON mode does not stream."))
    assert noted.note == "JSON mode does not stream."


def test_a_tool_call_fragment_adds_to_the_log_it_shares_and_copies_no_earlier_call() -> None:
    """Issue 25 item 6: 10,000 calls were quadratic (each fragment copied and searched every
    draft). A fragment now appends to the fragment log the state before shares."""
    from flarechat.api.events import ToolCallDelta

    state = TurnState()
    for index in range(10_000):
        state = fold(state, ToolCallDelta(index, id=f"c{index}", name="f"), now=1.0)
        state = fold(state, ToolCallDelta(index, arguments=f'{{"n": {index}}}'), now=1.0)
    before = state
    after = fold(before, ToolCallDelta(10_000, id="last", name="g", arguments="{}"))
    assert after.tool_drafts._shared is before.tool_drafts._shared  # appended, not copied
    assert (len(before.tool_drafts), len(after.tool_drafts)) == (20_000, 20_001)
    calls = after.calls
    assert len(calls) == 10_001
    assert (calls[0].id, calls[0].arguments) == ("c0", {"n": 0})
    assert (calls[9_999].id, calls[9_999].arguments) == ("c9999", {"n": 9_999})
    assert (calls[-1].id, calls[-1].name) == ("last", "g")
    fork = fold(before, ToolCallDelta(0, arguments="x"))  # an older state grown again
    assert len(fork.calls) == 10_000
    assert fork.calls[0].arguments_json == '{"n": 0}x'
    assert after.calls[0].arguments_json == '{"n": 0}'  # the newer one is untouched
    assert len(before.calls) == 10_000


def test_id_less_streamed_calls_get_the_legacy_numbered_ids() -> None:
    from flarechat.api.events import ToolCallDelta

    state = fold(TurnState(), ToolCallDelta(0, name="f", arguments="{}"))
    assert [c.id for c in state.calls] == ["000000001"]

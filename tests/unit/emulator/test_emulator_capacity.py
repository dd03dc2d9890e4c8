"""The capacity model: slots per model, rejectIfBusy fails fast, otherwise a FIFO queue."""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

import httpx
import pytest
from emulator_helpers import GEMMA, LLAMA, PATIENCE, QWQ, ask, chat_url, run_url, wait_until

from flarechat.emulator.capacity import CapacityEvent
from flarechat.emulator.server import EmulatorServer

REJECT = {"options": {"rejectIfBusy": True}}


def _actions(emulator: EmulatorServer, request_id: str) -> list[str]:
    return [e.action for e in emulator.state.capacity_log if e.request_id == request_id]


def _queued_ids(emulator: EmulatorServer) -> list[str]:
    return [e.request_id for e in emulator.state.capacity_log if e.action == "queued"]


def _has_queued(emulator: EmulatorServer, count: int) -> bool:
    return len(_queued_ids(emulator)) == count


def test_reject_if_busy_fails_at_once_when_all_slots_are_held(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.hold_slots(LLAMA, 3600)
    reply = http.post(run_url(emulator, LLAMA), json=ask("hi", **REJECT))
    assert reply.status_code == 429
    req_id = reply.headers["cf-ai-req-id"]
    message = f"AiError: AiError: Capacity temporarily exceeded, please try again. ({req_id})"
    assert reply.json() == {
        "errors": [{"message": message, "code": 3040}],
        "success": False,
        "result": {},
        "messages": [],
    }
    assert "cf-ai-neurons" not in reply.headers
    assert _actions(emulator, req_id) == ["rejected"]
    chat = http.post(chat_url(emulator), json=ask("hi", model=LLAMA, **REJECT))
    assert chat.status_code == 429  # the same on the OpenAI endpoint
    other = http.post(run_url(emulator, GEMMA), json=ask("hi", **REJECT))
    assert other.status_code == 200  # a hold is per model


def test_without_reject_if_busy_the_request_waits_then_succeeds(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.hold_slots(LLAMA, 3600)
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(http.post, run_url(emulator, LLAMA), json=ask("queue me"))
        wait_until(lambda: bool(_queued_ids(emulator)), "the request to queue")
        assert not future.done()
        emulator.state.advance_time(3601)  # the hold expires without real waiting
        reply = future.result(timeout=PATIENCE)
    assert reply.status_code == 200
    assert "queue me" in reply.json()["result"]["response"]
    assert _actions(emulator, reply.headers["cf-ai-req-id"]) == ["queued", "acquired", "released"]


def test_a_short_hold_expires_by_itself(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.hold_slots(QWQ, 1.0)  # long enough for the request below to find it held
    reply = http.post(run_url(emulator, QWQ), json=ask("hi"))
    assert reply.status_code == 200
    assert _actions(emulator, reply.headers["cf-ai-req-id"]) == ["queued", "acquired", "released"]


def test_queue_is_first_in_first_out(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.set_slots(LLAMA, 1)
    emulator.state.hold_slots(LLAMA, 3600)
    futures: list[Future[httpx.Response]] = []
    with ThreadPoolExecutor(max_workers=3) as pool:
        for n in range(3):
            futures.append(pool.submit(http.post, run_url(emulator, LLAMA), json=ask(f"q{n}")))
            wait_until(partial(_has_queued, emulator, n + 1), f"request {n} to queue")
        emulator.state.hold_slots(LLAMA, 0)
        replies = [f.result(timeout=PATIENCE) for f in futures]
    queued = [r.headers["cf-ai-req-id"] for r in replies]
    assert _queued_ids(emulator) == queued
    acquired = [e.request_id for e in emulator.state.capacity_log if e.action == "acquired"]
    assert acquired == queued


def test_a_running_request_holds_its_slot_until_it_ends(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    state = emulator.state
    state.set_slots(GEMMA, 1)
    state.tokens_per_second = 2.0  # slow enough that nothing below races the first reply
    body = ask("first", stream=True, max_tokens=20)
    with http.stream("POST", run_url(emulator, GEMMA), json=body) as first:
        first_id = first.headers["cf-ai-req-id"]
        rejected = http.post(run_url(emulator, GEMMA), json=ask("second", **REJECT))
        assert rejected.status_code == 429
        with ThreadPoolExecutor(max_workers=1) as pool:
            waiting = pool.submit(http.post, run_url(emulator, GEMMA), json=ask("third"))
            wait_until(lambda: len(_queued_ids(emulator)) == 1, "the third request to queue")
            state.tokens_per_second = 50_000.0
            first.read()
            third = waiting.result(timeout=PATIENCE)
    assert third.status_code == 200
    log = state.capacity_log
    released_first = log.index(CapacityEvent("released", GEMMA, first_id))
    acquired_third = log.index(CapacityEvent("acquired", GEMMA, third.headers["cf-ai-req-id"]))
    assert released_first < acquired_third


def test_two_slots_serve_two_requests_at_once(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.tokens_per_second = 2.0
    body = ask("slow", stream=True, max_tokens=40)
    with (
        http.stream("POST", run_url(emulator, LLAMA), json=body) as one,
        http.stream("POST", run_url(emulator, LLAMA), json=body) as two,
    ):
        assert one.status_code == two.status_code == 200
        third = http.post(run_url(emulator, LLAMA), json=ask("hi", **REJECT))
        assert third.status_code == 429
        emulator.state.tokens_per_second = 50_000.0
    actions = [e.action for e in emulator.state.capacity_log]
    assert actions[:3] == ["acquired", "acquired", "rejected"]


def test_leaving_the_queue_frees_the_place(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.hold_slots(LLAMA, 3600)
    impatient = httpx.Timeout(PATIENCE, read=0.3)
    with pytest.raises(httpx.ReadTimeout):
        http.post(run_url(emulator, LLAMA), json=ask("hi"), timeout=impatient)
    wait_until(
        lambda: any(e.action == "left-queue" for e in emulator.state.capacity_log),
        "the abandoned request to leave the queue",
    )
    emulator.state.hold_slots(LLAMA, 0)
    assert http.post(run_url(emulator, LLAMA), json=ask("hi", **REJECT)).status_code == 200


def test_set_slots_is_validated_and_reset_restores_defaults(emulator: EmulatorServer) -> None:
    state = emulator.state
    state.set_slots(LLAMA, 4)
    assert state.capacity.slots(LLAMA) == 4
    with pytest.raises(ValueError, match="at least one"):
        state.set_slots(LLAMA, 0)
    state.reset()
    assert state.capacity.slots(LLAMA) == emulator.config.slots
    assert state.capacity_log == []
    assert json.dumps(state.control("capacity_log", {})) == "[]"

"""The HTTP control endpoint and the state's thread-safe controls, used from other threads."""

from __future__ import annotations

import threading

import httpx
import pytest
from emulator_helpers import LLAMA, ask, run_url

from flarechat.emulator.app import CONTROL_PATH
from flarechat.emulator.server import EmulatorServer
from flarechat.emulator.state import CONTROL_ACTIONS, EmulatorState


def _control(emulator: EmulatorServer, **payload: object) -> httpx.Response:
    headers = {"X-Emulator-Control": emulator.control_token}
    return httpx.post(emulator.base_url + CONTROL_PATH, json=payload, headers=headers)


def test_control_endpoint_scripts_faults(emulator: EmulatorServer, http: httpx.Client) -> None:
    scripted = _control(
        emulator, action="fail_next", n=1, code=3040, status=429, body_style="v4-inference"
    )
    assert scripted.json() == {"ok": True, "result": None}
    assert http.post(run_url(emulator, LLAMA), json=ask("hi")).status_code == 429
    assert http.post(run_url(emulator, LLAMA), json=ask("hi")).status_code == 200


def test_control_endpoint_reports_requests_and_is_not_recorded(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    http.post(
        run_url(emulator, LLAMA),
        json=ask("logged"),
        headers={"cf-aig-authorization": "Bearer gateway-secret"},
    )
    response = _control(emulator, action="requests")
    listed = response.json()["result"]
    assert len(listed) == 1
    assert listed[0]["json"] == ask("logged")
    assert listed[0]["path"].endswith(LLAMA)
    # Even behind the control token the endpoint never hands credentials back.
    assert listed[0]["headers"]["authorization"] == "Bearer [REDACTED]"
    assert listed[0]["headers"]["cf-aig-authorization"] == "Bearer [REDACTED]"
    assert "test-token" not in response.text
    assert "gateway-secret" not in response.text
    assert emulator.state.requests[0].headers["authorization"] == "Bearer test-token"  # in-process
    assert all(r.path != CONTROL_PATH for r in emulator.state.requests)


def test_control_endpoint_holds_slots_and_resets(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    _control(emulator, action="hold_slots", model=LLAMA, seconds=3600)
    busy = http.post(run_url(emulator, LLAMA), json=ask("hi", options={"rejectIfBusy": True}))
    assert busy.status_code == 429
    log = _control(emulator, action="capacity_log").json()["result"]
    assert log == [
        {"action": "rejected", "model": LLAMA, "request_id": busy.headers["cf-ai-req-id"]}
    ]
    assert _control(emulator, action="reset").json()["ok"] is True
    assert emulator.state.requests == []
    idle = http.post(run_url(emulator, LLAMA), json=ask("hi", options={"rejectIfBusy": True}))
    assert idle.status_code == 200


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"action": "format_disk"}, "unknown action"),
        ({"action": "fail_next", "n": 1}, "code"),
        ({"action": "set_tokens_per_second", "value": -1}, "positive"),
        ({"nothing": True}, "action"),
        ({"action": "fail_next", "code": 3040, "status": 99}, "status"),
        ({"action": "fail_next", "code": 3040, "status": 700}, "status"),
        ({"action": "fail_next", "code": "x", "status": 429}, "code"),
        ({"action": "set_variant", "name": "json_stream", "value": "maybe"}, "json_stream"),
    ],
)
def test_control_endpoint_rejects_bad_calls(
    emulator: EmulatorServer, payload: dict[str, object], fragment: str
) -> None:
    reply = _control(emulator, **payload)
    assert reply.status_code == 400
    assert reply.json()["ok"] is False
    assert fragment in reply.json()["error"]


def test_every_control_action_is_a_state_method_or_property() -> None:
    for action in CONTROL_ACTIONS:
        member = getattr(EmulatorState, action)
        assert callable(member) or isinstance(member, property), action


def test_controls_are_safe_from_many_threads() -> None:
    state = EmulatorState()
    rounds = 200

    def script() -> None:
        for _ in range(rounds):
            state.fail_next(1, code=3040, status=429)
            state.take_failure(LLAMA)
            state.hold_slots(LLAMA, 0)

    threads = [threading.Thread(target=script) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state.take_failure(LLAMA) is None  # every scripted failure was taken exactly once


def test_stream_faults_merge_and_are_used_once() -> None:
    state = EmulatorState()
    state.drop_after_tokens(5)
    state.malformed_chunks(2)
    faults = state.take_stream_faults(LLAMA)
    assert (faults.drop_after, faults.malformed, faults.error_after) == (5, 2, None)
    assert state.take_stream_faults(LLAMA) == type(faults)()

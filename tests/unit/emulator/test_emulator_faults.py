"""Scripted faults: failures in every body style, drops, error events, malformed lines, delays."""

from __future__ import annotations

import json

import httpx
import pytest
from emulator_helpers import (
    GEMMA,
    LLAMA,
    QWQ,
    ask,
    chat_url,
    gateway_url,
    run_url,
    sse_payloads,
    wait_until,
)

from flarechat.emulator.server import EmulatorServer


def test_fail_next_counts_down_then_recovers(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.fail_next(2, code=3040, status=429)
    statuses = [http.post(run_url(emulator, LLAMA), json=ask("hi")).status_code for _ in range(3)]
    assert statuses == [429, 429, 200]


def test_fail_next_v4_body_and_retry_after(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.fail_next(1, code=3021, status=429, retry_after=2.5, message="Slow down")
    reply = http.post(run_url(emulator, LLAMA), json=ask("hi"))
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "2.5"
    assert reply.content == (
        b'{"result":null,"success":false,"errors":[{"code":3021,"message":"Slow down"}],'
        b'"messages":[]}'
    )


def test_fail_next_inference_style_uses_the_default_message(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.fail_next(1, code=4006, status=429, body_style="v4-inference")
    reply = http.post(run_url(emulator, LLAMA), json=ask("hi"))
    body = reply.json()
    assert list(body) == ["errors", "success", "result", "messages"]
    message = body["errors"][0]["message"]
    assert message.startswith("AiError: AiError: you have used up your daily free allocation")
    assert message.endswith(f"({reply.headers['cf-ai-req-id']})")
    assert "retry-after" not in reply.headers


def test_fail_next_bare_gateway_aierror_and_html_styles(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    state = emulator.state
    state.fail_next(
        1, code=3040, status=429, body_style="v4-bare", message="Capacity temporarily exceeded"
    )
    state.fail_next(1, code=2003, status=429, body_style="gateway")
    state.fail_next(1, code=5021, status=413, body_style="aierror", message="Too long.")
    state.fail_next(1, code=0, status=502, body_style="html")
    bare, gateway, aierror, html = (
        http.post(run_url(emulator, LLAMA), json=ask("hi")) for _ in range(4)
    )
    assert bare.json() == {"errors": [{"message": "Capacity temporarily exceeded", "code": 3040}]}
    assert gateway.json() == {
        "success": False,
        "result": [],
        "messages": [],
        "error": [{"code": 2003, "message": "Rate limited"}],
        "name": "AiGatewayError",
        "httpCode": 429,
        "internalCode": 2003,
    }
    body = aierror.json()
    assert (body["name"], body["internalCode"], body["httpCode"]) == ("AiError", 5021, 413)
    assert body["description"] == "Too long."
    assert body["message"].startswith("AiError: Too long. (")
    assert html.status_code == 502
    assert html.headers["content-type"].startswith("text/html")
    assert b"<h1>502 Bad Gateway</h1>" in html.content


def test_fail_next_rejects_an_unknown_body_style(emulator: EmulatorServer) -> None:
    with pytest.raises(ValueError, match="body_style"):
        emulator.state.fail_next(1, code=3040, status=429, body_style="xml")
    with pytest.raises(ValueError, match="positive"):
        emulator.state.fail_next(0, code=3040, status=429)


def test_fail_next_for_one_model_only(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.fail_next(1, code=3040, status=429, model=GEMMA)
    assert http.post(run_url(emulator, LLAMA), json=ask("hi")).status_code == 200
    assert http.post(chat_url(emulator), json=ask("hi", model=GEMMA)).status_code == 429
    assert http.post(run_url(emulator, GEMMA), json=ask("hi")).status_code == 200


def test_faults_apply_through_the_gateway_too(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.fail_next(1, code=2021, status=402, body_style="gateway")
    reply = http.post(gateway_url(emulator, f"workers-ai/{LLAMA}"), json=ask("hi"))
    assert reply.status_code == 402
    assert reply.json()["error"][0]["code"] == 2021
    assert reply.headers["cf-aig-cache-status"] == "MISS"


def _read_lines(
    http: httpx.Client, url: str, *, body: dict[str, object], into: list[bytes]
) -> None:
    with http.stream("POST", url, json=body) as reply:
        for line in reply.iter_lines():
            into.append(line.encode())


def test_drop_after_tokens_cuts_the_connection(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.drop_after_tokens(4)
    lines: list[bytes] = []
    with pytest.raises(httpx.RemoteProtocolError):  # the chunked body never completes
        _read_lines(http, run_url(emulator, LLAMA), body=ask("hi", stream=True), into=lines)
    events = [json.loads(line.removeprefix(b"data: ")) for line in lines if line]
    assert [e["response"] != "" for e in events] == [False, True, True, True, True]
    assert b"data: [DONE]" not in lines
    wait_until(
        lambda: any(e.action == "released" for e in emulator.state.capacity_log),
        "the dropped stream to release its slot",
    )
    assert http.post(run_url(emulator, LLAMA), json=ask("hi", stream=True)).status_code == 200


def test_drop_after_tokens_can_end_cleanly(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.drop_after_tokens(2, abrupt=False)
    reply = http.post(run_url(emulator, GEMMA), json=ask("hi", stream=True))
    payloads = sse_payloads(reply.content)
    assert len(payloads) == 3  # role chunk + two tokens, no usage, no [DONE]
    assert b"[DONE]" not in payloads


def test_error_event_after_tokens(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.error_event_after(3, code=3040)
    payloads = sse_payloads(
        http.post(run_url(emulator, LLAMA), json=ask("hi", stream=True)).content
    )
    assert len(payloads) == 1 + 3 + 1
    assert json.loads(payloads[-1]) == {
        "errors": [{"code": 3040, "message": "Capacity temporarily exceeded, please try again."}]
    }
    again = http.post(run_url(emulator, LLAMA), json=ask("hi", stream=True))
    assert sse_payloads(again.content)[-1] == b"[DONE]"  # the fault was used up


def test_malformed_chunks_among_valid_ones(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.malformed_chunks(3)
    payloads = sse_payloads(http.post(run_url(emulator, QWQ), json=ask("hi", stream=True)).content)
    broken = []
    for payload in payloads[:-1]:
        try:
            json.loads(payload)
        except ValueError:
            broken.append(payload)
    assert len(broken) == 3
    assert payloads[-1] == b"[DONE]"


def test_stream_faults_wait_for_their_model(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.state.drop_after_tokens(1, abrupt=False, model=GEMMA)
    whole = http.post(run_url(emulator, LLAMA), json=ask("hi", stream=True))
    assert sse_payloads(whole.content)[-1] == b"[DONE]"
    cut = http.post(run_url(emulator, GEMMA), json=ask("hi", stream=True))
    assert sse_payloads(cut.content)[-1] != b"[DONE]"


def test_plain_requests_do_not_use_up_stream_faults(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.error_event_after(0)
    assert http.post(run_url(emulator, LLAMA), json=ask("hi")).status_code == 200
    stream = http.post(run_url(emulator, LLAMA), json=ask("hi", stream=True))
    assert b'"errors"' in sse_payloads(stream.content)[1]


def test_delay_first_byte_trips_a_client_read_timeout(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.delay_first_byte(30)
    impatient = httpx.Timeout(10.0, read=0.3)
    with pytest.raises(httpx.ReadTimeout):
        http.post(run_url(emulator, LLAMA), json=ask("hi"), timeout=impatient)
    # the client gave up, so the server stopped waiting and gave the slot back
    wait_until(
        lambda: any(e.action == "released" for e in emulator.state.capacity_log),
        "the abandoned request to release its slot",
    )
    assert http.post(run_url(emulator, LLAMA), json=ask("hi"), timeout=impatient).status_code == 200


def test_delay_first_byte_applies_to_the_next_n(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.delay_first_byte(0.05, n=2)
    for _ in range(3):
        assert http.post(run_url(emulator, LLAMA), json=ask("hi")).status_code == 200
    with pytest.raises(ValueError, match=">= 0"):
        emulator.state.delay_first_byte(-1)


def test_tokens_per_second_is_validated(emulator: EmulatorServer) -> None:
    emulator.state.tokens_per_second = 123.0
    assert emulator.state.tokens_per_second == 123.0
    with pytest.raises(ValueError, match="positive"):
        emulator.state.set_tokens_per_second(0)
    emulator.state.reset()
    assert emulator.state.tokens_per_second == emulator.config.tokens_per_second


def test_tokens_are_paced_while_the_slot_is_held(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.tokens_per_second = 2.0
    body = ask("hi", stream=True, max_tokens=40)
    with http.stream("POST", run_url(emulator, LLAMA), json=body) as reply:
        lines = reply.iter_lines()
        assert next(lines).startswith("data: ")  # the empty opening event
        assert next(lines) == ""
        assert next(lines).startswith("data: ")  # the first token ...
        actions = [e.action for e in emulator.state.capacity_log]
        assert actions == ["acquired"]  # ... arrives while the reply is still being generated
        emulator.state.tokens_per_second = 50_000.0
        rest = [line for line in lines if line]
    assert rest[-1] == "data: [DONE]"
    assert len(rest) == 39 + 2

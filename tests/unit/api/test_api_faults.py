"""The client against the emulator's faults: error classes, broken streams, capacity, timeouts."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import pytest
from api_helpers import (
    GATEWAY_TOKEN,
    KIMI,
    LEGACY_MODEL,
    collect,
    drain,
    emu_conn,
    finish_of,
    short_chat,
    text_of,
)

from conftest import ClientFactory
from flarechat.api.config import Endpoint, Route, Secret
from flarechat.api.errors import (
    AuthenticationFailed,
    BadRequest,
    CapacityExceeded,
    DailyAllocationExhausted,
    GatewayAuthenticationFailed,
    GatewayError,
    ModelUnavailable,
    RateLimited,
    RequestTimedOut,
    RequestTooLarge,
    ServerError,
    StreamInterrupted,
    TermsNotAccepted,
    UpstreamTimeout,
    WorkersAIError,
)
from flarechat.api.events import Finished, ResponseMeta
from flarechat.api.retry import RetryPolicy

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

#: Generous bound for waiting on the emulator (the machine is shared); never asserted as timing.
PATIENCE = 10.0

ERROR_CASES = [
    (3040, 429, "v4-inference", CapacityExceeded),
    (4006, 429, "v4-inference", DailyAllocationExhausted),
    (3036, 429, "v4", DailyAllocationExhausted),
    (3021, 429, "v4-bare", RateLimited),
    (2003, 429, "gateway", RateLimited),
    (10000, 401, "v4", AuthenticationFailed),
    (10000, 403, "v4", AuthenticationFailed),
    (2009, 401, "gateway", GatewayAuthenticationFailed),
    (5007, 400, "v4-inference", ModelUnavailable),
    (3042, 404, "v4-inference", ModelUnavailable),
    (5028, 400, "v4-inference", ModelUnavailable),
    (5035, 403, "v4-inference", ModelUnavailable),
    (5016, 403, "v4-inference", TermsNotAccepted),
    (3006, 413, "v4-inference", RequestTooLarge),
    (5021, 413, "aierror", RequestTooLarge),
    (3007, 408, "v4-inference", UpstreamTimeout),
    (3046, 408, "v4-inference", UpstreamTimeout),
    (2001, 400, "gateway", GatewayError),
    (2021, 402, "v4-bare", GatewayError),
    (2041, 429, "gateway", GatewayError),
    (3001, 500, "v4-inference", ServerError),
    (0, 502, "html", ServerError),
    (0, 403, "html", BadRequest),
    (5006, 400, "v4-inference", BadRequest),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("code", "status", "style", "cls"), ERROR_CASES)
async def test_every_error_class_from_the_wire(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    code: int,
    status: int,
    style: str,
    cls: type[WorkersAIError],
) -> None:
    emulator.state.fail_next(1, code=code, status=status, body_style=style)
    stream = make_client().stream_chat(emu_conn(emulator), short_chat())
    with pytest.raises(cls) as caught:
        await anext(stream)  # raised before any event, even ResponseMeta
    error = caught.value
    assert type(error) is cls
    assert error.status == status
    assert error.code == (code or None)
    assert "<" not in error.message
    assert "AiError" not in error.message
    assert error.detail


@pytest.mark.asyncio
async def test_retry_after_from_the_wire_drives_the_policy(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.fail_next(1, code=3040, status=429, retry_after=7, body_style="v4-inference")
    with pytest.raises(CapacityExceeded) as caught:
        await collect(make_client(), emu_conn(emulator), short_chat())
    assert caught.value.retry_after == 7.0
    assert RetryPolicy().next_delay(caught.value, attempt=1, received_tokens=False) == 7.0


@pytest.mark.asyncio
@pytest.mark.parametrize("abrupt", [True, False])
async def test_dropped_stream_is_interrupted_with_partial_text(
    make_client: ClientFactory, emulator: EmulatorServer, abrupt: bool
) -> None:
    emulator.state.drop_after_tokens(3, abrupt=abrupt)
    seen, error = await drain(make_client(), emu_conn(emulator), short_chat())
    assert isinstance(error, StreamInterrupted)
    assert text_of(seen), "the partial text arrived before the failure"


@pytest.mark.asyncio
@pytest.mark.parametrize("endpoint", list(Endpoint))
async def test_error_event_mid_stream(
    make_client: ClientFactory, emulator: EmulatorServer, endpoint: Endpoint
) -> None:
    emulator.state.error_event_after(2, code=3040)
    seen, error = await drain(make_client(), emu_conn(emulator, endpoint=endpoint), short_chat())
    # The error event arrives after text, as an error (not as more text), with its own code.
    assert isinstance(error, CapacityExceeded)
    assert error.code == 3040
    assert text_of(seen)
    assert not any(isinstance(e, Finished) for e in seen)
    # That very error, with what the stream delivered, is not retried: text was shown.
    policy = RetryPolicy(random=lambda: 0.0)
    received = bool(text_of(seen))
    assert policy.next_delay(error, attempt=1, received_tokens=received) is None
    # …and only because of the text: the same error before any token would be retried.
    assert policy.next_delay(error, attempt=1, received_tokens=False) is not None


@pytest.mark.asyncio
@pytest.mark.parametrize("endpoint", list(Endpoint))
async def test_malformed_chunks_are_skipped(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    endpoint: Endpoint,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = make_client()
    conn = emu_conn(emulator, endpoint=endpoint)
    clean = await collect(client, conn, short_chat("same question"))
    emulator.state.malformed_chunks(2)
    with caplog.at_level(logging.WARNING, logger="flarechat.api"):
        noisy = await collect(client, conn, short_chat("same question"))
    assert text_of(noisy) == text_of(clean)
    assert finish_of(noisy) == finish_of(clean)
    assert sum("malformed" in r.getMessage() for r in caplog.records) == 2


@pytest.mark.asyncio
async def test_slow_first_byte_beyond_the_read_timeout(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.delay_first_byte(3.0)
    conn = emu_conn(emulator, read_timeout=0.25)
    with pytest.raises(RequestTimedOut) as caught:
        await collect(make_client(), conn, short_chat())
    assert "within 0.25 s while waiting for the reply to start" in caught.value.message
    assert caught.value.retryable


@pytest.mark.asyncio
async def test_reject_if_busy_fails_fast_when_capacity_is_held(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.hold_slots(LEGACY_MODEL, 60)
    with pytest.raises(CapacityExceeded) as caught:
        await collect(make_client(), emu_conn(emulator), short_chat(reject_if_busy=True))
    error = caught.value
    assert error.code == 3040
    assert error.retryable
    ours = [e.action for e in emulator.state.capacity_log if e.request_id == error.request_id]
    assert ours == ["rejected"]


@pytest.mark.asyncio
async def test_without_reject_if_busy_the_request_waits_in_the_queue(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    emulator.state.hold_slots(LEGACY_MODEL, 60)
    task = asyncio.create_task(collect(make_client(), emu_conn(emulator), short_chat()))
    await _until(lambda: "queued" in [e.action for e in emulator.state.capacity_log])
    assert not task.done()
    emulator.state.advance_time(61)  # the hold expires; the queued request gets its slot
    events = await asyncio.wait_for(task, PATIENCE)
    assert text_of(events)
    meta = events[0]
    assert isinstance(meta, ResponseMeta)
    ours = [e.action for e in emulator.state.capacity_log if e.request_id == meta.request_id]
    assert ours[:2] == ["queued", "acquired"]


@pytest.mark.asyncio
async def test_gateway_authentication(make_client: ClientFactory, emulator: EmulatorServer) -> None:
    client = make_client()
    without = emu_conn(emulator, route=Route.GATEWAY_URL, gateway_id="authgw")
    with pytest.raises(GatewayAuthenticationFailed):
        await collect(client, without, short_chat())
    with_token = emu_conn(
        emulator, route=Route.GATEWAY_URL, gateway_id="authgw", gateway_token=Secret(GATEWAY_TOKEN)
    )
    assert text_of(await collect(client, with_token, short_chat()))


@pytest.mark.asyncio
async def test_missing_gateway(make_client: ClientFactory, emulator: EmulatorServer) -> None:
    conn = emu_conn(emulator, route=Route.GATEWAY_URL, gateway_id="missing")
    with pytest.raises(GatewayError) as caught:
        await collect(make_client(), conn, short_chat())
    assert caught.value.code == 2001
    assert "gateway ID" in caught.value.message


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("overrides", "model", "cls", "code"),
    [
        ({"account_id": "not-an-account"}, LEGACY_MODEL, BadRequest, 7003),
        ({}, "@cf/nobody/no-such-model", ModelUnavailable, 5007),
        ({}, KIMI, ModelUnavailable, 5035),
        ({"token": Secret("invalid-token-123")}, LEGACY_MODEL, AuthenticationFailed, 10000),
    ],
)
async def test_account_model_and_token_problems(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    overrides: dict[str, object],
    model: str,
    cls: type[WorkersAIError],
    code: int,
) -> None:
    with pytest.raises(cls) as caught:
        await collect(make_client(), emu_conn(emulator, **overrides), short_chat(model=model))
    assert caught.value.code == code


async def _until(predicate: object) -> None:
    assert callable(predicate)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not predicate():
        assert loop.time() < deadline, "the emulator never reached the expected state"
        await asyncio.sleep(0.01)

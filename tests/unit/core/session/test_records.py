"""core.session.records: the one record builder and the figures line the window and CLI share."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from flarechat.api.config import (
    ChatMessage,
    Connection,
    GatewayOptions,
    ResponseFormat,
    Route,
    SamplingParams,
    Secret,
)
from flarechat.api.errors import CapacityExceeded, DailyAllocationExhausted
from flarechat.api.events import Finished, ResponseMeta, TextDelta, UsageReport
from flarechat.api.schema import ModelSchema
from flarechat.api.tools import ToolChoice, ToolSpec
from flarechat.core.connect import Capabilities, build_request
from flarechat.core.session.records import (
    error_record,
    reply_record,
    request_from_record,
    request_record,
    summary_line,
)
from flarechat.core.turn import TurnEvent, TurnState, fail, fold


def fold_all(events: Sequence[tuple[float, TurnEvent]]) -> TurnState:
    state = TurnState()
    for now, event in events:
        state = fold(state, event, now=now)
    return state


def capacity() -> CapacityExceeded:
    return CapacityExceeded("busy", status=429, code=3040)


def test_reply_record_is_plain_json() -> None:
    meta = ResponseMeta(status_code=200, request_id="r", log_id="l", cache_status="HIT")
    usage = UsageReport(prompt_tokens=4, completion_tokens=8, cached_tokens=2, neurons=0.5)
    state = fold_all([(0.0, meta), (1.0, TextDelta("ab")), (2.0, usage), (3.0, Finished("length"))])
    record = json.loads(json.dumps(reply_record(state)))
    assert record["status"] == "done"
    assert record["text"] == "ab"
    assert record["finish_reason"] == "length"
    assert record["usage"]["cached_tokens"] == 2
    assert record["meta"]["cache_status"] == "HIT"
    assert record["timings"] == {
        "attempts": 1,
        "streamed": True,
        "queue_wait": 0.0,
        "ttft": 1.0,
        "generation": 2.0,
        "duration": 3.0,
        "tokens_per_second": 4.0,
        "tokens_estimated": False,
    }
    assert record["attempts"] == 1
    assert record["error"] is None


def test_error_record_carries_the_reset_time() -> None:
    resets = datetime(2026, 1, 2, tzinfo=UTC)
    error = DailyAllocationExhausted("used up", status=429, code=4006, resets_at=resets)
    record = reply_record(fail(TurnState(), error))
    assert record["status"] == "failed"
    assert record["error"] == {
        "kind": "daily_limit",
        "message": "used up",
        "status": 429,
        "code": 4006,
        "request_id": None,
        "resets_at": "2026-01-02T00:00:00+00:00",
    }
    assert error_record(capacity())["resets_at"] is None


def test_summary_line_names_every_known_figure() -> None:
    meta = ResponseMeta(status_code=200, request_id="req-9", log_id="LOG1", cache_status="MISS")
    usage = UsageReport(prompt_tokens=1200, completion_tokens=30, cached_tokens=1000, neurons=2.5)
    state = fold_all(
        [(10.0, meta), (10.5, TextDelta("x")), (13.5, usage), (13.5, Finished("stop"))]
    )
    assert summary_line(state, model="@cf/m") == (
        "@cf/m · TTFT 500 ms · 10 tok/s · 1,200→30 tokens (1,000 cached) · 2.50 neurons "
        "· cache MISS · log LOG1 · request req-9"
    )


def test_summary_line_marks_estimates_and_skips_the_unknown() -> None:
    state = fold_all([(0.0, TextDelta("y" * 40)), (1.0, TextDelta("z" * 40))])
    assert summary_line(state, model="m") == "m · TTFT <1 ms · ~20 tok/s"


# --- a request's record gives the request back -------------------------------------------------

_WEATHER = ToolSpec("get_weather", "The weather", {"type": "object"})
_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=12)


@st.composite
def _capabilities(draw: st.DrawFn) -> Capabilities:
    tools = draw(st.sampled_from(((), (_WEATHER,))))
    formats = st.sampled_from(
        (None, ResponseFormat.json_object(), ResponseFormat.json_schema({"type": "object"}))
    )
    choices = st.sampled_from((None, ToolChoice("auto"), ToolChoice.named("get_weather")))
    return Capabilities(
        response_format=draw(formats),
        tools=tools,
        tool_choice=draw(choices) if tools else None,
        reasoning_effort=draw(st.sampled_from((None, "low", "medium", "high", "off"))),
        enable_thinking=draw(st.sampled_from((None, True, False))),
        lora=draw(st.none() | _NAMES),
    )


_SCHEMAS = st.none() | st.builds(
    ModelSchema,
    model=st.just("@cf/x/y"),
    known=st.booleans(),
    takes_content_parts=st.booleans(),
    takes_image_field=st.booleans(),
    flat_tools=st.booleans(),
    openai_tools=st.booleans(),
    reasoning_efforts=st.sampled_from(((), ("low", "high"), (None, "medium"))),
)
_PARAMS = st.builds(
    SamplingParams,
    max_tokens=st.integers(1, 4096),
    temperature=st.none() | st.floats(0, 2),
    top_p=st.none() | st.floats(0, 1),
    seed=st.none() | st.integers(0, 2**31),
)
_GATEWAYS = st.builds(
    GatewayOptions, skip_cache=st.booleans(), cache_ttl=st.none() | st.integers(60, 3600)
)


@given(
    capabilities=_capabilities(),
    schema=_SCHEMAS,
    params=_PARAMS,
    gateway=_GATEWAYS,
    system=st.sampled_from(("", "Be brief.", "  ")),
    stream=st.booleans(),
    busy=st.booleans(),
    route=st.sampled_from(tuple(Route)),
)
def test_a_request_record_gives_back_the_very_request_it_records(
    capabilities: Capabilities,
    schema: ModelSchema | None,
    params: SamplingParams,
    gateway: GatewayOptions,
    system: str,
    stream: bool,
    busy: bool,
    route: Route,
) -> None:
    """Every field of ChatRequest but the catalogue entry (a check, not an input) comes back,
    so a field added to the request and not to its record fails here."""
    history = [ChatMessage(role="user", content="Hi"), ChatMessage(role="assistant", content="Yo")]
    request = build_request(
        model="@cf/x/y",
        history=[*history, ChatMessage(role="user", content="Again")],
        system_prompt=system,
        params=params,
        reject_if_busy=busy,
        gateway=gateway if route is not Route.DIRECT else GatewayOptions(),
        session_id="c1",
        capabilities=capabilities,
        model_schema=schema,
    )
    request = dataclasses.replace(request, stream=stream)
    conn = Connection(account_id="a" * 32, token=Secret("t"), route=route, gateway_id="gw")
    record = json.loads(json.dumps(request_record(conn, request)))  # as the store keeps it
    back = request_from_record(record, [*history, ChatMessage(role="user", content="Again")])
    assert back == request

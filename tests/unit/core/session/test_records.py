"""core.session.records: the one record builder and the figures line the window and CLI share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from flarechat.api.errors import CapacityExceeded, DailyAllocationExhausted
from flarechat.api.events import Finished, ResponseMeta, TextDelta, UsageReport
from flarechat.core.session.records import error_record, reply_record, summary_line
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

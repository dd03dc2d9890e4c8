"""How figures read: durations, speeds, and the same wording in the metadata and status lines."""

from __future__ import annotations

from dataclasses import replace

import pytest

from flarechat.api.events import ResponseMeta, UsageReport
from flarechat.core.conversation import ROLE_ASSISTANT, Message
from flarechat.core.turn import TurnState
from flarechat.ui.presenting import (
    format_duration,
    format_rate,
    meta_line,
    metrics_line,
    timings_record,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "<1 ms"),
        (0.0004, "<1 ms"),
        (0.0006, "1 ms"),
        (0.038, "38 ms"),
        (0.0384, "38 ms"),
        (0.42, "420 ms"),
        (0.9994, "999 ms"),
        (0.9996, "1.00 s"),  # rounds up to a second: no "1000 ms"
        (1.0, "1.00 s"),
        (1.425, "1.43 s"),
        (9.99, "9.99 s"),
        (9.996, "10.0 s"),  # rounds up to ten: one decimal, no "10.00 s"
        (12.34, "12.3 s"),
        (125.0, "125.0 s"),
        (-0.2, "<1 ms"),  # a clock going backwards never prints a negative time
    ],
)
def test_durations_read_in_milliseconds_below_a_second(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("per_second", "text"),
    [
        (0.0, "0.0"),
        (3.44, "3.4"),
        (9.94, "9.9"),
        (9.96, "10"),  # rounds up to ten: a whole number
        (10.0, "10"),
        (38.4, "38"),
        (38.5, "39"),  # halves round up, as people round
        (38.6, "39"),
        (1234.0, "1234"),
    ],
)
def test_speeds_are_whole_numbers_from_ten_up(per_second: float, text: str) -> None:
    assert format_rate(per_second) == text


def _state(*, ttft: float, speed_tokens: int, seconds: float, estimated: bool) -> TurnState:
    """A finished reply: first token ``ttft`` s after the start, then ``speed_tokens`` tokens
    over ``seconds``; usage reported unless ``estimated``."""
    usage = None if estimated else UsageReport(prompt_tokens=12, completion_tokens=speed_tokens)
    state = TurnState(
        status="done",
        text="x" * speed_tokens * 4,
        started_at=0.0,
        first_token_at=ttft,
        last_token_at=ttft + seconds,
        finished_at=ttft + seconds,
        usage=usage,
        meta=ResponseMeta(status_code=200, neurons=1.5),
    )
    assert state.ttft == pytest.approx(ttft)
    return state


def _stored(state: TurnState) -> Message:
    """The message as the store keeps it (timings rounded as timings_record rounds them)."""
    usage = {"prompt_tokens": 12, "completion_tokens": 7} if state.usage else None
    return Message(
        id="a1",
        conversation_id="c1",
        parent_id=None,
        role=ROLE_ASSISTANT,
        content=state.text,
        timings=timings_record(state),
        usage=usage,
        meta={"neurons": 1.5},
    )


@pytest.mark.parametrize(
    ("ttft", "tokens", "seconds", "estimated", "ttft_text", "speed_text"),
    [
        (0.0384, 7, 0.2, False, "TTFT 38 ms", "35 tok/s"),
        (1.4251, 7, 2.0, False, "TTFT 1.43 s", "3.5 tok/s"),
        (0.25, 100, 3.9, True, "TTFT 250 ms", "~26 tok/s"),
        (12.0, 9, 1.0, False, "TTFT 12.0 s", "9.0 tok/s"),
    ],
)
def test_status_bar_and_metadata_line_print_the_same_figures(
    ttft: float,
    tokens: int,
    seconds: float,
    estimated: bool,
    ttft_text: str,
    speed_text: str,
) -> None:
    state = _state(ttft=ttft, speed_tokens=tokens, seconds=seconds, estimated=estimated)
    status = metrics_line(model="@cf/meta/llama-3.3-70b", state=state, neurons_today=12.4)
    line = meta_line(_stored(state))
    assert status == f"llama-3.3-70b · {ttft_text} · {speed_text} · 12.40 neurons today"
    assert line.startswith(f"{ttft_text} · {speed_text} · ")
    assert "1.50 neurons" in line


def test_the_status_line_leaves_out_what_it_does_not_know() -> None:
    assert metrics_line(model="@cf/m/small", state=None) == "small"
    assert metrics_line(model="@cf/m/small", state=None, neurons_today=0.0) == "small"
    waiting = replace(TurnState(), status="waiting")
    assert metrics_line(model="m", state=waiting, neurons_today=3.0) == "m · 3.00 neurons today"

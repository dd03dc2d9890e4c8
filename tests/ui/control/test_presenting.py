"""The same figures in the metadata line, the status line and the CLI summary."""

from __future__ import annotations

from dataclasses import replace

import pytest

from flarechat.api.events import ResponseMeta, UsageReport
from flarechat.core.conversation import ROLE_ASSISTANT, Message
from flarechat.core.ledger import USD_PER_NEURON
from flarechat.core.meters import cost_text
from flarechat.core.session.records import summary_line, timings_record
from flarechat.core.turn import Rope, TurnState
from flarechat.ui.control.presenting import meta_line, metrics_line


def _state(*, ttft: float, speed_tokens: int, seconds: float, estimated: bool) -> TurnState:
    """A finished reply: first token ``ttft`` s after the start, then ``speed_tokens`` tokens
    over ``seconds``; usage reported unless ``estimated``."""
    usage = None if estimated else UsageReport(prompt_tokens=12, completion_tokens=speed_tokens)
    state = TurnState(
        status="done",
        text_rope=Rope.of("x" * speed_tokens * 4),
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
    usage = None
    if state.usage is not None:
        usage = {"prompt_tokens": 12, "completion_tokens": state.usage.completion_tokens}
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
def test_status_bar_metadata_line_and_cli_summary_print_the_same_figures(
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
    summary = summary_line(state, model="@cf/meta/llama-3.3-70b")  # what the CLI prints
    assert status == f"llama-3.3-70b · {ttft_text} · {speed_text} · 12.40 neurons today"
    token_text = "" if estimated else f"12\N{RIGHTWARDS ARROW}{tokens} tokens · "
    figures_part = f"{ttft_text} · {speed_text} · {token_text}1.50 neurons"
    # No token counts came (estimated): the window adds the neurons' price, as the meters
    # count it (issue 23 #7); the CLI prints no cost.
    cost = f" · {cost_text(1.5 * USD_PER_NEURON)}" if estimated else ""
    assert line == figures_part + cost
    assert summary == f"@cf/meta/llama-3.3-70b · {figures_part}"


def test_the_status_line_leaves_out_what_it_does_not_know() -> None:
    assert metrics_line(model="@cf/m/small", state=None) == "small"
    assert metrics_line(model="@cf/m/small", state=None, neurons_today=0.0) == "small"
    waiting = replace(TurnState(), status="waiting")
    assert metrics_line(model="m", state=waiting, neurons_today=3.0) == "m · 3.00 neurons today"


def test_token_counts_read_alike_in_the_window_and_the_cli() -> None:
    usage = UsageReport(prompt_tokens=1200, completion_tokens=30, cached_tokens=1000)
    state = replace(_state(ttft=0.5, speed_tokens=30, seconds=3.0, estimated=False), usage=usage)
    message = _stored(state)
    message.usage = {"prompt_tokens": 1200, "completion_tokens": 30, "cached_tokens": 1000}
    expected = "1,200\N{RIGHTWARDS ARROW}30 tokens (1,000 cached)"
    assert expected in meta_line(message).split(" · ")
    assert expected in summary_line(state, model="m").split(" · ")


def test_the_metadata_line_ends_with_the_estimated_cost_when_prices_are_known() -> None:
    from flarechat.api.models import ModelInfo

    state = _state(ttft=0.5, speed_tokens=30, seconds=3.0, estimated=False)
    message = _stored(state)  # 12 prompt tokens, 30 completion tokens
    priced = ModelInfo("@cf/m", price_input_per_m=1.0, price_output_per_m=10.0)
    line = meta_line(message, info=priced)
    # 12 * $1/M + 30 * $10/M = $0.000312, shown as an estimate
    assert line.split(" · ")[-1] == "\N{ALMOST EQUAL TO} $0.00031"
    assert line.startswith(meta_line(message))
    assert meta_line(message, info=ModelInfo("@cf/m")) == meta_line(message)  # no price, no cost

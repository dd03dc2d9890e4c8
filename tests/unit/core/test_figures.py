"""How figures read everywhere: durations, speeds, token counts and neurons."""

from __future__ import annotations

import pytest

from flarechat.core.figures import (
    format_count,
    format_duration,
    format_neurons,
    format_rate,
    neurons_text,
    speed_text,
    tokens_text,
    ttft_text,
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


@pytest.mark.parametrize(
    ("count", "text"), [(0, "0"), (999, "999"), (1200, "1,200"), (1234567, "1,234,567")]
)
def test_token_counts_have_thousands_separators(count: int, text: str) -> None:
    assert format_count(count) == text


@pytest.mark.parametrize(
    ("neurons", "text"),
    [(0.0, "0.00"), (1.5, "1.50"), (2.675, "2.68"), (12.4, "12.40"), (0.005, "0.01")],
)
def test_neurons_have_two_decimals_halves_rounded_up(neurons: float, text: str) -> None:
    assert format_neurons(neurons) == text


def test_phrases_name_their_figures() -> None:
    arrow = "\N{RIGHTWARDS ARROW}"
    assert ttft_text(0.038) == "TTFT 38 ms"
    assert speed_text(38.5, estimated=False) == "39 tok/s"
    assert speed_text(3.44, estimated=True) == "~3.4 tok/s"
    assert neurons_text(1.5) == "1.50 neurons"
    assert neurons_text(12.4, suffix=" today") == "12.40 neurons today"
    assert tokens_text(prompt=1200, completion=30, cached=1000) == (
        f"1,200{arrow}30 tokens (1,000 cached)"
    )
    assert tokens_text(prompt=152, completion=418, cached=0) == f"152{arrow}418 tokens"
    assert tokens_text(prompt=None, completion=7) == "7 tokens"
    assert tokens_text(prompt=12, completion=None) == "12 prompt tokens"
    assert tokens_text(prompt=None, completion=None) is None

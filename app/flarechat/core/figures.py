"""How a reply's figures read wherever they are shown (window and CLI): durations, speeds,
token counts and neurons — one wording, one rounding rule ("38 ms", "39 tok/s", "1.50 neurons").

Pure functions, no Qt: the window's metadata and status lines and the CLI summary use them.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

__all__ = [
    "DURATION_DECIMALS",
    "NEURON_DECIMALS",
    "RATE_DECIMALS",
    "SEPARATOR",
    "TTFT_DECIMALS",
    "format_count",
    "format_duration",
    "format_neurons",
    "format_rate",
    "neurons_text",
    "queue_text",
    "speed_text",
    "stored_count",
    "stored_number",
    "tokens_text",
    "total_text",
    "ttft_text",
]

#: Between the parts of a line of figures.
SEPARATOR = " \N{MIDDLE DOT} "
#: Timings are stored (and shown, live or from history) at this precision, so the status bar,
#: the message's metadata line and the CLI always print the same figures for the same reply.
TTFT_DECIMALS = 3
RATE_DECIMALS = 1
DURATION_DECIMALS = 3
NEURON_DECIMALS = 2
MS_PER_SECOND = 1000
#: Seconds at and above this show one decimal ("12.3 s"), below it two ("1.42 s").
ONE_DECIMAL_SECONDS = 10.0
#: Speeds at and above this are whole numbers ("38 tok/s"), below it one decimal ("3.4").
WHOLE_RATE = 10.0


def _fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` places, halves rounded up as people do (not to even)."""
    step = Decimal(1).scaleb(-decimals)
    return str(Decimal(repr(float(value))).quantize(step, rounding=ROUND_HALF_UP))


def format_duration(seconds: float) -> str:
    """A short duration for people: "38 ms" below a second, "1.42 s", then "12.3 s"."""
    seconds = max(0.0, round(seconds, TTFT_DECIMALS))  # the precision timings are kept at
    millis = round(seconds * MS_PER_SECOND)
    if millis < 1:
        return "<1 ms"
    if millis < MS_PER_SECOND:
        return f"{millis} ms"
    two = _fixed(seconds, 2)
    return f"{two} s" if float(two) < ONE_DECIMAL_SECONDS else f"{_fixed(seconds, 1)} s"


def format_rate(per_second: float) -> str:
    """A speed: whole numbers from 10 up ("38"), one decimal below ("3.4")."""
    one = _fixed(max(0.0, round(per_second, RATE_DECIMALS)), 1)
    return one if float(one) < WHOLE_RATE else _fixed(float(one), 0)


def format_count(count: int) -> str:
    """A token count with thousands separators: "1,200"."""
    return f"{count:,}"


def format_neurons(neurons: float) -> str:
    """Neurons with two decimals, halves rounded up: "1.50"."""
    return _fixed(max(0.0, neurons), NEURON_DECIMALS)


def ttft_text(seconds: float) -> str:
    """Time to first token: "TTFT 38 ms"."""
    return f"TTFT {format_duration(seconds)}"


def speed_text(per_second: float, *, estimated: bool) -> str:
    """Tokens per second, "~" when counted from the text rather than reported: "~38 tok/s"."""
    return f"{'~' if estimated else ''}{format_rate(per_second)} tok/s"


def tokens_text(
    *, prompt: int | None, completion: int | None, cached: int | None = None
) -> str | None:
    """Prompt and completion tokens: "1,200→30 tokens (1,000 cached)"; None if neither is known."""
    if prompt is not None and completion is not None:
        text = f"{format_count(prompt)}\N{RIGHTWARDS ARROW}{format_count(completion)} tokens"
    elif completion is not None:
        text = f"{format_count(completion)} tokens"
    elif prompt is not None:
        text = f"{format_count(prompt)} prompt tokens"
    else:
        return None
    return text + (f" ({format_count(cached)} cached)" if cached else "")


def neurons_text(neurons: float, *, suffix: str = "") -> str:
    """Neurons billed: "1.50 neurons" (``suffix`` e.g. " today")."""
    return f"{format_neurons(neurons)} neurons{suffix}"


def queue_text(seconds: float) -> str:
    """Time before the server began answering (queue, slow first byte, retries): "queued 4.20 s"."""
    return f"queued {format_duration(seconds)}"


def total_text(seconds: float) -> str:
    """The whole request, for a reply that came at once (no TTFT to show): "took 4.20 s"."""
    return f"took {format_duration(seconds)}"


def stored_number(value: object) -> float | None:
    """A figure read back from a stored JSON record: a number (never a bool), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def stored_count(value: object) -> int | None:
    """A token count read back from a stored JSON record: an int (never a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None

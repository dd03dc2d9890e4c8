"""``flarechat models`` as a table: id, context window, prices per million tokens, capabilities."""

from __future__ import annotations

from collections.abc import Iterable

from flarechat.api.models import ModelInfo

__all__ = ["HEADER", "model_line", "models_table"]

_NAME_WIDTH = 52
_WINDOW_WIDTH = 9
_PRICE_WIDTH = 9
#: Prices keep every digit the catalogue gives ("$0.045", "$0.0045"), and at least cents.
_DIGITS = 6
_CENTS = 2
HEADER = (
    f"{'MODEL':<{_NAME_WIDTH}} {'CONTEXT':>{_WINDOW_WIDTH}} "
    f"{'IN $/M':>{_PRICE_WIDTH}} {'OUT $/M':>{_PRICE_WIDTH}}  CAPABILITIES"
)


def _price(value: float | None) -> str:
    if value is None:
        return "-"
    whole, _, fraction = f"{value:.{_DIGITS}f}".partition(".")
    return f"${whole}.{fraction.rstrip('0').ljust(_CENTS, '0')}"


def model_line(info: ModelInfo) -> str:
    flags = zip(
        ("reasoning", "tools", "vision", "lora", "beta", "paid-plan"),
        (info.reasoning, info.function_calling, info.vision, info.lora, info.beta, info.paid_only),
        strict=True,
    )
    window = f"{info.context_window:,}" if info.context_window else "-"
    prices = f"{_price(info.price_input_per_m):>{_PRICE_WIDTH}} "
    prices += f"{_price(info.price_output_per_m):>{_PRICE_WIDTH}}"
    capabilities = " ".join(name for name, on in flags if on)
    return f"{info.name:<{_NAME_WIDTH}} {window:>{_WINDOW_WIDTH}} {prices}  {capabilities}".rstrip()


def models_table(models: Iterable[ModelInfo]) -> str:
    """The header, then one line per model; prices are USD per million input/output tokens."""
    return "\n".join([HEADER, *(model_line(info) for info in models)]) + "\n"

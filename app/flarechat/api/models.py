"""The model catalogue: what /ai/models/search says about each text-generation model."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ModelInfo"]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One catalogue entry, with every property parsed to a real type (or ``None``)."""

    name: str  # "@cf/meta/llama-3.1-8b-instruct-fast" — the id sent in requests
    description: str = ""
    task: str = "Text Generation"
    context_window: int | None = None
    beta: bool = False
    paid_only: bool = False
    reasoning: bool = False
    function_calling: bool = False
    lora: bool = False
    vision: bool = False
    terms_url: str | None = None
    price_input_per_m: float | None = None  # USD per million input tokens
    price_output_per_m: float | None = None
    price_cached_per_m: float | None = None

    @property
    def short_name(self) -> str:
        """The last path segment: ``llama-3.1-8b-instruct-fast``."""
        return self.name.rsplit("/", 1)[-1]

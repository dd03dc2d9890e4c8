"""The model catalogue: what /ai/models/search says about each model, and fine-tunes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FineTune", "ModelInfo", "ReasoningEffortInfo"]

_OFF = "off"  # the explicit "no reasoning" choice (config.EFFORT_OFF; models may not import config)


@dataclass(frozen=True, slots=True)
class ReasoningEffortInfo:
    """The catalogue's ``reasoning_effort`` property (cloudflare-api.md §8.1, §10)."""

    supported_efforts: tuple[str, ...] = ()
    default_effort: str | None = None
    #: reasoning cannot be turned off (gpt-oss)
    mandatory: bool = False
    #: reasoning is on unless turned off
    default_enabled: bool = True

    @property
    def choices(self) -> tuple[str, ...]:
        """What a picker may offer: the supported efforts, plus "off" unless mandatory."""
        return self.supported_efforts if self.mandatory else (*self.supported_efforts, _OFF)


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
    #: the async Batch API takes this model (catalogue property ``async_queue``, §11.3)
    batch: bool = False
    terms_url: str | None = None
    price_input_per_m: float | None = None  # USD per million input tokens
    price_output_per_m: float | None = None
    price_cached_per_m: float | None = None
    #: the effort control, when the catalogue describes one
    reasoning_effort: ReasoningEffortInfo | None = None

    @property
    def short_name(self) -> str:
        """The last path segment: ``llama-3.1-8b-instruct-fast``."""
        return self.name.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class FineTune:
    """One of the account's fine-tunes (a LoRA adapter), from ``GET …/ai/finetunes``."""

    id: str
    name: str
    #: the base model it was trained on (send the request to this model)
    model: str | None = None
    description: str = ""
    created_at: str | None = None
    modified_at: str | None = None

    @property
    def lora_ref(self) -> str:
        """What to put in ``lora``: the name when there is one, else the id."""
        return self.name or self.id

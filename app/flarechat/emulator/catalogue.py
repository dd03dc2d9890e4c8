"""The model catalogue: /ai/models/search entries, each model's wire profile, prices, schemas."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from flarechat.emulator.schemas import EMBEDDING_SCHEMA, Capabilities, chat_schema

__all__ = [
    "DEPRECATED",
    "MODELS",
    "TEXT_GENERATION",
    "CatalogueModel",
    "Profile",
    "SearchQuery",
    "embedding_dimensions",
    "find",
    "neurons",
    "schema",
    "search",
]


class Profile(StrEnum):
    """How a model answers on /ai/run."""

    LEGACY = "legacy"  # {"response": ...} + trailing usage event (§3a, §4a)
    OPENAI = "openai"  # chat.completion / chunks with p + incremental usage (§3b, §4b)
    THINK = "think"  # legacy shape with <think>...</think> inline in response (§10)
    NOSTREAM = "nostream"  # OpenAI shape, but stream:true on /ai/run gets plain JSON (§4c)
    EMBEDDING = "embedding"  # not a chat model


TEXT_GENERATION = {
    "id": "c329a1f9-323d-4e91-b2aa-582dd4188d34",
    "name": "Text Generation",
    "description": "Family of generative text models, such as large language models (LLM), that "
    "can be adapted for a variety of natural language tasks.",
}
TEXT_EMBEDDINGS = {
    "id": "0137cdcf-162a-4108-94f2-1ca59e8c65ee",
    "name": "Text Embeddings",
    "description": "Feature extraction models transform raw data into numerical features that "
    "can be processed while preserving the information in the original data set.",
}
#: One Workers AI neuron costs $0.011 per 1,000: neurons = USD * 1000 / 0.011.
_NEURONS_PER_USD = 1000 / 0.011
_PER_MILLION = 1_000_000
_EMBEDDING_DIMENSIONS = 1024
_LLAMA_TERMS = "https://github.com/meta-llama/llama-models/blob/main/models/{}/LICENSE"

#: Calls to these fail with 5028 (deprecated 2026-05-30, §8.3); they are not in the catalogue.
DEPRECATED = frozenset(
    {"@cf/meta/llama-3.1-8b-instruct", "@cf/meta/llama-3-8b-instruct", "@cf/microsoft/phi-2"}
)


@dataclass(frozen=True, slots=True)
class CatalogueModel:
    name: str
    uuid: str
    description: str
    profile: Profile
    created_at: str
    price_in: float  # USD per million input tokens
    price_out: float
    properties: tuple[tuple[str, Any], ...] = ()
    #: delta field carrying reasoning for OpenAI-shaped reasoning models
    reasoning_field: str | None = None
    paid_only: bool = False
    context_window: int = 128_000
    beta: bool = False
    #: accepts response_format (JSON mode); the model pages of some models lack it
    json_mode: bool = True
    #: takes the native llama-3.2-vision ``image`` input (bytes array or base64) on /ai/run
    native_image: bool = False
    #: answers 5016 until the account sends ``{"prompt": "agree"}`` (its ``terms`` licence)
    agreement: bool = False

    @property
    def task(self) -> dict[str, str]:
        return TEXT_EMBEDDINGS if self.profile is Profile.EMBEDDING else TEXT_GENERATION

    @property
    def author(self) -> str:
        return self.name.split("/")[1]

    def prop(self, name: str) -> Any:
        """The value of catalogue property ``name``, or None."""
        return next((value for key, value in self.properties if key == name), None)

    def supports(self, name: str) -> bool:
        """True when boolean-ish property ``name`` is set ("true", as the catalogue spells it)."""
        return str(self.prop(name)).lower() == "true"

    @property
    def content_arrays(self) -> bool:
        """Messages may carry content arrays (newer schemas, and every vision model)."""
        return self.profile not in (Profile.LEGACY, Profile.THINK) or self.supports("vision")

    @property
    def reasoning(self) -> bool:
        return self.reasoning_field is not None or self.profile is Profile.THINK

    def to_json(self) -> dict[str, Any]:
        """The ModelObject exactly as /ai/models/search lists it (§8.1)."""
        return {
            "id": self.uuid,
            "source": 1,
            "name": self.name,
            "description": self.description,
            "task": self.task,
            "created_at": self.created_at,
            "tags": [],
            "properties": [{"property_id": k, "value": v} for k, v in self.properties],
        }


def _price(inp: float, out: float, *, cached: float | None = None) -> tuple[str, Any]:
    prices = [
        {"unit": "per M input tokens", "price": inp, "currency": "USD"},
        {"unit": "per M output tokens", "price": out, "currency": "USD"},
    ]
    if cached is not None:
        prices.append({"unit": "per M cached input tokens", "price": cached, "currency": "USD"})
    return ("price", prices)


MODELS: tuple[CatalogueModel, ...] = (
    CatalogueModel(
        "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
        "2cbc033b-ded8-4e02-bbb2-47cf05d5cfe5",
        "Llama 3.3 70B quantized to fp8 precision, optimized to be faster.",
        Profile.LEGACY,
        "2024-12-06 17:09:18.338",
        0.293,
        2.253,
        (
            ("async_queue", "true"),
            ("context_window", "24000"),
            ("function_calling", "true"),
            ("terms", _LLAMA_TERMS.format("llama3_3")),
            _price(0.293, 2.253),
        ),
        context_window=24_000,
    ),
    CatalogueModel(
        "@cf/meta/llama-3.1-8b-instruct-fast",
        "31097538-a3ff-4e6e-bb56-ad0e1f428b61",
        "[Fast version] The Meta Llama 3.1 collection of multilingual large language models.",
        Profile.LEGACY,
        "2024-07-23 15:01:42.510",
        0.045,
        0.384,
        (
            ("context_window", "128000"),
            ("terms", _LLAMA_TERMS.format("llama3_1")),
            _price(0.045, 0.384),
        ),
        json_mode=False,  # its model page has no response_format (cloudflare-docs #27786)
    ),
    CatalogueModel(
        "@cf/google/gemma-4-26b-a4b-it",
        "7f1c3d2e-5a6b-4c8d-9e0f-1a2b3c4d5e6f",
        "Gemma 4 26B A4B is a mixture-of-experts model from Google with thinking, vision and "
        "function calling.",
        Profile.OPENAI,
        "2026-04-02 09:12:44.871",
        0.10,
        0.30,
        (
            ("context_window", "262144"),
            ("function_calling", "true"),
            ("reasoning", "true"),
            ("vision", "true"),
            _price(0.10, 0.30),
        ),
        reasoning_field="reasoning_content",
        context_window=262_144,
    ),
    CatalogueModel(
        "@cf/qwen/qwq-32b",
        "4a4b8b1f-7e2c-4a45-8a1e-b1c1b2e4f3a9",
        "QwQ is the reasoning model of the Qwen series, capable of thinking and reasoning.",
        Profile.OPENAI,
        "2025-03-05 19:52:29.129",
        0.66,
        1.00,
        # a number, not a string: clients must tolerate non-string property values (§8.1)
        (("context_window", 24000), ("lora", "true"), ("reasoning", "true"), _price(0.66, 1.00)),
        reasoning_field="reasoning",
        context_window=24_000,
    ),
    CatalogueModel(
        "@cf/deepseek-ai/deepseek-r1-distill-qwen-32b",
        "ad01ab83-baf8-4e7b-8fed-a0a219d4eb45",
        "DeepSeek-R1-Distill-Qwen-32B is distilled from DeepSeek-R1; it thinks out loud inside "
        "<think> tags before answering.",
        Profile.THINK,
        "2025-01-22 19:48:55.776",
        0.497,
        4.881,
        (
            ("context_window", "80000"),
            ("reasoning", "true"),
            ("terms", "https://github.com/deepseek-ai/DeepSeek-R1/blob/main/LICENSE"),
            _price(0.497, 4.881),
        ),
        context_window=80_000,
    ),
    CatalogueModel(
        "@cf/openai/gpt-oss-120b",
        "f9a8b7c6-d5e4-4f3a-8b2c-1d0e9f8a7b6c",
        "OpenAI's open-weight model for production, general purpose, high reasoning use-cases.",
        Profile.NOSTREAM,
        "2025-08-05 10:27:29.131",
        0.35,
        0.75,
        (
            ("context_window", "128000"),
            ("function_calling", "true"),
            ("reasoning", "true"),
            (
                "reasoning_effort",
                {
                    "supported_efforts": ["low", "medium", "high"],
                    "default_effort": "medium",
                    "mandatory": True,
                    "default_enabled": True,
                },
            ),
            ("terms", "https://www.apache.org/licenses/LICENSE-2.0"),
            _price(0.35, 0.75),
        ),
        reasoning_field="reasoning_content",
    ),
    CatalogueModel(
        "@cf/moonshotai/kimi-k2.6",
        "8a5d00bd-de28-4a28-b37a-ce46d01ebaeb",
        "Kimi K2.6 is a frontier-scale open-source 1T parameter model with agentic coding skills.",
        Profile.OPENAI,
        "2026-04-20 01:40:35.001",
        0.95,
        4.0,
        (
            ("require_workers_paid", "true"),
            ("context_window", "262144"),
            ("function_calling", "true"),
            ("reasoning", "true"),
            (
                "reasoning_effort",
                {
                    "supported_efforts": ["low", "medium", "high"],
                    "default_effort": "medium",
                    "mandatory": False,
                    "default_enabled": True,
                },
            ),
            ("vision", "true"),
            _price(0.95, 4, cached=0.16),
        ),
        reasoning_field="reasoning_content",
        paid_only=True,
        context_window=262_144,
    ),
    CatalogueModel(
        "@cf/mistralai/mistral-small-3.1-24b-instruct",
        "9c95c39d-45b3-4163-9631-22f0c0dc3b14",
        "Mistral Small 3.1 adds vision understanding and a 128k context window.",
        Profile.LEGACY,
        "2025-03-18 03:28:37.890",
        0.351,
        0.555,
        (
            ("context_window", "128000"),
            ("function_calling", "true"),
            ("vision", "true"),
            _price(0.351, 0.555),
        ),
    ),
    CatalogueModel(
        "@cf/zai-org/glm-4.7-flash",
        "b2d4f6a8-0c1e-4a3b-9d5f-7e9a1c3b5d7f",
        "GLM-4.7-Flash is a fast, light reasoning model from Z.ai for agentic tasks.",
        Profile.OPENAI,
        "2026-01-29 12:00:03.415",
        0.06,
        0.40,
        (
            ("beta", "true"),
            ("context_window", "131072"),
            ("function_calling", "true"),
            ("reasoning", "true"),
            (
                "reasoning_effort",
                {
                    "supported_efforts": ["low", "medium", "high"],
                    "default_effort": "medium",
                    "mandatory": False,
                    "default_enabled": True,
                },
            ),
            _price(0.06, 0.40),
        ),
        reasoning_field="reasoning_content",
        context_window=131_072,
        beta=True,
    ),
    CatalogueModel(
        "@cf/ibm-granite/granite-4.0-h-micro",
        "3e5f7a9b-1c2d-4e6f-8a0b-c2d4e6f8a0b2",
        "Granite 4.0 H Micro is a small hybrid model for efficient instruction following.",
        Profile.LEGACY,
        "2025-10-07 16:31:10.022",
        0.017,
        0.112,
        (
            ("beta", "true"),
            ("context_window", "131000"),
            ("function_calling", "true"),
            ("info", "https://www.ibm.com/granite"),
            _price(0.017, 0.112),
        ),
        context_window=131_000,
        beta=True,
    ),
    CatalogueModel(
        "@cf/meta/llama-3.2-11b-vision-instruct",
        "2dc1d6a0-0b50-4e7c-a1f2-76a1e0f3c9b8",
        "The Llama 3.2-Vision collection of multimodal large language models (LLMs) is a "
        "collection of pretrained and instruction-tuned image reasoning generative models.",
        Profile.LEGACY,
        "2024-09-25 05:36:04.547",
        0.049,
        0.676,
        (
            ("context_window", "128000"),
            ("vision", "true"),
            ("terms", _LLAMA_TERMS.format("llama3_2")),
            _price(0.049, 0.676),
        ),
        json_mode=False,
        native_image=True,
        agreement=True,
    ),
    CatalogueModel(
        "@cf/meta/llama-4-scout-17b-16e-instruct",
        "1a8c9b52-5b3e-4c0f-9f1d-2c3b4a5d6e7f",
        "Meta's Llama 4 Scout is a 17 billion parameter model with 16 experts that is natively "
        "multimodal.",
        Profile.LEGACY,
        "2025-04-05 20:25:56.137",
        0.27,
        0.85,
        (
            ("context_window", "131000"),
            ("function_calling", "true"),
            ("vision", "true"),
            ("terms", _LLAMA_TERMS.format("llama4")),
            _price(0.27, 0.85),
        ),
        context_window=131_000,
    ),
    CatalogueModel(
        "@cf/mistral/mistral-7b-instruct-v0.2-lora",
        "7ed8d8e8-6040-4680-843a-aef402d6b013",
        "The Mistral-7B-Instruct-v0.2 Large Language Model (LLM) is an instruct fine-tuned "
        "version of the Mistral-7B-v0.2, served for LoRA adapters.",
        Profile.LEGACY,
        "2024-04-01 22:14:40.529",
        0.11,
        0.19,
        (("beta", "true"), ("context_window", "15000"), ("lora", "true"), _price(0.11, 0.19)),
        context_window=15_000,
        beta=True,
        json_mode=False,
    ),
    *(
        CatalogueModel(
            f"@cf/baai/bge-{size}-en-v1.5",
            uuid,
            f"BAAI general embedding ({size}) model that transforms any given text into a "
            f"{dims}-dimensional vector",
            Profile.EMBEDDING,
            "2023-11-07 15:43:58.042",
            price,
            0.0,
            (
                ("async_queue", "true"),
                ("max_input_tokens", "512"),
                ("output_dimensions", str(dims)),
                _price(price, 0.0),
            ),
            context_window=512,
        )
        for size, uuid, dims, price in (
            ("small", "57fbd08a-a4c4-411c-910d-b9459ff36c20", 384, 0.02),
            ("base", "429b9e8b-d99e-44de-91ad-706cf8183658", 768, 0.067),
            ("large", "01bc2fb0-4bca-4598-b985-d2584a3f46c0", 1024, 0.204),
        )
    ),
    CatalogueModel(
        "@cf/baai/bge-m3",
        "eed32bc1-8775-4985-89ce-dd1405508ad8",
        "Multi-Functionality, Multi-Linguality, and Multi-Granularity embeddings model.",
        Profile.EMBEDDING,
        "2024-05-22 19:27:09.781",
        0.012,
        0.0,
        (("context_window", "8192"), _price(0.012, 0.0)),
        context_window=8192,
    ),
)
_BY_NAME = {model.name: model for model in MODELS}


def find(name: str) -> CatalogueModel | None:
    return _BY_NAME.get(name)


def neurons(model: CatalogueModel, *, prompt_tokens: int, completion_tokens: int) -> float:
    """Neurons billed: the catalogue price turned into neurons (gemma: 147 in + 16 out ≈ 1.77)."""
    usd = (prompt_tokens * model.price_in + completion_tokens * model.price_out) / _PER_MILLION
    return usd * _NEURONS_PER_USD


def embedding_dimensions(model: CatalogueModel) -> int:
    """The catalogue's ``output_dimensions`` (bge-m3 states none: 1024, as its vectors have)."""
    stated = model.prop("output_dimensions")
    return int(stated) if stated is not None else _EMBEDDING_DIMENSIONS


@dataclass(frozen=True, slots=True)
class SearchQuery:
    task: str | None = None
    search: str | None = None
    author: str | None = None
    hide_experimental: bool = False
    page: int = 1
    per_page: int = 20


def search(query: SearchQuery) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Filter and page the catalogue; returns (result, result_info)."""
    matches = [m for m in MODELS if _matches(m, query)]
    start = (query.page - 1) * query.per_page
    page = matches[start : start + query.per_page]
    info = {
        "page": query.page,
        "per_page": query.per_page,
        "count": len(page),
        "total_count": len(matches),
    }
    return [m.to_json() for m in page], info


def _matches(model: CatalogueModel, query: SearchQuery) -> bool:
    if query.task and query.task.lower() not in (model.task["name"].lower(), model.task["id"]):
        return False
    if query.author and query.author.lower() != model.author:
        return False
    if query.hide_experimental and model.beta:
        return False
    needle = (query.search or "").lower()
    return needle in model.name.lower() or needle in model.description.lower()


def schema(model: CatalogueModel) -> dict[str, Any]:
    """The model's input/output JSON schema, as /ai/models/schema returns it."""
    if model.profile is Profile.EMBEDDING:
        return EMBEDDING_SCHEMA
    effort = model.prop("reasoning_effort")
    return chat_schema(
        Capabilities(
            content_arrays=model.content_arrays,
            vision=model.supports("vision"),
            native_image=model.native_image,
            tools=model.supports("function_calling"),
            json_mode=model.json_mode,
            lora=model.supports("lora"),
            reasoning_effort=effort if isinstance(effort, dict) else None,
            thinking=model.reasoning and model.profile is not Profile.THINK,
            openai_output=model.profile in (Profile.OPENAI, Profile.NOSTREAM),
        )
    )

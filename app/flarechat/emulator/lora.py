"""LoRA adapters: the demo account's fine-tunes, the /ai/finetunes route and `lora` checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from flarechat.emulator import accounts
from flarechat.emulator.catalogue import CatalogueModel
from flarechat.emulator.config import DEMO_ACCOUNT_ID
from flarechat.emulator.wire import ErrorSpec, cf_ray, json_response, success

__all__ = ["FINETUNES", "Finetune", "check_lora", "finetunes"]

#: §7.1 has no "unknown adapter" entry; 3039 is the documented finetune error (emulator choice).
_MISSING = "Finetune is missing required files (model.safetensors and config.json)"
_MISTRAL_LORA = "@cf/mistral/mistral-7b-instruct-v0.2-lora"


@dataclass(frozen=True, slots=True)
class Finetune:
    """One item of GET /ai/finetunes (SEEN-IN-CODE field names, §1)."""

    id: str
    name: str
    model: str
    description: str
    created_at: str
    modified_at: str


FINETUNES: tuple[Finetune, ...] = (
    Finetune(
        "7c4a1c83-2f5e-4b11-9a2d-3e0f6b8d5a21",
        "support-tone",
        _MISTRAL_LORA,
        "Answers in the calm tone of the support team.",
        "2026-03-02 10:14:07.512",
        "2026-03-02 10:14:07.512",
    ),
    Finetune(
        "d1e9b0f4-6a3c-4c7e-8f25-90ab12cd34ef",
        "pirate-speak",
        _MISTRAL_LORA,
        "Every answer, arr, like a pirate.",
        "2026-05-19 08:40:51.003",
        "2026-06-01 17:22:36.840",
    ),
    Finetune(
        "5b8e2d17-c3a9-4f60-b1d4-7e2f9a0c6b35",
        "math-steps",
        "@cf/qwen/qwq-32b",
        "Shows every step of a calculation.",
        "2026-07-11 13:05:29.677",
        "2026-07-11 13:05:29.677",
    ),
)


def _owned(account: str) -> tuple[Finetune, ...]:
    return FINETUNES if account == DEMO_ACCOUNT_ID else ()


async def finetunes(request: Request) -> Response:
    """GET /accounts/{acct}/ai/finetunes: the account's adapters in a v4 envelope."""
    refused = accounts.refused(request)
    if refused is not None:
        return refused
    items = [asdict(f) for f in _owned(request.path_params["acct"])]
    return json_response(success(items), headers={"cf-ray": cf_ray()})


def check_lora(
    model: CatalogueModel, body: dict[str, Any], *, account: str, allowed: bool = True
) -> tuple[Finetune | None, ErrorSpec | None]:
    """The adapter ``lora`` names (by name or id), None when absent, or the error to answer."""
    name = body.get("lora")
    if name is None:
        return None, None
    if not allowed:
        return None, ErrorSpec(400, 5006, "Bad input: Error: '/lora' is not allowed here")
    if not isinstance(name, str):
        detail = "Bad input: Error: Type mismatch of '/lora', 'non-string' not in 'string'"
        return None, ErrorSpec(400, 5006, detail)
    if not model.supports("lora"):
        return None, ErrorSpec(405, 5005, f"The model {model.name} does not support LoRa inference")
    for finetune in _owned(account):
        if name in (finetune.name, finetune.id) and finetune.model == model.name:
            return finetune, None
    return None, ErrorSpec(400, 3039, _MISSING)

"""Models, images and request-body lookups for the capability tests of ChatSession."""

from __future__ import annotations

import struct
import zlib
from typing import Any

from session_helpers import emulator_conn

from flarechat.api.client import WorkersAIClient
from flarechat.api.models import ModelInfo
from flarechat.core.conversation import Attachment
from flarechat.core.session import Catalogue
from flarechat.emulator.server import EmulatorServer

SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"
VISION_32 = "@cf/meta/llama-3.2-11b-vision-instruct"
LLAMA_70B = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
GEMMA = "@cf/google/gemma-4-26b-a4b-it"
MISTRAL_LORA = "@cf/mistral/mistral-7b-instruct-v0.2-lora"
GLM = "@cf/zai-org/glm-4.7-flash"
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "canned_result": "Sunny, 21 degrees",
}


def png(width: int, height: int) -> bytes:
    """A PNG's signature and header: enough for the emulator to read its size and type."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + crc


def picture(width: int = 64, height: int = 48, name: str = "heron.png") -> Attachment:
    return Attachment("image/png", png(width, height), width, height, name)


async def catalogue_of(emulator: EmulatorServer) -> Catalogue:
    """The emulator's live catalogue, as the window's model list holds it."""
    async with WorkersAIClient() as client:
        models = await client.list_models(emulator_conn(emulator))
    by_name: dict[str, ModelInfo] = {m.name: m for m in models}
    return by_name.get


def chat_bodies(emulator: EmulatorServer) -> list[dict[str, Any]]:
    """The JSON body of every generation request so far (native and chat completions)."""
    return [
        r.json
        for r in emulator.state.requests
        if isinstance(r.json, dict) and ("/ai/run/" in r.path or "chat/completions" in r.path)
    ]

"""Small helpers for the emulator tests: URLs, bodies, SSE splitting, bounded waits."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.emulator.server import EmulatorServer

ACCOUNT = DEMO_ACCOUNT_ID
LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"
LLAMA_70B = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
GEMMA = "@cf/google/gemma-4-26b-a4b-it"
QWQ = "@cf/qwen/qwq-32b"
DEEPSEEK = "@cf/deepseek-ai/deepseek-r1-distill-qwen-32b"
GPT_OSS = "@cf/openai/gpt-oss-120b"
KIMI = "@cf/moonshotai/kimi-k2.6"
BGE = "@cf/baai/bge-m3"
VISION_32 = "@cf/meta/llama-3.2-11b-vision-instruct"
SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"
MISTRAL_LORA = "@cf/mistral/mistral-7b-instruct-v0.2-lora"
GLM = "@cf/zai-org/glm-4.7-flash"
AUTH = {"Authorization": "Bearer test-token"}
#: Upper bound for anything the tests wait for (generous: the machine is shared).
PATIENCE = 10.0
_POLL = 0.01


def run_url(server: EmulatorServer, model: str, *, account: str = ACCOUNT) -> str:
    return f"{server.api_base}/accounts/{account}/ai/run/{model}"


def chat_url(server: EmulatorServer, *, account: str = ACCOUNT) -> str:
    return f"{server.api_base}/accounts/{account}/ai/v1/chat/completions"


def gateway_url(server: EmulatorServer, tail: str, *, gateway: str = "default") -> str:
    return f"{server.gateway_base}/{ACCOUNT}/{gateway}/{tail}"


def ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **extra}


def sse_payloads(body: bytes) -> list[bytes]:
    """The payload of every ``data: `` event; fails on anything else in the framing."""
    assert body.endswith(b"\n\n"), body[-40:]
    blocks = body[:-2].split(b"\n\n")
    assert all(block.startswith(b"data: ") for block in blocks), blocks
    return [block.removeprefix(b"data: ") for block in blocks]


def sse_json(body: bytes) -> list[Any]:
    """Every JSON event before [DONE] (which must be last)."""
    payloads = sse_payloads(body)
    assert payloads[-1] == b"[DONE]"
    return [json.loads(p) for p in payloads[:-1]]


def wait_until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(_POLL)

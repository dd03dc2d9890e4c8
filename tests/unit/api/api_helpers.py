"""Small helpers for the api tests: canned SSE bodies, mock transports and event collection."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

import httpx

from flarechat.api.client import WorkersAIClient
from flarechat.api.config import ChatMessage, ChatRequest, Connection, Secret
from flarechat.api.events import (
    Finished,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    UsageReport,
)

TOKEN = "cfut_SeCrEtT0kenValue1234567890abcdef"
GATEWAY_TOKEN = "gw-SeCrEt-gateway-token-0987"
ACCOUNT = "0123456789abcdef0123456789abcdef"
MOCK_API = "https://api.test/client/v4"
MOCK_GATEWAY = "https://gateway.test/v1"
LEGACY_MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"

Handler = Callable[[httpx.Request], httpx.Response]


def mock_conn(**overrides: Any) -> Connection:
    values: dict[str, Any] = {
        "account_id": ACCOUNT,
        "token": Secret(TOKEN),
        "api_base": MOCK_API,
        "gateway_base": MOCK_GATEWAY,
    }
    values.update(overrides)
    return Connection(**values)


def chat(text: str = "hi", *, model: str = LEGACY_MODEL, **overrides: Any) -> ChatRequest:
    return ChatRequest(model=model, messages=(ChatMessage("user", text),), **overrides)


def sse(*events: Mapping[str, Any] | str, done: bool = True) -> bytes:
    """An SSE body: dicts become ``data: <json>``, strings are sent as the raw data payload."""
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def split_every(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


class ChunkStream(httpx.AsyncByteStream):
    """A response body delivered in the given pieces, optionally failing at the end."""

    def __init__(self, pieces: Iterable[bytes], *, fail_with: Exception | None = None) -> None:
        self._pieces = list(pieces)
        self._fail_with = fail_with

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece
        if self._fail_with is not None:
            raise self._fail_with


def reply(
    body: bytes | str | Mapping[str, Any],
    *,
    status: int = 200,
    content_type: str | None = None,
    headers: Mapping[str, str] | None = None,
    piece_size: int | None = None,
    fail_with: Exception | None = None,
) -> httpx.Response:
    """A response for a MockTransport handler."""
    if isinstance(body, Mapping):
        body = json.dumps(body).encode()
        content_type = content_type or "application/json"
    elif isinstance(body, str):
        body = body.encode()
    all_headers = {"content-type": content_type or "text/event-stream"}
    all_headers.update(headers or {})
    pieces = split_every(body, piece_size) if piece_size else [body]
    return httpx.Response(
        status, headers=all_headers, stream=ChunkStream(pieces, fail_with=fail_with)
    )


class Recorder:
    """A MockTransport handler that records requests and plays back responses in order."""

    def __init__(self, *responses: httpx.Response | Handler) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return item(request) if callable(item) else item

    def body(self, index: int = -1) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.requests[index].content)
        return parsed


async def collect(
    client: WorkersAIClient, conn: Connection, request: ChatRequest
) -> list[StreamEvent]:
    return [event async for event in client.stream_chat(conn, request)]


def text_of(events: Iterable[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def reasoning_of(events: Iterable[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningDelta))


def usage_of(events: Iterable[object]) -> UsageReport | None:
    reports = [e for e in events if isinstance(e, UsageReport)]
    assert len(reports) <= 1, "usage is reported once per reply"
    return reports[0] if reports else None


def finish_of(events: list[StreamEvent]) -> str:
    last = events[-1]
    assert isinstance(last, Finished), f"last event was {last!r}"
    return last.reason


# -- the emulator ------------------------------------------------------------------------------

GEMMA = "@cf/google/gemma-4-26b-a4b-it"
QWQ = "@cf/qwen/qwq-32b"
DEEPSEEK = "@cf/deepseek-ai/deepseek-r1-distill-qwen-32b"
GPT_OSS = "@cf/openai/gpt-oss-120b"
KIMI = "@cf/moonshotai/kimi-k2.6"
#: Short replies keep the emulator tests quick.
SHORT = 24


def emu_conn(server: Any, **overrides: Any) -> Connection:
    """A connection to the emulator (``server`` is an EmulatorServer) with demo credentials."""
    from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN

    values: dict[str, Any] = {
        "account_id": DEMO_ACCOUNT_ID,
        "token": Secret(DEMO_TOKEN),
        "api_base": server.api_base,
        "gateway_base": server.gateway_base,
        "gateway_id": "gw-test",
    }
    values.update(overrides)
    return Connection(**values)


def short_chat(text: str = "hello", *, model: str = LEGACY_MODEL, **overrides: Any) -> ChatRequest:
    from flarechat.api.config import SamplingParams

    overrides.setdefault("params", SamplingParams(max_tokens=SHORT))
    return chat(text, model=model, **overrides)


async def drain(
    client: WorkersAIClient, conn: Connection, request: ChatRequest
) -> tuple[list[StreamEvent], Exception | None]:
    """Every event up to the end or the failure, and the failure (None when the reply ended)."""
    seen: list[StreamEvent] = []
    try:
        async for event in client.stream_chat(conn, request):
            seen.append(event)
    except Exception as exc:  # noqa: BLE001 - handed back for the test to assert on
        return seen, exc
    return seen, None

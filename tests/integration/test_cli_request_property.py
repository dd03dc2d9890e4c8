"""Guard rail (issue 23): ``flarechat ask --print-request curl`` prints the request ``ask``
sends. For random models, parameters, system prompts, options (JSON mode, tools, tool choice,
reasoning effort, LoRA, an image) and routes, the printed curl -- read back as its URL,
headers and body -- equals, field by field, the request the emulator received from ``ask``."""

from __future__ import annotations

import json
import shlex
import struct
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from flarechat import cli
from flarechat.emulator.server import EmulatorServer
from flarechat.emulator.state import RecordedRequest
from support.cli import FAST, point_at

TOKEN = "request-property-secret-5d1c9e"
LLAMA_70B = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
GPT_OSS = "@cf/openai/gpt-oss-120b"
MISTRAL_LORA = "@cf/mistral/mistral-7b-instruct-v0.2-lora"
SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + crc


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    tools, image = tmp_path / "tools.json", tmp_path / "heron.png"
    tools.write_text(json.dumps([WEATHER]), encoding="utf-8")
    image.write_bytes(_png(64, 48))
    return {"tools": str(tools), "image": str(image)}


@st.composite
def asks(draw: st.DrawFn) -> list[str]:
    """An ``ask`` command line (without its files' paths, named ``{tools}``/``{image}``)."""
    model = draw(st.sampled_from((LLAMA_70B, GPT_OSS, MISTRAL_LORA, SCOUT)))
    argv = ["--model", model, "--max-tokens", str(draw(st.integers(16, 256)))]
    if draw(st.booleans()):
        argv += ["--temperature", f"{draw(st.floats(0, 2)):.2f}"]
    if system := draw(st.sampled_from(("", "Be brief.", 'Say "hi" \\ $HOME\ncafé'))):
        argv += ["--system", system]
    if model == LLAMA_70B and draw(st.booleans()):
        argv += ["--tools", "{tools}"]
        if choice := draw(st.sampled_from(("", "auto", "required", "get_weather"))):
            argv += ["--tool-choice", choice]
    elif model != MISTRAL_LORA and draw(st.booleans()):
        argv += ["--response-format", "json_object"]
    if model == GPT_OSS and draw(st.booleans()):
        argv += ["--reasoning-effort", draw(st.sampled_from(("low", "medium", "high")))]
    if model == MISTRAL_LORA and draw(st.booleans()):
        argv += ["--lora", "pirate-speak"]
    if model == SCOUT and draw(st.booleans()):
        argv += ["--image", "{image}"]
    if draw(st.booleans()):
        argv += ["--reject-if-busy"]
    if draw(st.booleans()):
        argv += ["--gateway", "my-gw"]
    return [*argv, draw(st.sampled_from(("Hello", "Use get_weather for Paris")))]


def _curl_request(text: str) -> tuple[str, dict[str, str], Any]:
    """The URL, headers (lower-case names) and JSON body a printed curl command sends."""
    words = shlex.split(text.replace("\\\n", " "))
    url = words[words.index("POST") + 1]
    headers: dict[str, str] = {}
    for index, word in enumerate(words):
        if word == "--header":
            name, _, value = words[index + 1].partition(": ")
            headers[name.lower()] = value
    return url, headers, json.loads(words[words.index("--data-raw") + 1])


def _generations(emulator: EmulatorServer) -> list[RecordedRequest]:
    return [
        r
        for r in emulator.state.requests
        if "/ai/run/" in r.path or r.path.endswith("/chat/completions")
    ]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(argv=asks())
def test_print_request_prints_the_request_ask_sends(
    emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    argv: list[str],
) -> None:
    point_at(emulator, monkeypatch, token=TOKEN)
    emulator.state.reset()
    argv = [word.format(**files) for word in argv]
    event(argv[1])
    code = cli.main(["ask", "--print-request", "curl", *argv], retry_policy=FAST)
    printed = capsys.readouterr()
    assert code == cli.EXIT_OK, printed.err
    assert _generations(emulator) == []  # printing sends nothing
    assert TOKEN not in printed.out
    url, headers, body = _curl_request(printed.out)
    code = cli.main(["ask", *argv], retry_policy=FAST)
    asked = capsys.readouterr()
    assert code == cli.EXIT_OK, asked.err
    [sent] = _generations(emulator)
    assert isinstance(sent.json, dict)
    assert sorted(body) == sorted(sent.json)  # no field left out, none added
    for key, value in sent.json.items():
        assert body[key] == value, key
    assert (urlsplit(url).path, urlsplit(url).query) == (sent.path, sent.query)
    for name, value in headers.items():
        if "$" not in value:  # the tokens are shown as environment references
            assert sent.headers.get(name) == value, name

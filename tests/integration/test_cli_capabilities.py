"""`flarechat ask` with images, JSON output, tools, reasoning effort, LoRA and licence terms,
end to end against the emulator: what each flag puts in the body, how replies print in both
modes, and every misuse refused with the usage code before a generation request is sent."""

from __future__ import annotations

import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from flarechat import cli
from flarechat.api.config import ResponseFormat
from flarechat.api.models import ModelInfo
from flarechat.api.tools import ToolCall
from flarechat.cli.attachments import MAX_IMAGE_BYTES, MAX_IMAGES, image_kind
from flarechat.cli.reply import tool_call_line
from flarechat.cli.specs import reply_json_problem
from flarechat.core.catalogue import CatalogueCache
from flarechat.emulator.server import EmulatorServer
from support.cli import Result, point_at, run_cli

TOKEN = "cli-capabilities-secret-91c4e7a2f05b"
LLAMA = "@cf/meta/llama-3.1-8b-instruct-fast"  # no vision, no JSON mode, no LoRA
LLAMA_33 = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"  # tools, legacy schema (flat tools)
SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"  # vision + tools, content parts
VISION_32 = "@cf/meta/llama-3.2-11b-vision-instruct"  # native `image` field, 5016 until agreed
GEMMA = "@cf/google/gemma-4-26b-a4b-it"  # OpenAI-shaped: streamed tool-call fragments
LORA_MODEL = "@cf/mistral/mistral-7b-instruct-v0.2-lora"
GLM = "@cf/zai-org/glm-4.7-flash"  # reasoning effort, may be turned off
GPT_OSS = "@cf/openai/gpt-oss-120b"  # reasoning effort, mandatory
LLAMA_32_LICENCE = "llama3_2"
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
PERSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}


@pytest.fixture
def cli_env(emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    return point_at(emulator, monkeypatch, token=TOKEN)


def ask(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    return run_cli(capsys, "ask", *argv, token=TOKEN)


def generations(server: EmulatorServer) -> list[dict[str, Any]]:
    """Bodies of every generation request (native run and chat completions)."""
    return [r.json for r in server.state.requests if r.method == "POST"]


def lookups(server: EmulatorServer) -> list[str]:
    return [r.path for r in server.state.requests if r.method == "GET"]


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + crc


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def write(tmp_path: Path, name: str, content: bytes | str | object) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return str(path)


def one_line_usage_error(result: Result, *expected: str) -> None:
    assert result.code == cli.EXIT_USAGE, result.err
    lines = [line for line in result.err.splitlines() if line.startswith("flarechat: ")]
    errors = [line for line in lines if not line.startswith("flarechat: warning:")]
    assert len(errors) == 1, result.err
    for text in expected:
        assert text in errors[0], errors[0]
    assert result.out == ""


# --- help and plain asks ----------------------------------------------------------------------


def test_help_documents_every_capability_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ask", "--help"]) == cli.EXIT_OK
    text = capsys.readouterr().out
    for flag in (
        "--image PATH",
        "--response-format {json_object,json_schema}",
        "--json-schema FILE",
        "--tools FILE",
        "--tool-choice {auto,none,required,NAME}",
        "--reasoning-effort {low,medium,high,none}",
        "--lora NAME",
        "--agree-terms",
    ):
        assert flag in text, flag
    words = " ".join(text.split())  # argparse wraps the help text
    assert "at most 20 MB" in words
    assert "PNG, JPEG, WEBP or GIF" in words


def test_a_plain_ask_looks_nothing_up(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", LLAMA, "hello")
    assert result.code == cli.EXIT_OK
    assert lookups(cli_env) == []  # one request, as fast as before
    assert len(generations(cli_env)) == 1


# --- images -----------------------------------------------------------------------------------


def test_images_go_as_content_parts_and_the_model_sees_them(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = write(tmp_path, "a.png", png(2, 3))
    second = write(tmp_path, "b.jpg", jpeg(640, 480))
    result = ask(capsys, "--model", SCOUT, "--image", first, "--image", second, "What is this?")
    assert result.code == cli.EXIT_OK, result.err
    assert "I received 2 images" in result.out
    assert "2\N{MULTIPLICATION SIGN}3 PNG" in result.out
    assert "640\N{MULTIPLICATION SIGN}480 JPEG" in result.out
    [body] = generations(cli_env)
    [message] = body["messages"]
    assert message["content"][0] == {"type": "text", "text": "What is this?"}
    urls = [part["image_url"]["url"] for part in message["content"][1:]]
    assert urls[0].startswith("data:image/png;base64,")
    assert urls[1].startswith("data:image/jpeg;base64,")
    assert "image" not in body
    assert any("/ai/models/schema" in path for path in lookups(cli_env))


def test_agree_terms_accepts_the_licence_then_sends_the_same_request(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    image = write(tmp_path, "cat.png", png(4, 4))
    result = ask(capsys, "--model", VISION_32, "--agree-terms", "--image", image, "Describe it")
    assert result.code == cli.EXIT_OK, result.err
    assert f"accepting the licence of {VISION_32}" in result.err
    assert LLAMA_32_LICENCE in result.err  # the licence it accepted is named
    assert "I received 1 image: 1. a 4\N{MULTIPLICATION SIGN}4 PNG" in result.out
    refused, agreement, answered = generations(cli_env)
    assert agreement == {"prompt": "agree"}
    assert refused == answered  # the same request, sent again once
    # Its schema takes content parts as well as `image`: the api prefers the parts.
    [message] = answered["messages"]
    assert message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_terms_without_the_flag_name_the_model_licence_and_the_fix(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", VISION_32, "hello")
    assert result.code == cli.EXIT_MODEL
    first = result.err.splitlines()[0]
    assert VISION_32 in first
    assert "licence" in first
    assert LLAMA_32_LICENCE in first
    assert "--agree-terms" in first
    assert len(generations(cli_env)) == 1  # nothing was agreed on the user's behalf


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, "no such file"),
        ({"empty.png": b""}, "the file is empty"),
        ({"notes.png": "not an image at all"}, "not an image of a known type"),
        ({"folder": None}, "this is a folder"),
    ],
)
def test_unusable_image_files_are_refused(
    cli_env: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    files: dict[str, bytes | str | None],
    expected: str,
) -> None:
    path = str(tmp_path / "missing.png")
    for name, content in files.items():
        if content is None:
            (tmp_path / name).mkdir()
            path = str(tmp_path / name)
        else:
            path = write(tmp_path, name, content)
    result = ask(capsys, "--model", SCOUT, "--image", path, "What is this?")
    one_line_usage_error(result, f"--image {path}", expected)
    assert cli_env.state.requests == []


def test_oversize_and_too_many_images_are_refused(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    big = tmp_path / "big.png"
    with big.open("wb") as file:  # sparse: no 20 MB written to disk
        file.write(png(1, 1))
        file.truncate(MAX_IMAGE_BYTES + 1)
    one_line_usage_error(ask(capsys, "--model", SCOUT, "--image", str(big), "x"), "at most 20 MB")
    small = write(tmp_path, "small.png", png(1, 1))
    many = [arg for _ in range(MAX_IMAGES + 1) for arg in ("--image", small)]
    one_line_usage_error(ask(capsys, "--model", SCOUT, *many, "x"), f"at most {MAX_IMAGES}")
    assert cli_env.state.requests == []


def test_an_image_to_a_model_without_vision_is_refused_before_sending(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    image = write(tmp_path, "a.png", png(2, 2))
    result = ask(capsys, "--model", LLAMA, "--image", image, "What is this?")
    one_line_usage_error(result, LLAMA, "cannot read images", "flarechat models")
    assert generations(cli_env) == []


def test_the_cached_catalogue_answers_without_asking_the_server(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    CatalogueCache().save([ModelInfo(name=SCOUT, vision=False)])  # what the window saw
    image = write(tmp_path, "a.png", png(2, 2))
    result = ask(capsys, "--model", SCOUT, "--image", image, "What is this?")
    one_line_usage_error(result, "cannot read images")
    assert not any("/ai/models/search" in path for path in lookups(cli_env))
    assert generations(cli_env) == []


def test_a_model_the_catalogue_does_not_know_is_sent_unchecked(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    image = write(tmp_path, "a.png", png(2, 2))
    result = ask(capsys, "--model", "@cf/acme/unlisted-vision", "--image", image, "What?")
    assert "warning: @cf/acme/unlisted-vision is not in the account's catalogue" in result.err
    assert result.code == cli.EXIT_MODEL  # the server has the last word
    [body] = generations(cli_env)
    assert body["messages"][0]["content"][1]["type"] == "image_url"  # the documented default


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (png(1, 1), "image/png"),
        (jpeg(1, 1), "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8L", "image/webp"),
        (b"BM\x00\x00", None),
    ],
)
def test_image_types_are_known_by_their_first_bytes(data: bytes, mime: str | None) -> None:
    assert image_kind(data) == mime


# --- JSON output ------------------------------------------------------------------------------


def test_json_object_prints_formatted_json_and_says_streaming_was_off(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", SCOUT, "--response-format", "json_object", "Give me JSON")
    assert result.code == cli.EXIT_OK, result.err
    value = json.loads(result.out)
    assert isinstance(value, dict)
    assert result.out == json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    assert "note: JSON output does not stream" in result.err
    assert "warning" not in result.err
    [body] = generations(cli_env)
    assert body["response_format"] == {"type": "json_object"}
    assert body["stream"] is False  # native JSON mode does not stream


def test_json_schema_in_json_mode_reports_the_note_and_the_check(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = write(tmp_path, "person.json", PERSON_SCHEMA)
    result = ask(capsys, "--json", "--model", SCOUT, "--json-schema", schema, "Who?")
    assert result.code == cli.EXIT_OK, result.err
    record = json.loads(result.out)
    person = json.loads(record["text"])
    assert isinstance(person["name"], str)
    assert isinstance(person["age"], int)
    assert record["json_problem"] is None
    assert record["note"].startswith("JSON output does not stream")
    assert record["tool_calls"] == []
    [body] = generations(cli_env)
    assert body["response_format"] == {"type": "json_schema", "json_schema": PERSON_SCHEMA}


def test_a_reply_that_is_not_json_is_printed_as_it_came_with_a_warning(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", LLAMA, "--response-format", "json_object", "Plain, please")
    assert result.code == cli.EXIT_OK, result.err
    assert "Plain, please" in result.out  # the emulator's text reply, unchanged
    assert "warning: the reply is not valid JSON" in result.err
    assert "has no response_format" in result.err  # its schema said so before sending


def test_a_reply_is_checked_against_the_schema() -> None:
    fmt = ResponseFormat.json_schema(PERSON_SCHEMA)
    assert reply_json_problem('{"name": "Ada", "age": 36}', fmt) == (
        {"name": "Ada", "age": 36},
        None,
    )
    value, problem = reply_json_problem('{"name": "Ada", "age": "old"}', fmt)
    assert value == {"name": "Ada", "age": "old"}
    assert problem is not None
    assert "at age" in problem
    assert "integer" in problem
    assert reply_json_problem("[1]", ResponseFormat.json_object())[1] is not None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ([{"type": "object"}], "is a JSON object"),
        ({"type": "array"}, 'top-level "type" must be "object"'),
        ({"description": "nothing"}, 'neither "type": "object" nor "properties"'),
        ({"type": "object", "properties": {"a": {"type": "strin"}}}, "at properties/a/type"),
        ({"$schema": "https://example.com/mine", "type": "object"}, "is not a JSON Schema draft"),
        ({"type": "object", "properties": []}, '"properties" must be an object'),
    ],
)
def test_unusable_json_schemas_are_refused(
    cli_env: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    content: object,
    expected: str,
) -> None:
    schema = write(tmp_path, "schema.json", content)
    result = ask(capsys, "--model", SCOUT, "--json-schema", schema, "Who?")
    one_line_usage_error(result, f"--json-schema {schema}", expected)
    assert cli_env.state.requests == []


def test_json_flags_that_contradict_each_other_are_refused(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = write(tmp_path, "person.json", PERSON_SCHEMA)
    both = ask(capsys, "--response-format", "json_object", "--json-schema", schema, "x")
    one_line_usage_error(both, "--response-format json_object")
    missing = ask(capsys, "--response-format", "json_schema", "x")
    one_line_usage_error(missing, "needs --json-schema FILE")
    absent = ask(capsys, "--json-schema", str(tmp_path / "nope.json"), "x")
    one_line_usage_error(absent, "no such file")
    assert cli_env.state.requests == []


# --- tools ------------------------------------------------------------------------------------


def test_legacy_tool_calls_print_as_lines_on_stderr(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = write(tmp_path, "tools.json", [WEATHER_TOOL])
    result = ask(capsys, "--model", LLAMA_33, "--tools", tools, "Call get_weather for Paris")
    assert result.code == cli.EXIT_OK, result.err
    assert 'tool call: get_weather({"city": "example"})' in result.err.splitlines()
    [body] = generations(cli_env)
    assert body["tools"] == [WEATHER_TOOL]  # the flat form its legacy schema documents
    assert "tool_choice" not in body


def test_with_json_tool_calls_are_only_in_the_record(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = write(tmp_path, "tools.json", [WEATHER_TOOL])
    argv = ("--json", "--model", LLAMA_33, "--tools", tools)
    result = ask(capsys, *argv, "Call get_weather for Paris")
    assert result.code == cli.EXIT_OK, result.err
    [call] = json.loads(result.out)["tool_calls"]
    assert set(call) == {"id", "name", "arguments"}
    assert call["id"]
    assert (call["name"], call["arguments"]) == ("get_weather", {"city": "example"})
    assert "tool call:" not in result.err


def test_tools_go_wrapped_to_a_model_whose_schema_takes_both_forms(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = write(tmp_path, "tools.json", [WEATHER_TOOL])
    result = ask(capsys, "--model", SCOUT, "--tools", tools, "Call get_weather for Paris")
    assert result.code == cli.EXIT_OK, result.err
    assert 'tool call: get_weather({"city": "example"})' in result.err.splitlines()
    [body] = generations(cli_env)
    assert body["tools"] == [{"type": "function", "function": WEATHER_TOOL}]


def test_streamed_openai_tool_calls_appear_in_the_json_record(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = write(tmp_path, "tools.json", [WEATHER_TOOL, {"name": "get_time"}])
    argv = ("--json", "--model", GEMMA, "--tools", tools, "--tool-choice", "get_weather")
    result = ask(capsys, *argv, "Anything")
    assert result.code == cli.EXIT_OK, result.err
    record = json.loads(result.out)
    [call] = record["tool_calls"]
    assert call["name"] == "get_weather"
    assert call["arguments"] == {"city": "example"}
    assert call["id"].startswith("chatcmpl-tool-")
    assert record["finish_reason"] == "tool_calls"
    assert "note" not in record  # streamed: nothing was turned off
    [body] = generations(cli_env)
    assert body["stream"] is True
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_weather", "get_time"]


@pytest.mark.parametrize("mode", ["auto", "none", "required"])
def test_tool_choice_modes_are_sent(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str
) -> None:
    tools = write(tmp_path, "tools.json", [WEATHER_TOOL])
    result = ask(capsys, "--model", GEMMA, "--tools", tools, "--tool-choice", mode, "Hi")
    assert result.code == cli.EXIT_OK, result.err
    [body] = generations(cli_env)
    assert body["tool_choice"] == mode
    called = "tool call: get_weather(" in result.err
    assert called is (mode == "required")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ({"name": "get_weather"}, "expected a JSON list of tools"),
        ([], "expected a JSON list of tools"),
        ([{"description": "no name"}], "tool 1: the name must be"),
        ([{"name": "has space"}], "tool 1: the name must be"),
        ([{"name": "f", "description": 3}], "tool 1 (f): the description must be text"),
        ([{"name": "f", "parameters": {"type": "string"}}], "parameters are not a usable schema"),
        ([{"name": "f"}, {"name": "f"}], "f defined twice"),
    ],
)
def test_unusable_tools_files_are_refused(
    cli_env: EmulatorServer,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    content: object,
    expected: str,
) -> None:
    tools = write(tmp_path, "tools.json", content)
    result = ask(capsys, "--model", GEMMA, "--tools", tools, "Hi")
    one_line_usage_error(result, f"--tools {tools}", expected)
    assert cli_env.state.requests == []


def test_a_tool_choice_naming_no_defined_tool_is_refused(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tools = write(tmp_path, "tools.json", [WEATHER_TOOL])
    result = ask(capsys, "--model", GEMMA, "--tools", tools, "--tool-choice", "get_time", "Hi")
    one_line_usage_error(result, "--tool-choice get_time: no such tool", "get_weather")
    without = ask(capsys, "--model", GEMMA, "--tool-choice", "auto", "Hi")
    one_line_usage_error(without, "--tool-choice needs --tools FILE")
    assert cli_env.state.requests == []


def test_tool_call_line_shows_unparsed_arguments_as_received() -> None:
    call = ToolCall.of(id="1", name="f", arguments='{"a": ')
    assert tool_call_line(call) == 'tool call: f({"a": )'


# --- reasoning effort -------------------------------------------------------------------------


@pytest.mark.parametrize(("flag", "sent"), [("low", "low"), ("high", "high"), ("none", None)])
def test_reasoning_effort_is_sent_and_none_turns_reasoning_off(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str], flag: str, sent: str | None
) -> None:
    result = ask(capsys, "--json", "--model", GLM, "--reasoning-effort", flag, "Think")
    assert result.code == cli.EXIT_OK, result.err
    [body] = generations(cli_env)
    assert body["reasoning_effort"] == sent
    assert "reasoning_effort" in body  # "none" is an explicit null, not "not sent"
    assert (json.loads(result.out)["reasoning"] == "") is (sent is None)


def test_reasoning_effort_the_model_cannot_take_is_refused(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    mandatory = ask(capsys, "--model", GPT_OSS, "--reasoning-effort", "none", "Think")
    one_line_usage_error(mandatory, GPT_OSS, "low, medium, high")
    plain = ask(capsys, "--model", LLAMA, "--reasoning-effort", "low", "Think")
    one_line_usage_error(plain, LLAMA, "not a reasoning model")
    assert generations(cli_env) == []


# --- LoRA -------------------------------------------------------------------------------------


def test_lora_adapter_is_sent_by_name(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", LORA_MODEL, "--lora", "pirate-speak", "Hello")
    assert result.code == cli.EXIT_OK, result.err
    [body] = generations(cli_env)
    assert body["lora"] == "pirate-speak"
    assert not any("/ai/models/schema" in path for path in lookups(cli_env))


def test_lora_on_a_model_without_lora_is_refused_before_sending(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", LLAMA, "--lora", "pirate-speak", "Hello")
    one_line_usage_error(result, LLAMA, "takes no LoRA adapter")
    assert generations(cli_env) == []


def test_an_unknown_adapter_fails_with_the_servers_message(
    cli_env: EmulatorServer, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ask(capsys, "--model", LORA_MODEL, "--lora", "no-such-adapter", "Hello")
    assert result.code == cli.EXIT_API
    assert re.search(r"code 3039", result.err), result.err
    assert len(generations(cli_env)) == 1

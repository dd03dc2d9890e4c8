"""ChatSession using what models can do, on plain asyncio against the emulator: images, JSON
replies, tool calls in both shapes, LoRA, licence terms, reasoning effort and thinking."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from capability_helpers import (
    GEMMA,
    GLM,
    LLAMA_70B,
    MISTRAL_LORA,
    SCOUT,
    VISION_32,
    WEATHER,
    catalogue_of,
    chat_bodies,
    picture,
)
from session_helpers import Settings, emulator_conn, session_env

from flarechat.api.config import Endpoint
from flarechat.api.errors import ErrorKind
from flarechat.core.conversation import ROLE_TOOL
from flarechat.core.session import (
    MessageAdded,
    Notice,
    NoticeKind,
    RefusalKind,
    SendRefused,
    ToolCallAppended,
    ToolCallsReceived,
    TurnFailed,
    TurnStarted,
)
from flarechat.emulator import DEMO_ACCOUNT_ID
from flarechat.emulator.server import EmulatorServer

pytestmark = pytest.mark.asyncio

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
}


async def test_an_image_goes_to_a_vision_model_as_a_content_part_and_is_stored(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), model=SCOUT)
    catalogue = await catalogue_of(emulator)
    image = picture(64, 48)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        reply = env.session.send("What bird is this?", images=[image])
        assert reply is not None
        done = await env.events.finished(reply, "done")
        assert "I received 1 image: 1. a 64\N{MULTIPLICATION SIGN}48 PNG" in done.message.content
        [body] = chat_bodies(emulator)
        parts = body["messages"][-1]["content"]
        assert parts[0] == {"type": "text", "text": "What bird is this?"}
        assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
        assert done.message.request is not None
        assert done.message.request["images"] == 1
        stored = await env.store.load_tree(env.session.id)
        user = stored.path()[0]
        assert user.attachments == [image]
        assert user.id in [h.message_id for h in await env.store.search("bird")]


async def test_the_model_schema_is_fetched_once_when_images_are_sent_natively(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    emulator.state.agreements.agree(DEMO_ACCOUNT_ID, VISION_32)
    settings = Settings(emulator_conn(emulator), model=VISION_32)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        for prompt in ("Describe", "And now?"):
            reply = env.session.send(prompt, images=[picture(8, 6)])
            assert reply is not None
            done = await env.events.finished(reply, "done")
            assert "8\N{MULTIPLICATION SIGN}6 PNG" in done.message.content
        schema_reads = [r for r in emulator.state.requests if r.path.endswith("/models/schema")]
        assert len(schema_reads) == 1
        body = chat_bodies(emulator)[-1]
        # Its schema takes image_url parts (preferred over the one-image ``image`` field),
        # and the first turn's image rides along in the history.
        assert [p["type"] for p in body["messages"][0]["content"]] == ["text", "image_url"]
        assert "image" not in body


async def test_an_image_for_a_model_without_vision_is_refused_before_anything_is_sent(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, tmp_path, catalogue=catalogue) as env:
        assert env.session.refusal([picture()]) is not None
        with pytest.raises(SendRefused) as refused:
            env.session.send("What is this?", images=[picture()])
        assert refused.value.refusal.kind is RefusalKind.NO_VISION
        assert refused.value.refusal.model == LLAMA_70B
        assert env.session.refusal([picture()], model=SCOUT) is None
        assert chat_bodies(emulator) == []
        assert len(env.session.tree) == 0
        assert not env.events.of(MessageAdded)


async def test_json_schema_reply_turns_streaming_off_says_so_and_validates(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        fmt = {"type": "json_schema", "schema": PERSON, "name": "person"}
        env.session.set_options("", {"response_format": fmt})
        reply = env.session.send("Who wrote Dune?")
        assert reply is not None
        done = await env.events.finished(reply, "done")
        [notice] = env.events.of(Notice)
        assert (notice.message_id, notice.kind) == (reply, NoticeKind.STREAMING_DISABLED)
        [body] = chat_bodies(emulator)
        assert body["stream"] is False
        assert body["response_format"] == {"type": "json_schema", "json_schema": PERSON}
        verdict = env.session.json_verdict(reply)
        assert verdict is not None
        assert (verdict.parses, verdict.valid, verdict.problem) == (True, True, None)
        assert verdict.pretty.startswith("{\n  ")
        assert done.message.meta is not None
        assert done.message.meta["note"] == notice.text
        stored = (await env.store.load_tree(env.session.id)).get(reply)
        assert stored.request is not None
        assert stored.request["response_format"]["schema"] == PERSON


async def test_json_mode_on_chat_completions_streams_and_sends_the_wrapper(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conn = dataclasses.replace(emulator_conn(emulator), endpoint=Endpoint.OPENAI)
    async with session_env(emulator, tmp_path, settings=Settings(conn, model=GEMMA)) as env:
        fmt = {"type": "json_schema", "schema": PERSON, "name": "person"}
        env.session.set_options("", {"response_format": fmt})
        reply = env.session.send("Who?")
        assert reply is not None
        await env.events.finished(reply, "done")
        assert not env.events.of(Notice)
        [body] = chat_bodies(emulator)
        assert body["response_format"]["json_schema"] == {
            "name": "person",
            "schema": PERSON,
            "strict": True,
        }
        verdict = env.session.json_verdict(reply)
        assert verdict is not None
        assert verdict.valid


async def _tool_round(env: object, emulator: EmulatorServer) -> tuple[str, str, str]:
    """Ask for a tool call, answer it; (call id, first reply id, final reply id)."""
    from session_helpers import Harness

    assert isinstance(env, Harness)
    env.session.set_options("", {"tools": [WEATHER], "tool_choice": "auto"})
    reply = env.session.send("Use get_weather for Paris")
    assert reply is not None
    done = await env.events.finished(reply, "done")
    assert done.message.finish_reason == "tool_calls"
    [call] = done.message.tool_calls
    assert call["name"] == "get_weather"
    assert call["arguments"] == '{"city":"example"}' or '"city"' in call["arguments"]
    [received] = env.events.of(ToolCallsReceived)
    assert received.calls == (call,)
    final = env.session.send_tool_results(reply, {call["id"]: "Sunny, 21 degrees"})
    assert final is not None
    answer = await env.events.finished(final, "done")
    assert answer.message.content == "The tool said: Sunny, 21 degrees"
    tree = await env.store.load_tree(env.session.id)
    path = tree.path()
    assert [m.role for m in path] == ["user", "assistant", ROLE_TOOL, "assistant"]
    assert path[1].tool_calls == [call]
    assert (path[2].tool_call_id, path[2].content) == (call["id"], "Sunny, 21 degrees")
    return call["id"], reply, final


async def test_legacy_tool_call_streams_is_stored_and_its_result_answered(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        call_id, _reply, _final = await _tool_round(env, emulator)
        first, second = chat_bodies(emulator)
        assert first["tools"] == [
            {k: v for k, v in WEATHER.items() if k != "canned_result"}
        ]  # the legacy schema's flat form
        assert first["stream"] is True
        tool = second["messages"][-1]
        assert (tool["role"], tool["tool_call_id"], tool["content"]) == (
            "tool",
            call_id,
            "Sunny, 21 degrees",
        )
        assert '"get_weather"' in second["messages"][-2]["content"]  # legacy: calls as text


async def test_openai_tool_call_streams_in_fragments_and_keeps_its_id(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    conn = dataclasses.replace(emulator_conn(emulator), endpoint=Endpoint.OPENAI)
    async with session_env(emulator, tmp_path, settings=Settings(conn, model=GEMMA)) as env:
        call_id, reply, _final = await _tool_round(env, emulator)
        assert call_id.startswith("chatcmpl-tool-")
        pieces = [e for e in env.events.of(ToolCallAppended) if e.message_id == reply]
        assert len(pieces) > 2
        assert (pieces[0].id, pieces[0].name) == (call_id, "get_weather")
        first, second = chat_bodies(emulator)
        assert first["tools"][0]["type"] == "function"
        assert first["tool_choice"] == "auto"
        assistant, tool = second["messages"][-2:]
        assert assistant["tool_calls"][0]["id"] == call_id
        assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"
        assert (tool["role"], tool["tool_call_id"], tool["name"]) == (
            "tool",
            call_id,
            "get_weather",
        )


async def test_tool_results_must_answer_every_call(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        env.session.set_options("", {"tools": [WEATHER], "tool_choice": "required"})
        reply = env.session.send("Weather?")
        assert reply is not None
        done = await env.events.finished(reply, "done")
        [call] = done.message.tool_calls
        with pytest.raises(ValueError, match="No result"):
            env.session.send_tool_results(reply, {})
        with pytest.raises(ValueError, match="no tool call"):
            env.session.send_tool_results(reply, {call["id"]: "x", "other": "y"})
        assert env.session.send_tool_results("not-a-message", {}) is None


async def test_lora_adapter_reaches_the_body_and_refusals_are_kind_lora(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), model=MISTRAL_LORA)
    async with session_env(emulator, tmp_path, settings=settings) as env:
        env.session.set_options("", {"lora": "pirate-speak"})
        reply = env.session.send("Hello")
        assert reply is not None
        await env.events.finished(reply, "done")
        assert chat_bodies(emulator)[-1]["lora"] == "pirate-speak"
        env.session.set_options("", {"lora": "no-such-adapter"})
        missing = env.session.send("Again")
        assert missing is not None
        failed = await env.events.wait(TurnFailed, lambda e: e.message_id == missing)
        assert (failed.kind, failed.extra["code"]) == (ErrorKind.LORA, 3039)
        env.session.set_model(LLAMA_70B)
        env.session.set_options("", {"lora": "pirate-speak"})
        unsupported = env.session.send("And on a model without LoRA")
        assert unsupported is not None
        failed = await env.events.wait(TurnFailed, lambda e: e.message_id == unsupported)
        assert (failed.kind, failed.extra["code"]) == (ErrorKind.LORA, 5005)


async def test_terms_5016_then_agree_sends_the_same_reply_and_is_remembered(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), model=VISION_32)
    catalogue = await catalogue_of(emulator)
    info = catalogue(VISION_32)
    assert info is not None
    async with session_env(emulator, tmp_path, settings=settings, catalogue=catalogue) as env:
        reply = env.session.send("Hello")
        assert reply is not None
        failed = await env.events.wait(TurnFailed, lambda e: e.message_id == reply)
        assert failed.kind == ErrorKind.TERMS
        assert failed.extra["model"] == VISION_32
        assert failed.extra["terms_url"] == info.terms_url
        assert env.session.agree_terms(reply)
        done = await env.events.finished(reply, "done")
        assert done.message.content
        assert done.message.error is None
        assert [n.kind for n in env.events.of(Notice)] == [NoticeKind.TERMS_AGREED]
        assert emulator.state.agreements.agreed(DEMO_ACCOUNT_ID, VISION_32)
        assert await env.store.has_agreed(DEMO_ACCOUNT_ID, VISION_32)
        stored = (await env.store.load_tree(env.session.id)).get(reply)
        assert (stored.status, stored.content) == ("done", done.message.content)
        # The server forgot (a new account token, a reset): the app agrees again unasked.
        emulator.state.reset_agreements()
        again = env.session.send("Hello again")
        assert again is not None
        await env.events.finished(again, "done")
        assert not [e for e in env.events.of(TurnFailed) if e.message_id == again]
        assert len(env.events.of(Notice)) == 2
        assert not env.session.agree_terms(again)  # not a terms failure


async def test_reasoning_effort_and_thinking_reach_the_body(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = Settings(emulator_conn(emulator), model=GLM)
    async with session_env(emulator, tmp_path, settings=settings) as env:
        env.session.set_options("", {"reasoning_effort": "low"})
        reply = env.session.send("Think a little")
        assert reply is not None
        await env.events.finished(reply, "done")
        assert chat_bodies(emulator)[-1]["reasoning_effort"] == "low"
        env.session.set_options("", {"enable_thinking": False})
        quiet = env.session.send("No thinking")
        assert quiet is not None
        await env.events.finished(quiet, "done")
        body = chat_bodies(emulator)[-1]
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
        assert "reasoning_effort" not in body


async def test_a_bad_option_fails_the_reply_before_sending(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with session_env(emulator, tmp_path) as env:
        env.session.set_options("", {"tools": [{"description": "no name"}]})
        reply = env.session.send("Hello")
        assert reply is not None
        failed = await env.events.wait(TurnFailed, lambda e: e.message_id == reply)
        assert failed.kind == ErrorKind.BAD_REQUEST
        assert "name" in failed.message
        assert chat_bodies(emulator) == []
        assert env.events.of(TurnStarted)

"""Guard rail (issue 23): View as code shows the request that was sent. For random models,
parameters, system prompts, options (JSON mode, tools, reasoning effort, LoRA, images),
endpoints and ways of sending (a chat message, a compare column, regenerate, continue, a tool
result, a template row), the curl View as code prints -- read back as its URL, headers and
body -- equals, field by field, the request the emulator received for that reply. Also after
the conversation was saved and loaded back, as a reply from an earlier run is viewed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from capability_helpers import (
    LLAMA_70B,
    MISTRAL_LORA,
    SCOUT,
    WEATHER,
    catalogue_of,
    picture,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from session_helpers import Settings, emulator_conn, session_env

from flarechat.api.config import Endpoint, SamplingParams
from flarechat.core.lab.request_view import request_code_for
from flarechat.core.request_code import CodeKind
from flarechat.core.session import ColumnSpec, TurnFinished
from flarechat.emulator.server import EmulatorServer
from flarechat.emulator.state import RecordedRequest

GPT_OSS = "@cf/openai/gpt-oss-120b"
WAYS = ("message", "compare", "regenerate", "continue", "tool result", "template")
#: The sampling parameters a conversation (or a compare column) may set.
_SAMPLED = ("temperature", "top_p", "seed")


@dataclasses.dataclass
class _Settings(Settings):
    """The session tests' settings, passing every sampling parameter a chat sets."""

    def sampling(self, params: Mapping[str, object]) -> SamplingParams:
        values = {k: params[k] for k in ("max_tokens", *_SAMPLED) if k in params}
        return SamplingParams(**values)  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True)
class Case:
    model: str
    endpoint: Endpoint
    system_prompt: str
    params: dict[str, Any]
    image: bool
    way: str


@st.composite
def cases(draw: st.DrawFn) -> Case:
    way = draw(st.sampled_from(WAYS))
    model = draw(st.sampled_from((LLAMA_70B, GPT_OSS, MISTRAL_LORA, SCOUT)))
    if way == "tool result":
        model = LLAMA_70B  # the emulator's tool-calling model
    endpoint = draw(st.sampled_from((Endpoint.NATIVE, Endpoint.OPENAI)))
    params: dict[str, Any] = {"max_tokens": 8 if way == "continue" else draw(st.integers(64, 512))}
    for name in _SAMPLED:
        if draw(st.booleans()):
            top = 999 if name == "seed" else 1
            params[name] = draw(st.integers(0, top) if name == "seed" else st.floats(0.05, top))
    plain = way == "continue"  # a JSON reply or a tool call ends before max_tokens
    if way == "tool result" or (not plain and model == LLAMA_70B and draw(st.booleans())):
        params["tools"] = [WEATHER]
        params["tool_choice"] = draw(st.sampled_from(("auto", "required", {"name": "get_weather"})))
    elif not plain and model != MISTRAL_LORA and draw(st.booleans()):
        params["response_format"] = {"type": "json_object"}
    if model == GPT_OSS and draw(st.booleans()):
        params["reasoning_effort"] = draw(st.sampled_from(("low", "medium", "high")))
    if model == MISTRAL_LORA and draw(st.booleans()):
        params["lora"] = "pirate-speak"
    system = draw(st.sampled_from(("", "Be brief.", 'Say "hi" \\ then $HOME\nand café.')))
    image = model == SCOUT and way in ("message", "regenerate") and draw(st.booleans())
    return Case(model, endpoint, system, params, image, way)


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


def _assert_shown_is_sent(shown: str, sent: RecordedRequest) -> None:
    url, headers, body = _curl_request(shown)
    assert isinstance(sent.json, dict)
    assert sorted(body) == sorted(sent.json)  # no field left out, none added
    for key, value in sent.json.items():
        assert body[key] == value, key
    assert (urlsplit(url).path, urlsplit(url).query) == (sent.path, sent.query)
    for name, value in headers.items():
        if "$" not in value:  # the token is shown as an environment reference
            assert sent.headers.get(name) == value, name


def _generations(emulator: EmulatorServer) -> list[RecordedRequest]:
    return [
        r
        for r in emulator.state.requests
        if "/ai/run/" in r.path or r.path.endswith("/chat/completions")
    ]


async def _send(env: Any, case: Case) -> str:
    """Send ``case``'s way; the id of the reply whose request is compared."""
    session = env.session
    images = [picture()] if case.image else []
    prompt = "Use get_weather for Paris" if case.way == "tool result" else "Tell me a story"
    if case.way in ("compare", "template"):
        column = ColumnSpec(
            model=case.model,
            params=case.params,
            system_prompt=case.system_prompt,
            prompt="Describe Lyon in one line" if case.way == "template" else None,
        )
        [reply] = session.send_compare(prompt, [column])
        await env.events.finished(reply)
        return str(reply)
    reply = session.send(prompt, images=images)
    assert reply is not None
    await env.events.finished(reply)
    if case.way == "regenerate":
        reply = session.regenerate(reply)
    elif case.way == "continue":
        assert session.tree.get(reply).finish_reason == "length"
        # The same reply grows: it is shown the request of its second turn, once that ends.
        ends = len([e for e in env.events.of(TurnFinished) if e.message.id == reply])
        assert session.continue_reply(reply) == reply
        await env.events.wait(
            TurnFinished,
            lambda e: (
                e.message.id == reply
                and len([f for f in env.events.of(TurnFinished) if f.message.id == reply]) > ends
            ),
        )
        return str(reply)
    elif case.way == "tool result":
        calls = session.tree.get(reply).tool_calls
        reply = session.send_tool_results(reply, {c["id"]: "Sunny, 21 degrees" for c in calls})
    assert reply is not None
    await env.events.finished(reply)
    return str(reply)


async def _scenario(emulator: EmulatorServer, case: Case, folder: Path) -> None:
    conn = dataclasses.replace(emulator_conn(emulator), endpoint=case.endpoint)
    settings = _Settings(conn, model=case.model)
    catalogue = await catalogue_of(emulator)
    async with session_env(emulator, folder, settings=settings, catalogue=catalogue) as env:
        if case.way not in ("compare", "template"):
            env.session.set_options(case.system_prompt, case.params)
        reply = await _send(env, case)
        sent = _generations(emulator)[-1]
        tree = env.session.tree
        assert tree.get(reply).request, tree.get(reply).error
        _assert_shown_is_sent(request_code_for(tree, reply, conn=conn).forms[CodeKind.CURL], sent)
        await env.session.drain()
        stored = await env.store.load_tree(env.session.id)
        again = request_code_for(stored, reply, conn=conn).forms[CodeKind.CURL]
        _assert_shown_is_sent(again, sent)


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases())
def test_view_as_code_shows_the_request_the_emulator_received(
    emulator_server: EmulatorServer, case: Case
) -> None:
    emulator_server.state.reset()
    event(case.way)
    for option in ("tools", "response_format", "reasoning_effort", "lora"):
        event(option if option in case.params else f"no {option}")
    event("image" if case.image else "no image")
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_scenario(emulator_server, case, Path(folder)))

"""Function calling: tools and tool_choice per endpoint, tool calls of both shapes, tool history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
from api_helpers import GEMMA, Recorder, emu_conn, mock_conn, reply, short_chat, sse

from conftest import ClientFactory
from flarechat.api import (
    ChatMessage,
    ChatRequest,
    Endpoint,
    Finished,
    ModelSchema,
    Route,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
)
from flarechat.api._body import chat_body
from flarechat.api._decode import decode_complete
from flarechat.api._routes import build_chat_request

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

LLAMA = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
LEGACY_SCHEMA = ModelSchema(model=LLAMA, known=True, supports_tools=True, flat_tools=True)
ROUTES = [(route, endpoint) for route in Route for endpoint in Endpoint]


def body(request: ChatRequest, endpoint: Endpoint = Endpoint.NATIVE) -> dict[str, Any]:
    return build_chat_request(mock_conn(endpoint=endpoint), request, user_agent="t").body


def test_tools_are_flat_on_a_legacy_native_schema_and_wrapped_elsewhere() -> None:
    legacy = short_chat(model=LLAMA, tools=(WEATHER,), model_schema=LEGACY_SCHEMA)
    assert body(legacy)["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": WEATHER.parameters,
        }
    ]
    wrapped = {"type": "function", "function": WEATHER.flat()}
    assert body(legacy, Endpoint.OPENAI)["tools"] == [wrapped]
    # no schema: the OpenAI form, which the legacy schema accepts too (cloudflare-api.md §2)
    assert body(short_chat(tools=(WEATHER,)))["tools"] == [wrapped]


def test_tool_choice_forms_and_legacy_schemas_without_it() -> None:
    named = short_chat(tools=(WEATHER,), tool_choice=ToolChoice.named("get_weather"))
    assert body(named, Endpoint.OPENAI)["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }
    assert body(short_chat(tools=(WEATHER,), tool_choice=ToolChoice("required")))[
        "tool_choice"
    ] == ("required")
    legacy = short_chat(
        tools=(WEATHER,), tool_choice=ToolChoice("auto"), model_schema=LEGACY_SCHEMA
    )
    assert "tool_choice" not in body(legacy)
    assert "tools" not in body(short_chat())


CALL = ToolCall.of(id="call_538", name="get_weather", arguments={"city": "Paris"})
HISTORY = (
    ChatMessage("user", "Weather in Paris?"),
    ChatMessage("assistant", "", tool_calls=(CALL,)),
    ChatMessage("tool", '{"temp": 21}', tool_call_id="call_538", name="get_weather"),
)


def test_tool_history_in_the_openai_shape() -> None:
    request = ChatRequest(model=GEMMA, messages=HISTORY, tools=(WEATHER,))
    sent = body(request, Endpoint.OPENAI)["messages"]
    assert sent[1]["tool_calls"] == [
        {
            "id": "call_538",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert sent[2] == {
        "role": "tool",
        "content": '{"temp": 21}',
        "tool_call_id": "call_538",
        "name": "get_weather",
    }


def test_tool_history_in_the_legacy_shape_keeps_content_a_string() -> None:
    request = ChatRequest(model=LLAMA, messages=HISTORY, model_schema=LEGACY_SCHEMA)
    sent = body(request)["messages"]
    assert "tool_calls" not in sent[1]
    assert sent[1]["content"] == '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    assert sent[2]["tool_call_id"] == "call_538"
    assert all(isinstance(m["content"], str) for m in sent)


def _finished(events: list[Any]) -> Finished:
    last = events[-1]
    assert isinstance(last, Finished)
    return last


def test_legacy_reply_with_object_arguments_gets_numbered_ids() -> None:
    result = {
        "response": "",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_time", "arguments": {}},
        ],
    }
    done = _finished(decode_complete({"result": result, "success": True}))
    assert done.reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in done.tool_calls] == [
        ("000000001", "get_weather", {"city": "Paris"}),
        ("000000002", "get_time", {}),
    ]
    assert done.tool_calls[0].arguments_json == '{"city": "Paris"}'


def test_openai_reply_with_invalid_json_arguments_keeps_the_text() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
        ],
    }
    payload = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    [call] = _finished(decode_complete(payload)).tool_calls
    assert call == ToolCall(id="c1", name="f", arguments_json="{oops", arguments=None)


#: GLM-style deltas (cloudflare-api.md §4b): id and name once, later fragments with nulls.
GLM_STREAM = sse(
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
    {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_538",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": ""},
                        }
                    ]
                },
            }
        ]
    },
    *(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": None, "function": {"name": None, "arguments": part}}
                        ]
                    },
                }
            ]
        }
        for part in ('{"ci', 'ty": "Pa', 'ris"}')
    ),
    {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 1, "id": "call_9", "function": {"name": "t", "arguments": "{}"}}
                    ]
                },
            }
        ]
    },
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    {"response": "", "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}},
)
#: §4a: native legacy stream with OpenAI-style deltas at the top level, then a null finaliser.
LEGACY_DELTA_STREAM = sse(
    {"response": "", "tool_calls": [], "p": "abdefgh"},
    {"tool_calls": [{"id": "x1", "type": "function", "index": 0, "function": {"name": "f"}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]},
    {"tool_calls": [{"id": None, "type": None, "index": 0, "function": {"name": None}}]},
    {"finish_reason": "tool_calls"},
)


@pytest.mark.asyncio
async def test_streamed_openai_deltas_are_joined_per_index(make_client: ClientFactory) -> None:
    client = make_client(Recorder(reply(GLM_STREAM, piece_size=7)))
    request = short_chat(tools=(WEATHER,))
    events = [e async for e in client.stream_reply(mock_conn(), request)]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0] == ToolCallDelta(index=0, id="call_538", name="get_weather", arguments="")
    assert "".join(d.arguments for d in deltas if d.index == 0) == '{"city": "Paris"}'
    done = _finished(events)
    assert [(c.id, c.name, c.arguments) for c in done.tool_calls] == [
        ("call_538", "get_weather", {"city": "Paris"}),
        ("call_9", "t", {}),
    ]
    # stream_chat keeps the old event set: no fragments, the calls still in Finished
    plain = [
        e async for e in make_client(Recorder(reply(GLM_STREAM))).stream_chat(mock_conn(), request)
    ]
    assert not any(isinstance(e, ToolCallDelta) for e in plain)
    assert _finished(plain).tool_calls == done.tool_calls


@pytest.mark.asyncio
async def test_native_legacy_stream_deltas_and_null_finaliser(make_client: ClientFactory) -> None:
    client = make_client(Recorder(reply(LEGACY_DELTA_STREAM)))
    events = [e async for e in client.stream_reply(mock_conn(), short_chat(tools=(WEATHER,)))]
    done = _finished(events)
    assert done.reason == "tool_calls"
    assert done.tool_calls == (
        ToolCall(id="x1", name="f", arguments_json='{"a": 1}', arguments={"a": 1}),
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("model", [LLAMA, GEMMA], ids=["legacy", "openai"])
@pytest.mark.parametrize(("route", "endpoint"), ROUTES)
async def test_tool_calls_from_the_emulator_on_every_route(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    route: Route,
    endpoint: Endpoint,
    model: str,
    stream: bool,
) -> None:
    conn = emu_conn(emulator, route=route, endpoint=endpoint)
    request = short_chat("What does get_weather say?", model=model, tools=(WEATHER,), stream=stream)
    events = [e async for e in make_client().stream_reply(conn, request)]
    [call] = _finished(events).tool_calls
    assert call.name == "get_weather"
    assert call.arguments is not None
    assert set(call.arguments) == {"city"}
    assert call.id
    [sent] = emulator.state.requests
    assert sent.json["tools"][0]["function"]["name"] == "get_weather"


@pytest.mark.asyncio
@pytest.mark.parametrize("endpoint", list(Endpoint))
async def test_tool_results_go_back_and_the_model_answers(
    make_client: ClientFactory, emulator: EmulatorServer, endpoint: Endpoint
) -> None:
    client = make_client()
    conn = emu_conn(emulator, endpoint=endpoint)
    schema = await client.get_model_schema(conn, LLAMA)
    first = short_chat(
        "What does get_weather say?", model=LLAMA, tools=(WEATHER,), model_schema=schema
    )
    [call] = _finished([e async for e in client.stream_reply(conn, first)]).tool_calls
    history = (
        *first.messages,
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", '{"temp_c": 21}', tool_call_id=call.id, name=call.name),
    )
    second = ChatRequest(model=LLAMA, messages=history, tools=(WEATHER,), model_schema=schema)
    events = [e async for e in client.stream_reply(conn, second)]
    assert not _finished(events).tool_calls
    sent = emulator.state.requests[-1].json
    assert sent["messages"][-1]["tool_call_id"] == call.id
    if endpoint is Endpoint.NATIVE:
        assert "name" in sent["tools"][0]  # the legacy schema's flat form
    else:
        assert sent["messages"][1]["tool_calls"][0]["id"] == call.id


@pytest.mark.asyncio
async def test_the_compat_endpoint_takes_the_openai_forms(emulator: EmulatorServer) -> None:
    # No Endpoint member routes to compat yet; its body is the OpenAI family's, model prefixed.
    conn = emu_conn(emulator)
    request = short_chat("What does get_weather say?", model=GEMMA, tools=(WEATHER,), stream=False)
    sent = chat_body(request, endpoint=Endpoint.OPENAI, compat=True)
    assert sent["model"] == f"workers-ai/{GEMMA}"
    url = f"{conn.gateway_base}/{conn.account_id}/{conn.gateway_id}/compat/chat/completions"
    headers = {"Authorization": f"Bearer {conn.token.reveal()}"}
    async with httpx.AsyncClient() as http:
        response = await http.post(url, json=sent, headers=headers)
    assert response.status_code == 200, response.text
    [call] = _finished(decode_complete(response.json())).tool_calls
    assert call.name == "get_weather"

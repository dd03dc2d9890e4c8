"""Both result shapes, streamed and not: padding, usage, finish reasons, reasoning, raw bytes."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import httpx
import pytest
from emulator_helpers import (
    DEEPSEEK,
    GEMMA,
    GPT_OSS,
    LLAMA,
    LLAMA_70B,
    QWQ,
    ask,
    chat_url,
    run_url,
    sse_json,
    sse_payloads,
)

from flarechat.emulator.server import EmulatorServer

#: The legacy padding alphabet as captured (§4a): no c, q or w; repeated when longer.
LEGACY_PAD = "abdefghijklmnoprstuvxyz1234567890"
OPENAI_PAD = re.compile(r"[a-z0-9]+")


def _is_legacy_pad(p: str) -> bool:
    return bool(p) and p == (LEGACY_PAD * (len(p) // len(LEGACY_PAD) + 1))[: len(p)]


def _legacy_text(events: list[dict[str, Any]]) -> str:
    return "".join(e["response"] for e in events if "usage" not in e)


def _delta(event: dict[str, Any], field: str) -> str:
    choices = event["choices"]
    return (choices[0]["delta"].get(field) or "") if choices else ""


def test_legacy_stream_bytes(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, LLAMA_70B), json=ask("Show me Markdown", stream=True))
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/event-stream"
    events = sse_json(reply.content)
    first, *chunks, trailing = events
    assert list(first) == ["response", "tool_calls", "p"]
    assert first["response"] == ""
    for chunk in chunks:
        assert list(chunk) == ["response", "tool_calls", "p"]
        assert chunk["tool_calls"] == []
        assert _is_legacy_pad(chunk["p"]), chunk["p"]
    assert list(trailing) == ["response", "usage"]  # no finish_reason when it stopped
    usage = trailing["usage"]
    assert list(usage) == ["prompt_tokens", "completion_tokens", "total_tokens"]
    assert usage["completion_tokens"] == len(chunks)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert b'"response":"","tool_calls":[],"p":"' in reply.content.split(b"\n\n")[0]


def test_streamed_and_plain_replies_agree(emulator: EmulatorServer, http: httpx.Client) -> None:
    streamed = sse_json(http.post(run_url(emulator, LLAMA), json=ask("Same?", stream=True)).content)
    plain = http.post(run_url(emulator, LLAMA), json=ask("Same?")).json()
    assert list(plain) == ["result", "success", "errors", "messages"]
    assert list(plain["result"]) == ["response", "tool_calls", "usage"]
    assert plain["result"]["response"] == _legacy_text(streamed)
    assert plain["result"]["usage"] == streamed[-1]["usage"]


def test_reply_is_readable_markdown_echoing_the_question(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    text = http.post(run_url(emulator, LLAMA), json=ask("How do   queues work?")).json()
    answer = text["result"]["response"]
    assert answer.startswith("## ")
    assert '"How do queues work?"' in answer
    assert "\n- " in answer
    assert "```python\n" in answer
    assert answer.count("```") == 2
    assert "\n|---|---|---|\n" in answer


def test_replies_are_deterministic_per_model_question_and_seed(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    def answer(model: str, question: str, **extra: Any) -> str:
        body = http.post(chat_url(emulator), json=ask(question, model=model, **extra)).json()
        return str(body["choices"][0]["message"]["content"])

    assert answer(LLAMA, "q1") == answer(LLAMA, "q1")
    assert answer(LLAMA, "q1", seed=7) == answer(LLAMA, "q1", seed=7)
    assert len({answer(LLAMA, "q1", seed=s) for s in range(1, 7)}) > 1
    assert answer(LLAMA, "q1") != answer(LLAMA_70B, "q1")  # the model is named in the reply


def test_max_tokens_cuts_a_legacy_stream_with_length(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    events = sse_json(
        http.post(run_url(emulator, LLAMA), json=ask("hi", stream=True, max_tokens=7)).content
    )
    assert len(events) == 1 + 7 + 1
    assert events[-1]["finish_reason"] == "length"
    assert events[-1]["usage"]["completion_tokens"] == 7
    plain = http.post(run_url(emulator, LLAMA), json=ask("hi", max_tokens=7)).json()["result"]
    assert plain["finish_reason"] == "length"
    assert plain["response"] == _legacy_text(events)


def test_a_reply_cut_at_max_tokens_goes_on_from_an_assistant_prefill(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return dict(http.post(run_url(emulator, LLAMA), json=body).json()["result"])

    whole = answer(ask("hi", max_tokens=20))["response"]
    cut = answer(ask("hi", max_tokens=8))
    assert cut["finish_reason"] == "length"
    prefill = {"role": "assistant", "content": cut["response"]}
    body = ask("hi", max_tokens=12)
    rest = answer({**body, "messages": [*body["messages"], prefill]})
    assert cut["response"] + rest["response"] == whole  # the answer a larger limit gives
    # Told in words after the cut reply, the model goes on from it too.
    asked = {"role": "user", "content": "Continue exactly where you stopped."}
    told = answer({**body, "messages": [*body["messages"], prefill, asked]})
    assert told["response"] == rest["response"]
    assert told["usage"]["prompt_tokens"] > rest["usage"]["prompt_tokens"]


def test_default_max_tokens_is_256(emulator: EmulatorServer, http: httpx.Client) -> None:
    long = http.post(run_url(emulator, LLAMA), json=ask("Give me a long answer")).json()["result"]
    assert long["usage"]["completion_tokens"] == 256
    assert long["finish_reason"] == "length"
    enough = ask("Give me a long answer", max_tokens=2048)
    whole = http.post(run_url(emulator, LLAMA), json=enough).json()["result"]
    assert whole["usage"]["completion_tokens"] > 256
    assert "finish_reason" not in whole


@pytest.mark.parametrize(("model", "field"), [(GEMMA, "reasoning_content"), (QWQ, "reasoning")])
def test_openai_stream_bytes(
    emulator: EmulatorServer, http: httpx.Client, model: str, field: str
) -> None:
    reply = http.post(run_url(emulator, model), json=ask("Think first", stream=True))
    events = sse_json(reply.content)
    first, *middle, finish, usage_chunk, trailing = events
    assert first["choices"][0]["delta"] == {"content": "", field: None, "role": "assistant"}
    assert list(first) == ["choices", "created", "id", "model", "object", "p", "usage"]
    assert first["object"] == "chat.completion.chunk"
    assert first["model"] == model
    assert re.fullmatch(r"[0-9a-f]{32}", first["id"])
    assert all(OPENAI_PAD.fullmatch(e["p"]) for e in [first, *middle, finish, usage_chunk])
    reasoning = "".join(_delta(e, field) for e in middle)
    content = "".join(_delta(e, "content") for e in middle)
    assert reasoning.startswith("The user wrote")
    assert content.startswith("## ")
    first_content = next(i for i, e in enumerate(middle) if _delta(e, "content"))
    assert all(not _delta(e, "content") for e in middle[:first_content])  # reasoning comes first
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert usage_chunk["choices"] == []
    assert list(trailing) == ["response", "usage"]
    assert trailing["response"] == ""
    increments = sum(e["usage"]["completion_tokens"] for e in events[:-1])
    assert trailing["usage"]["completion_tokens"] == increments == len(middle)
    assert trailing["usage"]["prompt_tokens"] == first["usage"]["prompt_tokens"]
    assert trailing["usage"]["neurons"] == pytest.approx(
        float(reply.headers["cf-ai-neurons"]), abs=0.01
    )


def test_openai_plain_result_in_the_envelope(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = http.post(run_url(emulator, QWQ), json=ask("Plain please", max_tokens=5)).json()
    result = body["result"]
    assert list(result) == ["choices", "created", "id", "model", "object", "usage"]
    choice = result["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] is None  # the budget went on reasoning (§10)
    assert choice["message"]["reasoning"].startswith("The user")
    assert result["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    assert result["usage"]["neurons"] > 0


def test_openai_stream_cut_by_max_tokens(emulator: EmulatorServer, http: httpx.Client) -> None:
    events = sse_json(
        http.post(run_url(emulator, GEMMA), json=ask("hi", stream=True, max_tokens=3)).content
    )
    assert events[-3]["choices"][0]["finish_reason"] == "length"
    assert events[-1]["usage"]["completion_tokens"] == 3


def test_think_model_streams_reasoning_inline_split_mid_tag(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    events = sse_json(http.post(run_url(emulator, DEEPSEEK), json=ask("Why?", stream=True)).content)
    chunks = [e["response"] for e in events[1:-1]]
    text = "".join(chunks)
    assert chunks[0] == "<think>"
    assert re.match(r"<think>\nThe user wrote .*\n</think>\n\n## ", text, re.DOTALL)
    assert not any("</think>" in chunk for chunk in chunks)  # the closing tag is split
    pairs = itertools.pairwise(chunks)
    assert any("</think>" in first + second for first, second in pairs)


def test_no_stream_model_answers_json_on_run(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, GPT_OSS), json=ask("hi", stream=True))
    assert reply.headers["content-type"] == "application/json"
    result = reply.json()["result"]
    assert result["object"] == "chat.completion"
    assert result["choices"][0]["message"]["content"].startswith("## ")
    assert int(reply.headers["content-length"]) == len(reply.content)
    streamed = http.post(chat_url(emulator), json=ask("hi", model=GPT_OSS, stream=True))
    assert streamed.headers["content-type"] == "text/event-stream"
    assert sse_json(streamed.content)[0]["object"] == "chat.completion.chunk"


def test_no_stream_model_can_answer_with_an_empty_result(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    emulator.state.set_nonstream_empty_result(True)
    empty = http.post(run_url(emulator, GPT_OSS), json=ask("hi", stream=True))
    assert empty.content == b'{"result":{},"success":true,"errors":[],"messages":[]}'
    plain = http.post(run_url(emulator, GPT_OSS), json=ask("hi", stream=False))
    assert plain.json()["result"]["choices"]


def test_chat_completions_is_bare_openai(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = http.post(chat_url(emulator), json=ask("hi", model=LLAMA)).json()
    assert body["object"] == "chat.completion"
    assert body["model"] == LLAMA
    assert "result" not in body
    assert "success" not in body
    assert body["choices"][0]["message"]["content"].startswith("## ")
    assert "reasoning_content" not in body["choices"][0]["message"]


def test_chat_completions_stream_has_padding_and_trailing_usage(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = http.post(chat_url(emulator), json=ask("hi", model=LLAMA, stream=True))
    payloads = sse_payloads(reply.content)
    assert payloads[-1] == b"[DONE]"
    assert payloads[-2].startswith(b'{"response":"","usage":{')
    chunks = [json.loads(p) for p in payloads[:-2]]
    assert all(chunk["object"] == "chat.completion.chunk" and chunk["p"] for chunk in chunks)


def test_session_affinity_reports_cached_prompt_tokens(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    headers = {"x-session-affinity": "ses_1"}
    first = http.post(run_url(emulator, GEMMA), json=ask("one"), headers=headers).json()
    second = http.post(run_url(emulator, GEMMA), json=ask("one two"), headers=headers).json()
    assert first["result"]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["result"]["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached == first["result"]["usage"]["prompt_tokens"]

"""Decoding edge cases on exact byte streams (MockTransport): both shapes, streamed and not."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from api_helpers import (
    TOKEN,
    Recorder,
    chat,
    collect,
    drain,
    finish_of,
    mock_conn,
    reasoning_of,
    reply,
    sse,
    text_of,
    usage_of,
)

from conftest import ClientFactory
from flarechat.api._decode import ReplyDecoder, merge_deltas
from flarechat.api.config import Endpoint
from flarechat.api.errors import CapacityExceeded, ServerError, StreamInterrupted
from flarechat.api.events import ReasoningDelta, ResponseMeta, TextDelta, UsageReport

PIECE_SIZES = [None, 1, 7]  # whole body, byte by byte, and an awkward size

LEGACY_STREAM = sse(
    {"response": "", "tool_calls": [], "p": "abdefghijklmnoprstuvxyz12"},
    {"response": "You", "tool_calls": [], "p": "abdefghijklmnoprstuvxyz1234567890abdefghijklmnopr"},
    {"response": "'re looking", "tool_calls": [], "p": "abdefgh"},
    {"response": " good.", "tool_calls": []},
    {"response": "", "usage": {"prompt_tokens": 418, "completion_tokens": 41, "total_tokens": 459}},
)


def _chunk(
    delta: dict[str, Any], usage: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    choice = {"delta": delta, "finish_reason": extra.pop("finish_reason", None), "index": 0}
    body: dict[str, Any] = {"choices": [choice], "object": "chat.completion.chunk", "p": "pf8t"}
    if usage is not None:
        body["usage"] = usage
    body.update(extra)
    return body


def _inc(prompt: int, completion: int, neurons: float) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
        "neurons": neurons,
    }


GEMMA_STREAM = sse(
    _chunk({"content": "", "reasoning_content": None, "role": "assistant"}, _inc(147, 0, 1.3)),
    _chunk({"content": None, "reasoning_content": "Think."}, _inc(0, 1, 0.03)),
    _chunk({"content": "Hello", "reasoning_content": None}, _inc(0, 1, 0.03)),
    _chunk({"content": " there", "reasoning_content": None}, _inc(0, 1, 0.03)),
    _chunk({"reasoning_content": None}, _inc(0, 0, 0), finish_reason="stop", matched_stop=106),
    {"choices": [], "object": "chat.completion.chunk", "p": "sxm6", "usage": _inc(0, 1, 0.03)},
    {
        "response": "",
        "usage": {
            "prompt_tokens": 147,
            "completion_tokens": 16,
            "total_tokens": 163,
            "prompt_tokens_details": {"cached_tokens": 12},
            "neurons": 1.77,
        },
    },
)


@pytest.mark.asyncio
@pytest.mark.parametrize("piece_size", PIECE_SIZES)
async def test_legacy_stream_ignores_padding_and_reports_trailing_usage(
    make_client: ClientFactory, piece_size: int | None
) -> None:
    client = make_client(Recorder(reply(LEGACY_STREAM, piece_size=piece_size)))
    events = await collect(client, mock_conn(), chat())
    assert isinstance(events[0], ResponseMeta)
    assert text_of(events) == "You're looking good."
    assert all(e.text for e in events if isinstance(e, TextDelta)), "no empty deltas"
    assert usage_of(events) == UsageReport(
        prompt_tokens=418, completion_tokens=41, total_tokens=459
    )
    assert finish_of(events) == "stop"


@pytest.mark.asyncio
@pytest.mark.parametrize("piece_size", PIECE_SIZES)
async def test_openai_stream_reports_cumulative_usage_not_the_sum(
    make_client: ClientFactory, piece_size: int | None
) -> None:
    client = make_client(Recorder(reply(GEMMA_STREAM, piece_size=piece_size)))
    events = await collect(client, mock_conn(), chat())
    assert text_of(events) == "Hello there"
    assert reasoning_of(events) == "Think."
    assert usage_of(events) == UsageReport(
        prompt_tokens=147, completion_tokens=16, total_tokens=163, cached_tokens=12, neurons=1.77
    )
    assert finish_of(events) == "stop"


@pytest.mark.asyncio
async def test_incremental_usage_is_summed_when_no_cumulative_event(
    make_client: ClientFactory,
) -> None:
    body = sse(
        _chunk({"content": "a"}, _inc(10, 1, 0.5)),
        _chunk({"content": "b"}, _inc(0, 1, 0.25)),
        _chunk({}, _inc(0, 1, 0.25), finish_reason="stop"),
    )
    events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert usage_of(events) == UsageReport(
        prompt_tokens=10, completion_tokens=3, total_tokens=13, cached_tokens=0, neurons=1.0
    )


@pytest.mark.asyncio
async def test_repeated_cumulative_chunk_usage_takes_the_last(make_client: ClientFactory) -> None:
    cumulative = [
        {"prompt_tokens": 20, "completion_tokens": n, "total_tokens": 20 + n} for n in (1, 2, 3)
    ]
    body = sse(
        _chunk({"content": "x"}, cumulative[0]),
        _chunk({"content": "y"}, cumulative[1]),
        {"choices": [], "usage": cumulative[2]},
    )
    events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert usage_of(events) == UsageReport(prompt_tokens=20, completion_tokens=3, total_tokens=23)


@pytest.mark.asyncio
async def test_reasoning_field_spelled_reasoning(make_client: ClientFactory) -> None:
    body = sse(
        _chunk({"reasoning": "Weigh "}),
        _chunk({"reasoning": "it."}),
        _chunk({"content": "Done."}, finish_reason="stop"),
    )
    events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert reasoning_of(events) == "Weigh it."
    assert text_of(events) == "Done."
    kinds = [type(e) for e in events if isinstance(e, TextDelta | ReasoningDelta)]
    assert kinds == [ReasoningDelta, TextDelta]  # one read: its reasoning deltas merged


@pytest.mark.asyncio
@pytest.mark.parametrize("piece_size", PIECE_SIZES)
async def test_inline_think_split_mid_tag(
    make_client: ClientFactory, piece_size: int | None
) -> None:
    body = sse(
        {"response": "<thi"},
        {"response": "nk>Let me "},
        {"response": "see.</th"},
        {"response": "ink>\n\nThe answer"},
        {"response": " is 4. Use <think> tags in HTML? No."},
        {"response": "", "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}},
    )
    events = await collect(
        make_client(Recorder(reply(body, piece_size=piece_size))), mock_conn(), chat()
    )
    assert reasoning_of(events) == "Let me see."
    assert text_of(events) == "\n\nThe answer is 4. Use <think> tags in HTML? No."


@pytest.mark.asyncio
async def test_data_without_space_unknown_fields_and_events(make_client: ClientFactory) -> None:
    body = (
        b'data:{"response":"A","brand_new_field":{"x":1}}\n\n'
        b'event: ping\ndata: {"type":"keepalive"}\n\n'
        b": a comment line\n\n"
        b'data: {"response":"B","tool_calls":[]}\n\n'
        b"data:[DONE]\n\n"
    )
    events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert text_of(events) == "AB"
    assert finish_of(events) == "stop"


@pytest.mark.asyncio
async def test_legacy_length_finish_reason_on_trailing_event(make_client: ClientFactory) -> None:
    body = sse(
        {"response": "cut"},
        {"response": "", "usage": {"completion_tokens": 1}, "finish_reason": "length"},
    )
    events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert finish_of(events) == "length"


@pytest.mark.asyncio
async def test_stream_without_done_or_finish_is_interrupted(make_client: ClientFactory) -> None:
    body = sse({"response": "Half a rep"}, {"response": "ly"}, done=False)
    seen, error = await drain(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert isinstance(error, StreamInterrupted)
    assert text_of(seen) == "Half a reply", "partial text is delivered before the error"


@pytest.mark.asyncio
async def test_stream_with_finish_reason_but_no_done_is_complete(
    make_client: ClientFactory,
) -> None:
    body = sse(_chunk({"content": "ok"}, finish_reason="stop"), done=False)
    events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert finish_of(events) == "stop"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "failure",
    [httpx.ReadError("connection reset"), httpx.RemoteProtocolError("peer closed connection")],
)
async def test_connection_dropped_mid_stream_is_interrupted(
    make_client: ClientFactory, failure: Exception
) -> None:
    body = sse({"response": "Par"}, done=False)
    client = make_client(Recorder(reply(body, fail_with=failure)))
    seen, error = await drain(client, mock_conn(), chat())
    assert isinstance(error, StreamInterrupted)
    assert text_of(seen) == "Par"
    assert error.retryable


@pytest.mark.asyncio
async def test_error_event_mid_stream_raises_classified_error(make_client: ClientFactory) -> None:
    body = sse(
        {"response": "Start"},
        {"errors": [{"code": 3040, "message": "Capacity temporarily exceeded, please try again."}]},
        {"response": "never seen"},
    )
    seen, error = await drain(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert isinstance(error, CapacityExceeded)
    assert text_of(seen) == "Start"
    assert error.code == 3040


@pytest.mark.asyncio
async def test_malformed_chunk_is_skipped_and_logged_redacted(
    make_client: ClientFactory, caplog: pytest.LogCaptureFixture
) -> None:
    body = sse(
        {"response": "One"},
        '{"response": "broken',
        f"garbage Bearer {TOKEN}",
        {"response": " two"},
    )
    with caplog.at_level(logging.WARNING, logger="flarechat.api"):
        events = await collect(make_client(Recorder(reply(body))), mock_conn(), chat())
    assert text_of(events) == "One two"
    skipped = [r for r in caplog.records if "malformed" in r.getMessage()]
    assert len(skipped) == 2
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


@pytest.mark.asyncio
async def test_nothing_valid_ever_arrives_is_an_error(make_client: ClientFactory) -> None:
    body = sse("{not json", "<html>", "[1, 2]")
    with pytest.raises(ServerError):
        await collect(make_client(Recorder(reply(body))), mock_conn(), chat())


@pytest.mark.asyncio
async def test_meta_comes_first_from_headers(make_client: ClientFactory) -> None:
    headers = {
        "cf-ai-req-id": "3f0c8a4e-0000-4000-8000-000000000001",
        "cf-aig-log-id": "01JADMCQQQBWH3NXZ5GCRN98DP",
        "cf-aig-cache-status": "HIT",
        "cf-ai-neurons": "1.98",
    }
    client = make_client(Recorder(reply(LEGACY_STREAM, headers=headers)))
    events = await collect(client, mock_conn(), chat())
    assert events[0] == ResponseMeta(
        status_code=200,
        request_id="3f0c8a4e-0000-4000-8000-000000000001",
        log_id="01JADMCQQQBWH3NXZ5GCRN98DP",
        cache_status="HIT",
        neurons=1.98,
        model=chat().model,
    )
    assert sum(isinstance(e, ResponseMeta) for e in events) == 1


LEGACY_RESULT = {
    "result": {
        "response": "Hello! How can I help?",
        "tool_calls": [],
        "usage": {"prompt_tokens": 23, "completion_tokens": 8, "total_tokens": 31},
    },
    "success": True,
    "errors": [],
    "messages": [],
}
OPENAI_RESULT = {
    "choices": [
        {
            "finish_reason": "length",
            "index": 0,
            "logprobs": None,
            "message": {"content": "Hi!", "role": "assistant", "reasoning_content": "Greet."},
        }
    ],
    "id": "4bb245b612b04449b9efe83d17ce90e0",
    "object": "chat.completion",
    "usage": {
        "prompt_tokens": 147,
        "completion_tokens": 16,
        "total_tokens": 163,
        "prompt_tokens_details": {"cached_tokens": 0},
        "neurons": 1.7727,
    },
}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("body", "text", "reasoning", "finish"),
    [
        (LEGACY_RESULT, "Hello! How can I help?", "", "stop"),
        ({"result": OPENAI_RESULT, "success": True, "errors": []}, "Hi!", "Greet.", "length"),
        (OPENAI_RESULT, "Hi!", "Greet.", "length"),  # /v1/chat/completions: no envelope
        ({"result": {"response": {"answer": 42}}, "success": True}, '{"answer": 42}', "", "stop"),
        ({"result": {"response": 42}, "success": True}, "42", "", "stop"),
        ({"result": {"response": "<think>hm</think>ok"}, "success": True}, "ok", "hm", "stop"),
    ],
    ids=["legacy", "openai-in-envelope", "openai-bare", "json-object", "number", "think"],
)
async def test_non_streamed_shapes(
    make_client: ClientFactory, body: dict[str, Any], text: str, reasoning: str, finish: str
) -> None:
    recorder = Recorder(reply(body))
    events = await collect(make_client(recorder), mock_conn(), chat(stream=False))
    assert isinstance(events[0], ResponseMeta)
    assert (text_of(events), reasoning_of(events), finish_of(events)) == (text, reasoning, finish)
    assert recorder.body()["stream"] is False


@pytest.mark.asyncio
async def test_non_streamed_usage_is_reported(make_client: ClientFactory) -> None:
    events = await collect(
        make_client(Recorder(reply(OPENAI_RESULT))), mock_conn(), chat(stream=False)
    )
    assert usage_of(events) == UsageReport(
        prompt_tokens=147, completion_tokens=16, total_tokens=163, cached_tokens=0, neurons=1.7727
    )


@pytest.mark.asyncio
async def test_json_reply_to_a_stream_request_is_parsed(make_client: ClientFactory) -> None:
    recorder = Recorder(reply({"result": OPENAI_RESULT, "success": True}))
    events = await collect(make_client(recorder), mock_conn(), chat(stream=True))
    assert text_of(events) == "Hi!"
    assert len(recorder.requests) == 1


@pytest.mark.asyncio
async def test_empty_json_reply_to_a_stream_request_retries_without_stream(
    make_client: ClientFactory,
) -> None:
    recorder = Recorder(
        reply({"result": {}, "success": True, "errors": [], "messages": []}),
        reply({"result": OPENAI_RESULT, "success": True}, headers={"cf-ai-req-id": "second"}),
    )
    events = await collect(make_client(recorder), mock_conn(), chat(stream=True))
    assert [recorder.body(0)["stream"], recorder.body(1)["stream"]] == [True, False]
    assert recorder.requests[1].headers["accept"] == "application/json"
    metas = [e for e in events if isinstance(e, ResponseMeta)]
    assert [m.request_id for m in metas] == ["second"]
    assert text_of(events) == "Hi!"


@pytest.mark.asyncio
async def test_empty_reply_retry_happens_only_once(make_client: ClientFactory) -> None:
    empty = {"result": {}, "success": True, "errors": [], "messages": []}
    recorder = Recorder(reply(empty), reply(empty), reply(empty))
    events = await collect(make_client(recorder), mock_conn(), chat(stream=True))
    assert len(recorder.requests) == 2
    assert text_of(events) == ""
    assert finish_of(events) == "stop"


@pytest.mark.asyncio
async def test_success_false_with_status_200_is_an_error(make_client: ClientFactory) -> None:
    body = {"success": False, "errors": [{"code": 3040, "message": "Capacity"}], "result": {}}
    with pytest.raises(CapacityExceeded):
        await collect(make_client(Recorder(reply(body))), mock_conn(), chat(stream=False))


@pytest.mark.asyncio
async def test_openai_endpoint_stream_asks_for_usage(make_client: ClientFactory) -> None:
    recorder = Recorder(reply(GEMMA_STREAM))
    await collect(make_client(recorder), mock_conn(endpoint=Endpoint.OPENAI), chat())
    assert recorder.body()["stream_options"] == {"include_usage": True}


@pytest.mark.asyncio
async def test_closing_the_stream_early_closes_cleanly(make_client: ClientFactory) -> None:
    client = make_client(Recorder(reply(LEGACY_STREAM, piece_size=5)))
    stream = client.stream_chat(mock_conn(), chat())
    seen = [await anext(stream), await anext(stream)]
    await stream.aclose()
    assert isinstance(seen[0], ResponseMeta)
    assert isinstance(seen[1], TextDelta)


# -- a read's payloads decoded together (ReplyDecoder.feed_all) --------------------------------

#: Every kind of payload a read can hold, in an order that breaks runs of plain text.
MIXED_PAYLOADS: list[str] = [
    "",
    '{"response": "<thi", "tool_calls": [], "p": "abc"}',
    '{"response": "nk>Hm", "p": "abcdef"}',
    '{"response": "m.</think>", "tool_calls": []}',
    '{"response": "An"}',
    '{"response": "swer", "tool_calls": [], "p": ""}',
    '{"response": {"json": "mode"}}',  # not plain: the object is shown as JSON text
    '{"response": 7, "p": "x"}',  # not plain: a number, shown as text
    "   ",
    '{"response": " more", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]}',
    '{"response": " junk"} trailing',  # malformed: skipped and logged
    "[1, 2]",  # not an object: skipped and logged
    '{"choices": [{"index": 0, "delta": {"content": " open"}}]}',
    '{"response": " ai"}',
    '{"response": "", "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}',
    '{"response": " last", "p": "q"}',
    "[DONE]",
    '{"response": " after done"}',
]


def _one_by_one(payloads: list[str]) -> tuple[list[Any], ReplyDecoder]:
    decoder = ReplyDecoder()
    events: list[Any] = []
    for data in payloads:
        events.extend(decoder.feed_data(data))
        if decoder.done:
            break
    return merge_deltas(events), decoder


def test_a_reads_payloads_together_decode_as_each_alone(caplog: pytest.LogCaptureFixture) -> None:
    expected, alone = _one_by_one(MIXED_PAYLOADS)
    together = ReplyDecoder()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flarechat.api"):
        events, error = together.feed_all(MIXED_PAYLOADS)
    assert error is None
    assert merge_deltas(events) == expected
    assert merge_deltas([*events, *together.flush()]) == merge_deltas([*expected, *alone.flush()])
    assert together.done
    assert alone.done
    assert (
        (together.valid_chunks, together.malformed_chunks)
        == (
            alone.valid_chunks,
            alone.malformed_chunks,
        )
        == (12, 2)
    )
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["Hmm."]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("Answer{")
    assert together.close() == alone.close()
    assert sum("malformed stream chunk" in r.getMessage() for r in caplog.records) == 2


def test_a_run_of_plain_tokens_comes_out_as_one_delta() -> None:
    events, error = ReplyDecoder().feed_all(
        [f'{{"response": "w{n} ", "tool_calls": [], "p": "pad"}}' for n in range(500)]
    )
    assert error is None
    assert events == [TextDelta("".join(f"w{n} " for n in range(500)))]


def test_an_error_event_in_a_read_comes_back_after_the_text_before_it() -> None:
    decoder = ReplyDecoder()
    events, error = decoder.feed_all(
        [
            '{"response": "Hello"}',
            '{"response": " there"}',
            '{"errors": [{"code": 3040, "message": "Capacity temporarily exceeded"}]}',
            '{"response": " never"}',
        ]
    )
    assert isinstance(error, CapacityExceeded)
    assert events == [TextDelta("Hello there")]

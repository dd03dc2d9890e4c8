"""A streamed reply is decoded a burst at a time (all that arrived while the app was busy):
deltas merged, one idle timer, errors and early closes in their place."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from api_helpers import ChunkStream, Recorder, chat, collect, mock_conn, reply, sse, text_of

from conftest import ClientFactory
from flarechat.api._decode import merge_deltas
from flarechat.api.errors import StreamInterrupted
from flarechat.api.events import (
    ChatEvent,
    Finished,
    ReasoningDelta,
    ResponseMeta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

TOKENS = 200


class PacedStream(httpx.AsyncByteStream):
    """Each piece its own network read: the reader waits (yields to the loop) before each."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            await asyncio.sleep(0)
            yield piece


def _tokens(count: int) -> list[dict[str, Any]]:
    return [{"response": f"w{n} "} for n in range(count)]


def test_merge_joins_runs_of_one_kind_and_keeps_everything_else_in_place() -> None:
    meta, usage, done = ResponseMeta(status_code=200), UsageReport(1, 2, 3), Finished("stop")
    tool = ToolCallDelta(index=0, id="c1", name="f", arguments="{}")
    events: list[ChatEvent] = [
        meta,
        ReasoningDelta("Hm"),
        ReasoningDelta("m."),
        TextDelta("A"),
        TextDelta("B"),
        tool,
        TextDelta("C"),
        usage,
        done,
    ]
    assert merge_deltas(events) == [
        meta,
        ReasoningDelta("Hmm."),
        TextDelta("AB"),
        tool,
        TextDelta("C"),
        usage,
        done,
    ]
    assert merge_deltas([]) == []


@pytest.mark.asyncio
async def test_the_tokens_of_one_read_come_as_one_delta(make_client: ClientFactory) -> None:
    body = sse(*_tokens(TOKENS))  # one network read holds the whole reply
    handler = Recorder(
        httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    )
    events = await collect(make_client(handler), mock_conn(), chat())
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 1
    assert text_of(events) == "".join(f"w{n} " for n in range(TOKENS))
    assert isinstance(events[-1], Finished)


@pytest.mark.asyncio
async def test_reads_that_each_wait_keep_one_delta_each(make_client: ClientFactory) -> None:
    frames = [sse(token, done=False) for token in _tokens(TOKENS)] + [b"data: [DONE]\n\n"]
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=PacedStream(frames)
    )
    events = await collect(make_client(Recorder(response)), mock_conn(), chat())
    assert [e.text for e in events if isinstance(e, TextDelta)] == [f"w{n} " for n in range(TOKENS)]


@pytest.mark.asyncio
async def test_a_stream_arms_one_idle_timer_not_one_per_read(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """qasync makes each call_at a Qt timer that lives on until its time, even cancelled."""
    frames = [sse(token, done=False) for token in _tokens(TOKENS)] + [b"data: [DONE]\n\n"]
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=PacedStream(frames)
    )
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    call_at: Callable[..., asyncio.TimerHandle] = loop.call_at

    def counting_call_at(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        armed.append(when)
        return call_at(when, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counting_call_at)
    events = await collect(make_client(Recorder(response)), mock_conn(), chat())
    assert text_of(events) == "".join(f"w{n} " for n in range(TOKENS))
    assert len(armed) <= 3  # the send's own deadline, the stream's one idle timer


class WatchedStream(ChunkStream):
    """A ChunkStream that notes whether the reader closed it (a dropped reply must)."""

    closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in super().__aiter__():
                yield piece
        finally:
            WatchedStream.closed = True


@pytest.mark.asyncio
async def test_chunks_already_arrived_come_as_one_delta(make_client: ClientFactory) -> None:
    """Workers AI sends an HTTP chunk per token: those already there when the app looks are
    one burst, so the layers above see one delta, not one per token."""
    frames = [sse(token, done=False) for token in _tokens(TOKENS)] + [b"data: [DONE]\n\n"]
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=ChunkStream(frames)
    )
    events = await collect(make_client(Recorder(response)), mock_conn(), chat())
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "".join(f"w{n} " for n in range(TOKENS))
    ]
    assert isinstance(events[-1], Finished)


@pytest.mark.asyncio
async def test_a_character_split_across_chunks_is_decoded_whole(
    make_client: ClientFactory,
) -> None:
    words = ["héllo ", "wörld ", "✓ ", "日本 "]
    body = sse(*({"response": word} for word in words))
    handler = Recorder(reply(body, piece_size=1))  # every multi-byte character split
    events = await collect(make_client(handler), mock_conn(), chat())
    assert text_of(events) == "".join(words)


@pytest.mark.asyncio
async def test_a_read_error_comes_after_the_text_read_before_it(
    make_client: ClientFactory,
) -> None:
    frames = [sse(token, done=False) for token in _tokens(TOKENS)]
    handler = Recorder(reply(b"".join(frames), piece_size=7, fail_with=httpx.ReadError("reset")))
    events: list[object] = []

    async def read() -> None:
        async for event in make_client(handler).stream_chat(mock_conn(), chat()):
            events.append(event)

    with pytest.raises(StreamInterrupted):
        await read()
    assert text_of(events) == "".join(f"w{n} " for n in range(TOKENS))


@pytest.mark.asyncio
async def test_a_reply_dropped_early_closes_its_body_and_leaves_no_task(
    make_client: ClientFactory,
) -> None:
    frames = [sse(token, done=False) for token in _tokens(TOKENS)] + [b"data: [DONE]\n\n"]
    WatchedStream.closed = False
    response = httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=WatchedStream(frames)
    )
    before = asyncio.all_tasks()
    async with aclosing(make_client(Recorder(response)).stream_chat(mock_conn(), chat())) as it:
        async for event in it:
            if isinstance(event, TextDelta):
                break
    assert WatchedStream.closed
    assert asyncio.all_tasks() == before


@pytest.mark.asyncio
async def test_a_finished_stream_gives_its_connection_back_to_the_pool(
    emulator: EmulatorServer,
) -> None:
    """One pooled connection serves reply after reply: a reply's connection is not kept busy
    once its last event came (else the 101st reply of a session waited for a free one)."""
    from api_helpers import emu_conn, short_chat

    from flarechat.api.client import WorkersAIClient

    one = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1))
    conn = emu_conn(emulator)
    async with WorkersAIClient(transport=one) as client:
        for _ in range(3):  # a connection kept busy would make the second wait, then fail
            async with aclosing(client.stream_reply(conn, short_chat())) as events:
                kinds = [type(event).__name__ async for event in events]
            assert kinds[-1] == "Finished"

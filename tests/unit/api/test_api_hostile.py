"""The client against a hostile loopback server: stalls, drips, silence and huge error bodies."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from api_helpers import chat, drain, mock_conn, text_of

from conftest import ClientFactory, ServerFactory
from flarechat.api.client import ERROR_BODY_LIMIT, WorkersAIClient
from flarechat.api.config import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_OVERALL_TIMEOUT,
    Connection,
)
from flarechat.api.errors import (
    DeadlinePassed,
    ErrorKind,
    RequestTimedOut,
    ServerError,
    StreamInterrupted,
    WorkersAIError,
)
from support.hostile import HostileServer, Script, http_head, sse_data

#: Bound on a whole test's wait: a hang fails the test instead of stalling the suite.
PATIENCE = 10.0
#: A stall this short fires fast; the server's keep-alives come several times inside it.
SHORT = 0.4
PING_EVERY = 0.05
STREAM_HEAD = {"content-type": "text/event-stream", "connection": "close"}
HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024


async def _outcome(client: WorkersAIClient, conn: Connection) -> tuple[str, WorkersAIError | None]:
    seen, error = await asyncio.wait_for(drain(client, conn, chat()), PATIENCE)
    assert error is None or isinstance(error, WorkersAIError), error
    return text_of(seen), error


def _streaming(*, first: bytes, then: bytes, every: float = PING_EVERY) -> Script:
    """A script: stream headers, ``first``, then ``then`` forever (never a [DONE])."""

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        await server.send(writer, http_head(200, STREAM_HEAD) + first)
        while True:
            await asyncio.sleep(every)
            await server.send(writer, then)

    return script


def test_default_deadlines_are_named_and_sane() -> None:
    conn = mock_conn()
    assert (conn.idle_timeout, conn.overall_timeout) == (
        DEFAULT_IDLE_TIMEOUT,
        DEFAULT_OVERALL_TIMEOUT,
    )
    assert conn.read_timeout < DEFAULT_OVERALL_TIMEOUT
    assert DEFAULT_IDLE_TIMEOUT < DEFAULT_OVERALL_TIMEOUT


@pytest.mark.asyncio
async def test_pings_after_some_text_do_not_keep_a_stalled_reply_alive(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(_streaming(first=sse_data("Hello"), then=b": ping\n\n"))
    conn = mock_conn(api_base=server.api_base, idle_timeout=SHORT)
    text, error = await _outcome(make_client(), conn)
    assert text == "Hello", "the partial text arrived before the stall"
    assert isinstance(error, StreamInterrupted)
    assert error.kind == ErrorKind.INTERRUPTED
    assert "nothing came for 0.4 s" in error.message


@pytest.mark.asyncio
async def test_pings_before_any_text_end_in_a_timeout(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(_streaming(first=b": ping\n\n", then=b"event: ping\n\n"))
    conn = mock_conn(api_base=server.api_base, idle_timeout=SHORT)
    text, error = await _outcome(make_client(), conn)
    assert text == ""
    assert type(error) is RequestTimedOut
    assert error.kind == ErrorKind.TIMEOUT
    assert error.retryable


@pytest.mark.asyncio
async def test_a_reply_dripping_forever_meets_the_overall_deadline(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(_streaming(first=sse_data("a"), then=sse_data("a")))
    conn = mock_conn(api_base=server.api_base, overall_timeout=SHORT)
    text, error = await _outcome(make_client(), conn)
    assert text.startswith("a")
    assert isinstance(error, StreamInterrupted)
    assert "0.4 s in all" in error.message


@pytest.mark.asyncio
async def test_silence_before_the_headers_meets_the_overall_deadline(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    async def silent(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        await asyncio.sleep(PATIENCE * 2)

    server = await hostile(silent)
    conn = mock_conn(api_base=server.api_base, overall_timeout=SHORT)
    text, error = await _outcome(make_client(), conn)
    assert text == ""
    # The deadline ends the turn as interrupted, and is never retried (it would only overrun).
    assert type(error) is DeadlinePassed
    assert error.kind == "interrupted"
    assert not error.retryable
    assert "within 0.4 s in all" in error.message


@pytest.mark.asyncio
async def test_a_read_timeout_mid_stream_is_an_interrupted_reply(
    make_client: ClientFactory, hostile: ServerFactory
) -> None:
    server = await hostile(_streaming(first=sse_data("Hi"), then=b"", every=PATIENCE * 2))
    conn = mock_conn(api_base=server.api_base, read_timeout=SHORT)
    text, error = await _outcome(make_client(), conn)
    assert text == "Hi"
    assert isinstance(error, StreamInterrupted), error
    assert error.kind == ErrorKind.INTERRUPTED


class _CountingStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, owner: CountingTransport) -> None:
        self._inner = inner
        self._owner = owner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._owner.read += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CountingTransport(httpx.AsyncBaseTransport):
    """The real network transport, counting the response-body bytes the client pulls."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.read = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_CountingStream(response.stream, self),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _huge_error(
    server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    await server.read_request(reader)
    head = {"content-type": "text/html", "content-length": str(HUGE)}
    await server.send(writer, http_head(502, head) + b"<html><title>Bad gateway</title>")
    filler = b"x" * CHUNK
    for _ in range(HUGE // CHUNK):
        await server.send(writer, filler)


@pytest.mark.asyncio
@pytest.mark.parametrize("call", ["chat", "models"])
async def test_a_huge_error_body_is_read_only_up_to_the_cap(
    hostile: ServerFactory, call: str
) -> None:
    server = await hostile(_huge_error)
    transport = CountingTransport()
    conn = mock_conn(api_base=server.api_base)
    async with WorkersAIClient(transport=transport) as client:
        with pytest.raises(ServerError) as caught:
            await asyncio.wait_for(_call(client, conn, call), PATIENCE)
    assert "Bad gateway" in caught.value.message
    assert transport.read <= ERROR_BODY_LIMIT + CHUNK
    assert transport.read < HUGE // 100


async def _call(client: WorkersAIClient, conn: Connection, call: str) -> None:
    if call == "models":
        await client.list_models(conn)
        return
    _, error = await drain(client, conn, chat())
    if error is not None:
        raise error

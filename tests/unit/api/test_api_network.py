"""Client configuration on real sockets: proxy, TLS, refused connections, timeouts, verify."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
import truststore
from api_helpers import (
    Recorder,
    chat,
    collect,
    emu_conn,
    mock_conn,
    reply,
    short_chat,
    sse,
    text_of,
)

from conftest import ClientFactory
from flarechat.api.client import DEFAULT_USER_AGENT, tls_context
from flarechat.api.config import Secret
from flarechat.api.errors import AuthenticationFailed, ConnectionFailed, TLSFailed

if TYPE_CHECKING:
    from flarechat.emulator.server import EmulatorServer

_HEAD_END = b"\r\n\r\n"


class ForwardProxy:
    """A minimal HTTP forward proxy on loopback: one request per connection, bytes piped as-is."""

    def __init__(self) -> None:
        self.request_lines: list[str] = []
        self.url = ""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._forward(reader, writer)
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(_HEAD_END)
        request_line, _, headers = head.partition(b"\r\n")
        method, target, version = request_line.decode().split(" ")
        self.request_lines.append(request_line.decode())
        url = urlsplit(target)  # absolute-form: the client knows it talks to a proxy
        kept = [h for h in headers.split(b"\r\n") if not h.lower().startswith(b"connection:")]
        origin_form = url.path + (f"?{url.query}" if url.query else "")
        upstream_head = f"{method} {origin_form} {version}\r\nConnection: close\r\n".encode()
        up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port)
        up_writer.write(upstream_head + b"\r\n".join(kept))
        try:
            to_upstream = asyncio.create_task(_pipe(reader, up_writer))
            await _pipe(up_reader, writer)
            to_upstream.cancel()
            await asyncio.gather(to_upstream, return_exceptions=True)
        finally:
            up_writer.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while data := await source.read(65536):
        sink.write(data)
        await sink.drain()


@pytest_asyncio.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    server = ForwardProxy()
    await server.start()
    yield server
    await server.stop()


@pytest.mark.asyncio
async def test_http_proxy_from_the_environment_is_used(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    proxy: ForwardProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    client = make_client()  # trust_env: the proxy is read when the client is made
    conn = emu_conn(emulator)
    check = await client.verify_token(conn)
    events = await collect(client, conn, short_chat())
    assert check.kind == "user"
    assert text_of(events)
    assert len(proxy.request_lines) == 2
    assert proxy.request_lines[0] == f"GET {emulator.api_base}/user/tokens/verify HTTP/1.1"
    assert proxy.request_lines[1].startswith(f"POST {emulator.api_base}/accounts/")
    assert len(emulator.state.requests) == 2


@pytest.mark.asyncio
async def test_no_proxy_is_honoured(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    proxy: ForwardProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    await make_client().verify_token(emu_conn(emulator))
    assert proxy.request_lines == []
    assert len(emulator.state.requests) == 1


def test_tls_context_uses_the_os_trust_store() -> None:
    context = tls_context()
    if sys.platform.startswith("linux"):
        # The system's CA store, loaded once: not reloaded for every connection (truststore
        # on Linux re-reads the whole bundle on the GUI thread at each TLS connection).
        assert not isinstance(context, truststore.SSLContext)
        paths = ssl.get_default_verify_paths()
        assert paths.cafile or paths.capath
        if paths.cafile:
            assert context.cert_store_stats()["x509_ca"] > 0
    else:
        assert isinstance(context, truststore.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2


@pytest.mark.asyncio
async def test_tls_handshake_failure_is_tls_failed(
    make_client: ClientFactory, emulator: EmulatorServer
) -> None:
    conn = emu_conn(emulator, api_base=emulator.api_base.replace("http://", "https://"))
    with pytest.raises(TLSFailed) as caught:
        await collect(make_client(), conn, short_chat())
    assert not caught.value.retryable
    # https:// to the emulator's plain-HTTP port: the server did not speak TLS at all, so
    # installing a CA certificate would not help (test_api_wrong_server has the details).
    assert "did not speak TLS" in caught.value.message
    assert "certificate" not in caught.value.message


@pytest.mark.asyncio
async def test_connection_refused_is_connection_failed(make_client: ClientFactory) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there now
    conn = mock_conn(api_base=f"http://127.0.0.1:{port}/client/v4", connect_timeout=5.0)
    with pytest.raises(ConnectionFailed) as caught:
        await collect(make_client(), conn, chat())
    assert type(caught.value) is ConnectionFailed
    assert caught.value.retryable


@pytest.mark.asyncio
async def test_timeouts_come_from_the_connection_per_request(make_client: ClientFactory) -> None:
    recorder = Recorder(reply(sse({"response": "ok"})))
    conn = mock_conn(connect_timeout=3.0, read_timeout=45.0)
    await collect(make_client(recorder), conn, chat())
    sent = recorder.requests[0]
    assert sent.extensions["timeout"] == {"connect": 3.0, "read": 45.0, "write": 30.0, "pool": 10.0}
    assert sent.headers["user-agent"] == DEFAULT_USER_AGENT


@pytest.mark.asyncio
async def test_user_agent_can_be_overridden(make_client: ClientFactory) -> None:
    recorder = Recorder(reply(sse({"response": "ok"})))
    await collect(make_client(recorder, user_agent="Flarechat-CLI/1"), mock_conn(), chat())
    assert recorder.requests[0].headers["user-agent"] == "Flarechat-CLI/1"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("token", "kind", "paths"),
    [
        ("demo-token", "user", ["/user/tokens/verify"]),
        ("cfat_account_token_1", "account", ["/user/tokens/verify", "/tokens/verify"]),
        (
            "wai_workers_ai_only",
            "workers-ai",
            ["/user/tokens/verify", "/tokens/verify", "/ai/models/search"],
        ),
    ],
)
async def test_verify_three_ways_against_the_emulator(
    make_client: ClientFactory,
    emulator: EmulatorServer,
    token: str,
    kind: str,
    paths: list[str],
) -> None:
    check = await make_client().verify_token(emu_conn(emulator, token=Secret(token)))
    assert check.kind == kind
    assert check.status == "active"
    sent = [r.path for r in emulator.state.requests]
    assert len(sent) == len(paths)
    assert all(path.endswith(tail) for path, tail in zip(sent, paths, strict=True))
    assert all(r.headers["authorization"] == f"Bearer {token}" for r in emulator.state.requests)


@pytest.mark.asyncio
async def test_verify_a_bad_token_never_leaks_it(
    make_client: ClientFactory, emulator: EmulatorServer, caplog: pytest.LogCaptureFixture
) -> None:
    token = "invalid-Very-Distinct-Secret-4711"
    with caplog.at_level(logging.DEBUG), pytest.raises(AuthenticationFailed) as caught:
        await make_client().verify_token(emu_conn(emulator, token=Secret(token)))
    error = caught.value
    for text in (str(error), repr(error), error.message, error.detail or ""):
        assert token not in text
    assert caplog.records
    assert token not in caplog.text

"""The suite's one hostile server: raw bytes on loopback, for faults the emulator cannot script.

It runs either on the test's own loop (``await server.start()`` / ``await server.stop()``) or on a
loop thread of its own (``with HostileServer(script) as server:``), so the window's qasync loop,
an in-process CLI's ``asyncio.run`` and a subprocess can all talk to it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Self

__all__ = [
    "PORTAL_PAGE",
    "HostileServer",
    "Script",
    "answer",
    "chat_replies",
    "garbage",
    "http_head",
    "mute",
    "portal",
    "redirect",
    "sse_data",
    "sse_reply",
]

Script = Callable[["HostileServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
#: Bound on starting and stopping the server thread.
PATIENCE = 10.0
#: How long a silent script stays silent: far past any test's own deadline.
FOREVER = 600.0
STREAM_HEAD = {"content-type": "text/event-stream", "connection": "close"}
NOT_FOUND = b'{"success": false, "errors": [{"code": 7003, "message": "No route"}]}'
PORTAL_PAGE = (
    b"<!doctype html><html><head><title>Guest WiFi - Sign in</title></head>"
    b"<body><form>Accept the terms</form></body></html>"
)


class HostileServer:
    """A TCP server on loopback that answers every connection with a test's own ``script``.

    ``connections`` counts accepted connections (a retried request is a second one),
    ``requests`` the request heads read by :meth:`read_request` and ``sent`` the bytes written
    with :meth:`send`.
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.requests: list[bytes] = []
        self.sent = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/client/v4"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- on the caller's loop -----------------------------------------------------------------

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    # -- on a loop thread of its own ----------------------------------------------------------

    def __enter__(self) -> Self:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.start(), self._loop).result(PATIENCE)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._loop is not None
        assert self._thread is not None
        asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(PATIENCE)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(PATIENCE)
        self._loop.close()

    # -- for scripts ----------------------------------------------------------------------------

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        """One HTTP/1.1 request head and its Content-Length body, as sent (the head is noted)."""
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        body = await reader.readexactly(length) if length else b""
        self.requests.append(head)
        return head + body

    async def send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        await writer.drain()
        self.sent += len(data)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            await self.script(self, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client hung up (often the point of the test), or the server is stopping
        finally:
            writer.close()
            self._tasks.discard(task)


def chat_replies(*streams: list[bytes], preamble: bytes = b"") -> Script:
    """Each chat POST gets the next stream (``preamble``, ``data:`` payloads, then [DONE]);
    any other request (the window's catalogue look-ups) a 404 envelope."""
    queue = list(streams)

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        request = await server.read_request(reader)
        if not request.startswith(b"POST ") or not queue:
            head = {"content-type": "application/json", "content-length": str(len(NOT_FOUND))}
            await server.send(writer, http_head(404, head) + NOT_FOUND)
            return
        payloads = [*queue.pop(0), b"[DONE]"]
        body = preamble + b"".join(b"data: " + p + b"\n\n" for p in payloads)
        await server.send(writer, http_head(200, STREAM_HEAD) + body)

    return script


def http_head(status: int, headers: Mapping[str, str], *, reason: str = "X") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(data: bytes) -> Script:
    """Read the request, send ``data``, hang up."""

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        await server.send(writer, data)

    return script


def redirect(location: str, *, status: int = 302) -> bytes:
    return http_head(status, {"location": location, "content-length": "0"}, reason="Found")


def portal() -> bytes:
    head = {"content-type": "text/html", "content-length": str(len(PORTAL_PAGE))}
    return http_head(200, head) + PORTAL_PAGE


def garbage() -> bytes:
    return b"\x00\x01 220 smtp.example ESMTP ready\r\n\r\n"


def sse_data(text: str) -> bytes:
    """One streamed event carrying ``text``."""
    return f"data: {json.dumps({'response': text})}\n\n".encode()


def sse_reply(*texts: str) -> bytes:
    """A complete streamed reply made of ``texts``."""
    head = http_head(200, {"content-type": "text/event-stream", "connection": "close"})
    return head + b"".join(sse_data(t) for t in texts) + b"data: [DONE]\n\n"


async def mute(
    server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Accept the connection, read what comes (a TLS ClientHello), never answer."""
    await reader.read(1)
    await asyncio.sleep(FOREVER)

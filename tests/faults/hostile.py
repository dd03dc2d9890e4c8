"""The suite's own hostile server: raw bytes on loopback, on its own loop thread (so the window's
qasync loop and the CLI's asyncio.run can both use it), for what the emulator doesn't script."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Self

__all__ = [
    "HostileServer",
    "Script",
    "answer",
    "garbage",
    "http_head",
    "mute",
    "portal",
    "redirect",
    "sse_reply",
]

Script = Callable[["HostileServer", asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
#: Bound on starting and stopping the server thread.
PATIENCE = 10.0
#: How long a silent script stays silent: far past any test's own deadline.
FOREVER = 600.0
PORTAL_PAGE = (
    b"<!doctype html><html><head><title>Guest WiFi - Sign in</title></head>"
    b"<body><form>Accept the terms</form></body></html>"
)


class HostileServer:
    """``with HostileServer(script) as server:`` answers every connection with ``script``.

    ``connections`` counts accepted connections (a retried request is a second one) and
    ``requests`` the request heads read by :func:`read_request`.
    """

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/client/v4"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(PATIENCE)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(PATIENCE)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(PATIENCE)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            await self.script(self, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client hung up, or the server is stopping
        finally:
            writer.close()
            self._tasks.discard(task)

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        body = await reader.readexactly(length) if length else b""
        self.requests.append(head)
        return head + body


def http_head(status: int, headers: Mapping[str, str], *, reason: str = "X") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(data: bytes) -> Script:
    """Read the request, send ``data``, hang up."""

    async def script(
        server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await server.read_request(reader)
        writer.write(data)
        await writer.drain()

    return script


def redirect(location: str) -> bytes:
    return http_head(302, {"location": location, "content-length": "0"}, reason="Found")


def portal() -> bytes:
    head = {"content-type": "text/html", "content-length": str(len(PORTAL_PAGE))}
    return http_head(200, head) + PORTAL_PAGE


def garbage() -> bytes:
    return b"\x00\x01 220 smtp.example ESMTP ready\r\n\r\n"


def sse_reply(*texts: str) -> bytes:
    """A complete streamed reply made of ``texts``."""
    head = http_head(200, {"content-type": "text/event-stream", "connection": "close"})
    body = "".join(f"data: {json.dumps({'response': t})}\n\n" for t in texts)
    return head + (body + "data: [DONE]\n\n").encode()


async def mute(
    server: HostileServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Accept the connection, read what comes (a TLS ClientHello), never answer."""
    await reader.read(1)
    await asyncio.sleep(FOREVER)

"""Network failures: httpx transport exceptions mapped to the exception tree."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterable
from contextlib import aclosing
from typing import TypeVar, cast

import httpx

from flarechat.api import _messages as msg
from flarechat.api._redact import redact
from flarechat.api.errors import (
    ConnectionFailed,
    DeadlinePassed,
    NotHTTP,
    NotTLS,
    RequestTimedOut,
    StreamInterrupted,
    TLSFailed,
    WorkersAIError,
)

__all__ = [
    "BURST_LIMIT_BYTES",
    "IDLE_STALL_RETRIES",
    "READ_SLICE_S",
    "BurstReader",
    "StallWatch",
    "from_transport_error",
    "stalled",
]

_T = TypeVar("_T")

_TLS_MARKERS = ("CERTIFICATE_VERIFY_FAILED", "SSL:", "TLSV1_ALERT", "WRONG_VERSION_NUMBER")
#: OpenSSL's words for a TLS client that got plain-HTTP bytes (an "HTTP/1.1 400" answer to
#: its ClientHello): the https:// address points at a plain-HTTP port.
_PLAIN_HTTP_MARKERS = (
    "WRONG_VERSION_NUMBER",
    "RECORD_LAYER_FAILURE",
    "PACKET_LENGTH_TOO_LONG",
    "UNKNOWN_PROTOCOL",
)
#: What h11 says when the peer hung up before answering: a transient failure, not "not HTTP".
_DISCONNECTED = "Server disconnected"
#: h11's words for a response head past its 64 KB limit.
_HEAD_TOO_LONG = "Receive buffer too long"
_CHAIN_LIMIT = 10  # how deep to follow __cause__/__context__ looking for the ssl error
#: Bytes a BurstReader reads ahead of its consumer at most (a reply far ahead waits in the
#: socket, as it would without the reader).
BURST_LIMIT_BYTES = 1 << 20
#: Longest the reader pulls chunks before the event loop gets a turn (seconds): asyncio hands
#: the reader all a socket read got (up to 256 KiB, thousands of chunks) without a pause, so it
#: pauses itself well within a frame; its consumer then takes what it read.
READ_SLICE_S = 0.002


def from_transport_error(
    exc: httpx.TransportError,
    *,
    started: bool,
    received: bool = False,
    timeout: httpx.Timeout | None = None,
    secrets: Iterable[str] = (),
) -> WorkersAIError:
    """Map one httpx transport error; ``started`` is True once response headers arrived and
    ``received`` once reply content (text, reasoning, a tool call) was handed on."""
    detail = redact(f"{type(exc).__name__}: {exc}", secrets)
    if received and isinstance(exc, httpx.ReadTimeout):
        # Part of the reply is on screen: it was cut off, not "could not reach Cloudflare".
        return StreamInterrupted(_stall_message(idle=True, received=True, seconds=_read(timeout)))
    if isinstance(exc, httpx.ConnectTimeout):
        where, secure = _where(exc)
        seconds = timeout.connect if timeout else None
        message = msg.connect_timed_out(where, seconds=seconds, secure=secure)
        return RequestTimedOut(message, detail=detail)
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimedOut(
            _timeout_message(exc, started=started, timeout=timeout), detail=detail
        )
    if isinstance(exc, httpx.ProxyError):
        return ConnectionFailed(msg.PROXY_FAILED, detail=detail)
    if started and isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return StreamInterrupted(msg.INTERRUPTED, detail=detail)
    if isinstance(exc, httpx.RemoteProtocolError) and str(exc) == _HEAD_TOO_LONG:
        return NotHTTP(msg.huge_head(_where(exc)[0]), detail=detail)
    if isinstance(exc, httpx.RemoteProtocolError) and not str(exc).startswith(_DISCONNECTED):
        return NotHTTP(msg.not_http(_where(exc)[0]), detail=detail)
    if isinstance(exc, httpx.ConnectError) and _is_tls(exc, _PLAIN_HTTP_MARKERS):
        return NotTLS(msg.not_tls(_where(exc)[0]), detail=detail)
    if isinstance(exc, httpx.ConnectError) and _is_tls(exc, _TLS_MARKERS):
        return TLSFailed(msg.TLS_FAILED, detail=detail)
    return ConnectionFailed(msg.CONNECTION_FAILED, detail=detail)


def _where(exc: httpx.TransportError) -> tuple[str, bool]:
    """("host:port", https?) of the request that failed; ("the server", False) if unknown."""
    try:
        url = exc.request.url
    except RuntimeError:  # raised outside a request context: no request attached
        return "the server", False
    secure = url.scheme == "https"
    port = url.port or (443 if secure else 80)
    return f"{url.host}:{port}", secure


def _timeout_message(
    exc: httpx.TimeoutException, *, started: bool, timeout: httpx.Timeout | None
) -> str:
    if isinstance(exc, httpx.WriteTimeout):
        return msg.timed_out("sending the request", timeout.write if timeout else None)
    if isinstance(exc, httpx.PoolTimeout):
        return msg.timed_out("waiting for a free connection", timeout.pool if timeout else None)
    phase = "streaming the reply" if started else "waiting for the reply to start"
    return msg.timed_out(phase, timeout.read if timeout else None)


def _is_tls(exc: BaseException, markers: tuple[str, ...]) -> bool:
    """Whether the error (or one it came from) is an ssl error whose text has a marker;
    any ssl error counts for the generic ``_TLS_MARKERS``."""
    current: BaseException | None = exc
    for _ in range(_CHAIN_LIMIT):
        if current is None:
            return False
        text = str(current)
        is_ssl = isinstance(current, ssl.SSLError | ssl.CertificateError)
        generic = is_ssl and markers is _TLS_MARKERS
        if generic or any(marker in text for marker in markers):
            return True
        current = current.__cause__ or current.__context__
    return False


class BurstReader:
    """A streamed body a burst at a time: everything that arrived while its consumer was busy.

    httpx hands out one chunk per await, and h11 makes one chunk of each HTTP chunk: Workers AI
    sends one per token, so a fast reply is thousands of awaits, each through every layer above
    (idle timer, SSE, decoding, the session, the window). Here a task of its own pulls the
    chunks (as cheaply as httpx allows) and :meth:`take` hands over all read since the last
    take: the layers above run once per burst, not once per token.
    """

    def __init__(self, chunks: AsyncIterator[bytes], *, limit: int = BURST_LIMIT_BYTES) -> None:
        self._pending: list[bytes] = []
        self._size = 0
        self._limit = limit
        self._error: Exception | None = None
        self._ended = False
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._task = asyncio.get_running_loop().create_task(self._pump(chunks))

    async def take(self) -> bytes | None:
        """The bytes read since the last take (waits for some); None once the body ended.

        An error reading raised is raised here, after the bytes read before it were taken.
        """
        await self._ready.wait()
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._size = 0
            self._room.set()
            if not self._ended:
                self._ready.clear()
            return data
        if self._error is not None:
            raise self._error
        return None

    async def aclose(self) -> None:
        """Stop reading and wait until the reader has closed the body's iterator."""
        self._task.cancel()
        await asyncio.wait([self._task])  # a cancel of our own caller still goes through

    async def _pump(self, chunks: AsyncIterator[bytes]) -> None:
        # An async generator typed as an iterator: closed here, not when garbage-collected.
        generator = cast(AsyncGenerator[bytes, None], chunks)
        try:
            async with aclosing(generator) as stream:
                slice_end = time.monotonic() + READ_SLICE_S
                async for chunk in stream:
                    self._pending.append(chunk)
                    self._size += len(chunk)
                    self._ready.set()
                    if self._size >= self._limit:
                        self._room.clear()
                        await self._room.wait()
                    if time.monotonic() >= slice_end:
                        await asyncio.sleep(0)
                        slice_end = time.monotonic() + READ_SLICE_S
        except Exception as error:  # noqa: BLE001 - whatever it is, take() raises it
            self._error = error
        finally:
            self._ended = True
            self._ready.set()


class StallWatch:
    """The idle and overall deadlines of one streamed reply, kept by one timer, not one per read.

    qasync 0.28 turns every ``call_at`` into a Qt timer that stays registered until its time
    comes, even when cancelled: a timeout scope around each read left one live 60 s timer per
    token behind a fast reply, and Qt's timer list grew by thousands a second. Here a single
    timer is armed for the nearer deadline and, when it fires early (data came since), re-armed
    for the new one: about one timer per idle period.
    """

    def __init__(self, *, idle: float, overall: float, deadline: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._idle, self._overall, self._deadline = idle, overall, deadline
        self._idle_at = self._loop.time() + idle
        self._waiting: asyncio.Timeout | None = None
        self._timer: asyncio.Handle | None = None

    def reset(self) -> None:
        """Data came: the idle clock starts again now."""
        self._idle_at = self._loop.time() + self._idle

    async def read(self, step: Awaitable[_T], *, received: bool) -> _T:
        """Await one read of the stream; raises :func:`stalled`'s error once a deadline passed.

        Only the read is timed (never the consumer's work between reads), as a scope per read
        would; ``received`` says whether reply content was handed on already.
        """
        if self._loop.time() >= self._limit:
            raise self._error(received=received)
        if self._timer is None:
            self._timer = self._loop.call_at(self._limit, self._fire)
        try:
            async with asyncio.timeout(None) as scope:  # a scope with no timer of its own
                self._waiting = scope
                return await step
        except TimeoutError:
            raise self._error(received=received) from None
        finally:
            self._waiting = None

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def _limit(self) -> float:
        return min(self._idle_at, self._deadline)

    def _fire(self) -> None:
        self._timer = None
        if self._waiting is None:
            return  # between reads: the next read checks the time and re-arms
        now = self._loop.time()
        if now >= self._limit:
            self._waiting.reschedule(now)  # expires now: the read raises TimeoutError
        else:
            self._timer = self._loop.call_at(self._limit, self._fire)

    def _error(self, *, received: bool) -> WorkersAIError:
        idle = self._idle_at <= self._deadline
        seconds = self._idle if idle else self._overall
        return stalled(idle=idle, received=received, seconds=seconds)


#: Retries of a request that was accepted and then sent nothing (issue 25, item 16).
IDLE_STALL_RETRIES = 1


def stalled(*, idle: bool, received: bool, seconds: float) -> WorkersAIError:
    """Our idle (no SSE data event for ``seconds``) or overall deadline fired.

    After reply content it is a cut-off reply (StreamInterrupted); before, a timeout.
    """
    message = _stall_message(idle=idle, received=received, seconds=seconds)
    what = "idle" if idle else "overall"
    detail = f"{what} timeout of {seconds:g} s fired"
    if not idle:
        return DeadlinePassed(message, detail=detail)
    if received:
        return StreamInterrupted(message, detail=detail)
    # Accepted, then silent: one more try may reach a healthy instance; a second silence is
    # the answer (each wait is a whole idle period: four of them took about four minutes).
    return RequestTimedOut(message, detail=detail, max_retries=IDLE_STALL_RETRIES)


def _stall_message(*, idle: bool, received: bool, seconds: float | None) -> str:
    limit = f" {seconds:g} s" if seconds else ""
    if idle and received:
        return (
            f"The reply stopped arriving (nothing came for{limit}) and was cut off. "
            "Retry to get the full answer."
        )
    if idle:
        return f"Workers AI accepted the request but sent nothing for{limit}. Try again."
    if received:
        return (
            f"The reply was still not finished after{limit} in all and was cut off. "
            "Retry, or ask for a shorter answer."
        )
    return f"Workers AI did not answer within{limit} in all. Try again later."


def _read(timeout: httpx.Timeout | None) -> float | None:
    return timeout.read if timeout else None

"""Network failures: httpx transport exceptions mapped to the exception tree."""

from __future__ import annotations

import ssl
from collections.abc import Iterable

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

__all__ = ["from_transport_error", "stalled"]

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
_CHAIN_LIMIT = 10  # how deep to follow __cause__/__context__ looking for the ssl error


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
    return RequestTimedOut(message, detail=detail)


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

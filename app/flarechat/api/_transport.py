"""Network failures: httpx transport exceptions mapped to the exception tree."""

from __future__ import annotations

import ssl
from collections.abc import Iterable

import httpx

from flarechat.api import _messages as msg
from flarechat.api._redact import redact
from flarechat.api.errors import (
    ConnectionFailed,
    RequestTimedOut,
    StreamInterrupted,
    TLSFailed,
    WorkersAIError,
)

__all__ = ["from_transport_error", "stalled"]

_TLS_MARKERS = ("CERTIFICATE_VERIFY_FAILED", "SSL:", "TLSV1_ALERT", "WRONG_VERSION_NUMBER")
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
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimedOut(
            _timeout_message(exc, started=started, timeout=timeout), detail=detail
        )
    if isinstance(exc, httpx.ProxyError):
        return ConnectionFailed(msg.PROXY_FAILED, detail=detail)
    if started and isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return StreamInterrupted(msg.INTERRUPTED, detail=detail)
    if isinstance(exc, httpx.ConnectError) and _is_tls(exc):
        return TLSFailed(msg.TLS_FAILED, detail=detail)
    return ConnectionFailed(msg.CONNECTION_FAILED, detail=detail)


def _timeout_message(
    exc: httpx.TimeoutException, *, started: bool, timeout: httpx.Timeout | None
) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return msg.timed_out("connecting", timeout.connect if timeout else None)
    if isinstance(exc, httpx.WriteTimeout):
        return msg.timed_out("sending the request", timeout.write if timeout else None)
    if isinstance(exc, httpx.PoolTimeout):
        return msg.timed_out("waiting for a free connection", timeout.pool if timeout else None)
    phase = "streaming the reply" if started else "waiting for the reply to start"
    return msg.timed_out(phase, timeout.read if timeout else None)


def _is_tls(exc: BaseException) -> bool:
    current: BaseException | None = exc
    for _ in range(_CHAIN_LIMIT):
        if current is None:
            return False
        if isinstance(current, ssl.SSLError | ssl.CertificateError):
            return True
        if any(marker in str(current) for marker in _TLS_MARKERS):
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

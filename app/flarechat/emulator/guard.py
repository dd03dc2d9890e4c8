"""Who may script the emulator: loopback Host, a JSON body and the per-run control token."""

from __future__ import annotations

import ipaddress
import secrets

from starlette.requests import Request
from starlette.responses import Response

from flarechat.emulator.wire import json_response

__all__ = ["CONTROL_HEADER", "new_token", "refusal"]

#: Header carrying the control token (EmulatorServer.control_token, printed by __main__).
CONTROL_HEADER = "X-Emulator-Control"
_TOKEN_BYTES = 24
_LOOPBACK_NAMES = frozenset({"localhost"})


def new_token() -> str:
    return secrets.token_urlsafe(_TOKEN_BYTES)


def _split_host(value: str) -> tuple[str, str]:
    if value.startswith("["):  # [::1]:8787
        host, _, rest = value[1:].partition("]")
        return host, rest.removeprefix(":")
    host, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    return host, port


def _loopback(name: str) -> bool:
    if name.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_ok(header: str | None, port: int | None) -> bool:
    """A loopback name or address with this server's port (refuses DNS-rebinding names)."""
    if not header or port is None:
        return False
    name, given = _split_host(header.strip())
    return _loopback(name) and given == str(port)


def _json_type(header: str | None) -> bool:
    media = (header or "").split(";", 1)[0].strip().lower()
    return media == "application/json"


def _refuse(status: int, error: str) -> Response:
    return json_response({"ok": False, "error": error}, status=status)


def refusal(request: Request, *, token: str) -> Response | None:
    """Why this control request is refused (403 Host, 415 type, 401 token), or None."""
    server = request.scope.get("server")
    port = server[1] if isinstance(server, tuple | list) and len(server) > 1 else None
    if not host_ok(request.headers.get("host"), port):
        return _refuse(403, "the control endpoint answers only Host: 127.0.0.1/localhost:<port>")
    if not _json_type(request.headers.get("content-type")):
        return _refuse(415, "the control endpoint takes Content-Type: application/json only")
    given = request.headers.get(CONTROL_HEADER, "")
    if not secrets.compare_digest(given.encode(), token.encode()):
        return _refuse(401, f"missing or wrong {CONTROL_HEADER} header (see control_token)")
    return None

"""The control endpoint refuses cross-origin forms, foreign Host names and missing tokens."""

from __future__ import annotations

import httpx
import pytest

from flarechat.emulator.app import CONTROL_PATH
from flarechat.emulator.guard import CONTROL_HEADER, host_ok
from flarechat.emulator.server import EmulatorServer


def _post(
    emulator: EmulatorServer, *, headers: dict[str, str], content: bytes = b'{"action":"requests"}'
) -> httpx.Response:
    return httpx.post(emulator.base_url + CONTROL_PATH, content=content, headers=headers)


def _good(emulator: EmulatorServer) -> dict[str, str]:
    return {CONTROL_HEADER: emulator.control_token, "Content-Type": "application/json"}


def test_token_and_json_open_the_endpoint(emulator: EmulatorServer) -> None:
    reply = _post(emulator, headers=_good(emulator))
    assert reply.json() == {"ok": True, "result": []}


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""],
)
def test_non_json_types_are_415(emulator: EmulatorServer, content_type: str) -> None:
    headers = _good(emulator) | {"Content-Type": content_type}
    assert _post(emulator, headers=headers).status_code == 415


@pytest.mark.parametrize("token", [None, "", "wrong"])
def test_missing_or_wrong_token_is_401(emulator: EmulatorServer, token: str | None) -> None:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers[CONTROL_HEADER] = token
    reply = _post(emulator, headers=headers)
    assert reply.status_code == 401
    assert reply.json()["ok"] is False


@pytest.mark.parametrize(
    "host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "attacker.localhost.evil:{port}"]
)
def test_foreign_host_header_is_403(emulator: EmulatorServer, host: str) -> None:
    headers = _good(emulator) | {"Host": host.format(port=emulator.port)}
    assert _post(emulator, headers=headers).status_code == 403


def test_loopback_host_forms() -> None:
    assert host_ok("127.0.0.1:8787", 8787)
    assert host_ok("localhost:8787", 8787)
    assert host_ok("[::1]:8787", 8787)
    assert host_ok("127.0.0.2:8787", 8787)
    assert not host_ok("127.0.0.1:8788", 8787)
    assert not host_ok("[::1]", 8787)
    assert not host_ok("rebind.example:8787", 8787)


def test_server_control_helper_sends_the_token(emulator: EmulatorServer) -> None:
    emulator.control("fail_next", code=3040, status=429)
    assert emulator.state.take_failure("@cf/meta/llama-3.1-8b-instruct-fast") is not None
    assert emulator.control("variants")["json_stream"] == "plain"
    with pytest.raises(RuntimeError, match="status"):
        emulator.control("fail_next", code=3040, status=99)


def test_token_is_random_per_emulator() -> None:
    one, two = EmulatorServer(), EmulatorServer()
    assert one.control_token != two.control_token
    assert len(one.control_token) >= 32

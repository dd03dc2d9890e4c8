"""EmulatorServer lifecycle, loopback-only binding and the standalone ``python -m`` entry."""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading

import httpx
import pytest
from emulator_helpers import AUTH, LLAMA, PATIENCE, ask, run_url, wait_until

from flarechat.emulator import DEMO_ACCOUNT_ID, DEMO_TOKEN, EmulatorConfig
from flarechat.emulator.server import EmulatorServer


def test_start_listens_on_a_free_port_and_stop_is_idempotent() -> None:
    server = EmulatorServer()
    server.start()
    server.start()  # already running: no second thread, same port
    try:
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        assert server.api_base == server.base_url + "/client/v4"
        assert server.gateway_base == server.base_url + "/gateway/v1"
        reply = httpx.post(run_url(server, LLAMA), headers=AUTH, json=ask("hi"))
        assert reply.status_code == 200
    finally:
        server.stop()
    server.stop()
    assert not server.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.api_base + "/user/tokens/verify", timeout=PATIENCE)


def test_context_manager_and_two_servers_side_by_side() -> None:
    with EmulatorServer() as first, EmulatorServer(host="localhost") as second:
        assert first.port != second.port
        assert second.host == "127.0.0.1"
        for server in (first, second):
            verify = httpx.get(server.api_base + "/user/tokens/verify", headers=AUTH)
            assert verify.json()["result"]["status"] == "active"
    assert not first.running
    assert not second.running


def test_stop_ends_queued_and_streaming_requests() -> None:
    server = EmulatorServer(config=EmulatorConfig(tokens_per_second=2))
    server.start()
    server.state.set_slots(LLAMA, 1)
    outcomes: list[str] = []

    def call(body: dict[str, object]) -> None:
        try:
            with httpx.stream("POST", run_url(server, LLAMA), headers=AUTH, json=body) as reply:
                reply.read()
                outcomes.append(f"status {reply.status_code}")
        except httpx.RemoteProtocolError:
            outcomes.append("cut off")

    threads = [threading.Thread(target=call, args=(ask(f"q{n}", stream=True),)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    wait_until(lambda: any(e.action == "queued" for e in server.state.capacity_log), "a queue")
    server.stop()  # one reply is mid-stream at 2 tokens/s, the other is queued behind it
    for thread in threads:
        thread.join(PATIENCE)
    assert not server.running
    # the streaming reply is cut mid-body; the queued one never got its headers
    assert sorted(outcomes) == ["cut off", "status 500"]


def test_port_is_unknown_before_start() -> None:
    server = EmulatorServer()
    with pytest.raises(RuntimeError, match="not been started"):
        _ = server.base_url
    assert repr(server) == "EmulatorServer(not started)"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com", "10.0.0.1"])
def test_refuses_to_bind_anything_but_loopback(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        EmulatorServer(host=host)


def test_accepts_every_loopback_spelling() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"):
        EmulatorServer(host=host)  # constructing validates; nothing is bound yet


def test_config_is_validated_and_applied() -> None:
    with pytest.raises(ValueError, match="slots"):
        EmulatorConfig(slots=0)
    with pytest.raises(ValueError, match="tokens_per_second"):
        EmulatorConfig(tokens_per_second=0)
    with EmulatorServer(config=EmulatorConfig(slots=5, tokens_per_second=1000)) as server:
        assert server.state.capacity.slots(LLAMA) == 5
        assert server.state.tokens_per_second == 1000


def test_seed_changes_replies_deterministically() -> None:
    texts = []
    for seed in (1, 1, 2, 3, 4):
        with EmulatorServer(config=EmulatorConfig(seed=seed, tokens_per_second=1e5)) as server:
            body = httpx.post(run_url(server, LLAMA), headers=AUTH, json=ask("same")).json()
            texts.append(body["result"]["response"])
    assert texts[0] == texts[1]
    assert len(set(texts)) > 1


def _read_lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)


@pytest.mark.slow
def test_python_dash_m_runs_standalone_and_answers() -> None:
    command = [sys.executable, "-m", "flarechat.emulator", "--port", "0", "--slots", "3"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
    try:
        banner = lines.get(timeout=PATIENCE * 3)
        match = re.search(r"http://127\.0\.0\.1:(\d+)", banner)
        assert match is not None, banner
        base = f"http://127.0.0.1:{match.group(1)}/client/v4"
        api_line = lines.get(timeout=PATIENCE)
        assert api_line.strip() == f"FLARECHAT_API_BASE={base}"
        url = f"{base}/accounts/{DEMO_ACCOUNT_ID}/ai/run/{LLAMA}"
        reply = httpx.post(url, headers={"Authorization": f"Bearer {DEMO_TOKEN}"}, json=ask("hi"))
        assert reply.status_code == 200
        assert "## " in reply.json()["result"]["response"]
    finally:
        process.terminate()
        code = process.wait(timeout=PATIENCE)
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]
    assert code == 0


@pytest.mark.slow
def test_python_dash_m_refuses_a_public_host() -> None:
    command = [sys.executable, "-m", "flarechat.emulator", "--host", "0.0.0.0", "--port", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE * 3)
    assert done.returncode == 2
    assert "loopback" in done.stderr


def test_the_listening_socket_is_tcp_so_replies_go_out_without_nagle() -> None:
    """asyncio sets TCP_NODELAY on accepted sockets only when the listening socket's proto is
    TCP; with proto 0 a kept-alive connection's reply waited ~40 ms (Nagle + delayed ACK)."""
    import socket

    with EmulatorServer() as server:
        listening = server._socket
        assert listening is not None
        assert listening.proto == socket.IPPROTO_TCP
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            client.sendall(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert client.recv(12).startswith(b"HTTP/1.1")

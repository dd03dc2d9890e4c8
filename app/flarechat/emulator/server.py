"""EmulatorServer: the emulator's uvicorn server on a loopback port, in a daemon thread."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from types import TracebackType
from typing import Any

import uvicorn

from flarechat import safejson
from flarechat.emulator.app import CONTROL_PATH, create_app
from flarechat.emulator.config import EmulatorConfig, check_loopback
from flarechat.emulator.delivery import install_log_filter
from flarechat.emulator.guard import CONTROL_HEADER
from flarechat.emulator.state import EmulatorState

__all__ = ["EmulatorServer"]

#: How long start() waits for the socket to accept connections before giving up.
STARTUP_TIMEOUT = 10.0
#: Streams still open at stop() get this long to finish before they are cut.
SHUTDOWN_GRACE = 1
#: stop() waits this much beyond the grace period for the thread to end.
JOIN_MARGIN = 5.0
_POLL_INTERVAL = 0.005
#: control() gives the emulator this long to answer.
CONTROL_TIMEOUT = 10.0


class EmulatorServer:
    """A real HTTP server speaking the Workers AI / AI Gateway protocol on loopback.

    ``start()`` returns once the port accepts connections; ``stop()`` is graceful, joins the
    thread and may be called any number of times. Use it as a context manager in tests.
    """

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, config: EmulatorConfig | None = None
    ) -> None:
        check_loopback(host)
        self.host = "127.0.0.1" if host == "localhost" else host.strip("[]")
        self._requested_port = port
        self._port: int | None = None
        self.config = config or EmulatorConfig()
        self.state = EmulatorState(self.config)
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the emulator has not been started")
        return self._port

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def api_base(self) -> str:
        """Use as FLARECHAT_API_BASE: ``{base_url}/client/v4``."""
        return self.base_url + "/client/v4"

    @property
    def gateway_base(self) -> str:
        """Use as FLARECHAT_GATEWAY_BASE: ``{base_url}/gateway/v1``."""
        return self.base_url + "/gateway/v1"

    # -- the control endpoint ------------------------------------------------------------------

    @property
    def control_token(self) -> str:
        """The per-run secret POST /__emulator__/control requires in ``X-Emulator-Control``."""
        return self.state.control_token

    @property
    def control_headers(self) -> dict[str, str]:
        """Headers a control request needs (the Host header is the loopback base_url's)."""
        return {CONTROL_HEADER: self.control_token, "Content-Type": "application/json"}

    def control(self, action: str, **arguments: Any) -> Any:
        """POST one control over loopback HTTP with the token; its ``result``, or RuntimeError."""
        payload = json.dumps({"action": action, **arguments}).encode()
        request = urllib.request.Request(
            self.base_url + CONTROL_PATH, data=payload, headers=self.control_headers
        )
        try:
            with urllib.request.urlopen(request, timeout=CONTROL_TIMEOUT) as response:
                answer = safejson.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"control {action!r} refused: {exc.read().decode()}") from None
        return answer.get("result")

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Bind, serve in a daemon thread, and return once listening (no-op if running)."""
        with self._lock:
            if self._thread is not None:
                return
            sock = self._bind()
            config = uvicorn.Config(
                create_app(self.state),
                log_config=None,
                log_level="warning",
                access_log=False,
                lifespan="off",
                http="h11",
                proxy_headers=False,
                server_header=False,
                headers=[("server", "cloudflare")],
                timeout_graceful_shutdown=SHUTDOWN_GRACE,
            )
            server = uvicorn.Server(config)
            install_log_filter()
            thread = threading.Thread(
                target=self._serve, args=(server, sock), name="flarechat-emulator", daemon=True
            )
            self._server, self._thread, self._socket = server, thread, sock
            self.state.set_closing(False)
            thread.start()
        if not self._wait_started(server, thread):
            self.stop()
            raise RuntimeError("the emulator did not start listening")

    def stop(self) -> None:
        """Ask uvicorn to exit, join its thread, close the socket. Safe to call repeatedly."""
        with self._lock:
            server, thread, sock = self._server, self._thread, self._socket
            self._server = self._thread = self._socket = None
        if server is not None:
            self.state.set_closing(True)  # streams end at their next token, the queue empties
            server.should_exit = True
        if thread is not None:
            thread.join(SHUTDOWN_GRACE + JOIN_MARGIN)
        if sock is not None:
            sock.close()

    def __enter__(self) -> EmulatorServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.base_url if self._port is not None else "not started"
        return f"EmulatorServer({where})"

    # -- internals ---------------------------------------------------------------------------

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when the
        # listening socket says TCP, and without it a kept-alive connection's reply waited
        # ~40 ms for Nagle and the client's delayed ACK between its headers and its body.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self._requested_port))
        except OSError:
            sock.close()
            raise
        self._port = sock.getsockname()[1]
        return sock

    @staticmethod
    def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
        asyncio.run(server.serve(sockets=[sock]))

    @staticmethod
    def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> bool:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                return False
            time.sleep(_POLL_INTERVAL)
        return True

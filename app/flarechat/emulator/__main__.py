"""``python -m flarechat.emulator``: run the emulator standalone until Ctrl+C."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from flarechat.emulator.config import (
    DEFAULT_SLOTS,
    DEFAULT_TOKENS_PER_SECOND,
    DEMO_ACCOUNT_ID,
    DEMO_TOKEN,
    EmulatorConfig,
    check_loopback,
)
from flarechat.emulator.server import EmulatorServer

DEFAULT_PORT = 8787
EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m flarechat.emulator",
        description="A local Workers AI + AI Gateway server (loopback only) for tests and demos.",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback address only")
    parser.add_argument("--slots", type=int, default=DEFAULT_SLOTS, help="slots per model")
    parser.add_argument(
        "--tps", type=float, default=DEFAULT_TOKENS_PER_SECOND, help="tokens per second"
    )
    parser.add_argument("--seed", type=int, default=0, help="varies every reply deterministically")
    return parser


def _banner(server: EmulatorServer) -> str:
    return (
        f"Flarechat emulator listening on {server.base_url}\n"
        f"  FLARECHAT_API_BASE={server.api_base}\n"
        f"  FLARECHAT_GATEWAY_BASE={server.gateway_base}\n"
        f"  CLOUDFLARE_ACCOUNT_ID={DEMO_ACCOUNT_ID}\n"
        f"  CLOUDFLARE_API_TOKEN={DEMO_TOKEN}   (any token works unless it starts 'invalid')\n"
        "Press Ctrl+C to stop.\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        check_loopback(args.host)
        config = EmulatorConfig(slots=args.slots, tokens_per_second=args.tps, seed=args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    with EmulatorServer(host=args.host, port=args.port, config=config) as server:
        sys.stdout.write(_banner(server))
        sys.stdout.flush()
        sys.stderr.write(f"Control token (X-Emulator-Control header): {server.control_token}\n")
        sys.stderr.flush()
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C is the documented way out
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

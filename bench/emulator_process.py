"""The streaming bench's emulator in a process of its own, answering BENCH_PROMPT at length.

A real Workers AI server is another machine; an emulator in a thread of the bench process
would take the GIL from the window being measured (every token then waits for a GIL hand-off
of up to 5 ms), so the window's numbers would mostly measure the emulator. Run by
:class:`EmulatorProcess`; prints its addresses, serves until its stdin closes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from types import TracebackType

from flarechat.emulator import EmulatorConfig, EmulatorServer
from long_reply import REPLY_TOKENS, install_long_reply, long_answer

__all__ = ["EmulatorProcess"]

START_TIMEOUT_S = 30.0
#: utime's index in /proc/<pid>/stat's fields after the ``(comm)`` field (stime follows it).
_UTIME = 11


class EmulatorProcess:
    """``with EmulatorProcess(tokens_per_second=…, slots=…) as emu``: ``emu.api_base`` etc."""

    def __init__(self, *, tokens_per_second: float, slots: int, tokens: int = REPLY_TOKENS) -> None:
        self._argv = [
            sys.executable,
            str(Path(__file__).resolve()),
            f"--tps={tokens_per_second}",
            f"--slots={slots}",
            f"--tokens={tokens}",
        ]
        self._proc: subprocess.Popen[str] | None = None
        self.api_base = self.gateway_base = ""

    def __enter__(self) -> EmulatorProcess:
        self._proc = subprocess.Popen(
            self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait(START_TIMEOUT_S)
            raise RuntimeError(f"the emulator process exited ({self._proc.returncode})")
        where = json.loads(line)
        self.api_base, self.gateway_base = where["api_base"], where["gateway_base"]
        return self

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the emulator process has used so far; NaN where
        /proc is not there (not Linux)."""
        if self._proc is None:
            return float("nan")
        try:
            stat = Path(f"/proc/{self._proc.pid}/stat").read_text()
        except OSError:
            return float("nan")
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        user, system = int(fields[_UTIME]), int(fields[_UTIME + 1])
        return (user + system) / os.sysconf("SC_CLK_TCK")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            self._proc.wait(START_TIMEOUT_S)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tps", type=float, required=True)
    parser.add_argument("--slots", type=int, required=True)
    parser.add_argument("--tokens", type=int, default=REPLY_TOKENS)
    args = parser.parse_args()
    install_long_reply(long_answer(args.tokens))
    config = EmulatorConfig(slots=args.slots, tokens_per_second=args.tps)
    with EmulatorServer(config=config) as emu:
        where = {"api_base": emu.api_base, "gateway_base": emu.gateway_base}
        sys.stdout.write(json.dumps(where) + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # until the bench closes our stdin


if __name__ == "__main__":
    main()

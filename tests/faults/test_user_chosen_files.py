"""Files the user names, pointed at things that are not files (issue 25 item 5): a named pipe
with no writer, ``/dev/zero``, a folder. ``ask --image``, ``--json-schema`` and ``--tools`` and
the window's attach refuse each at once with a plain sentence: nothing waits for a writer that
never comes, and nothing reads past the limit."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from window_helpers import window

from flarechat.emulator import DEMO_ACCOUNT_ID, EmulatorServer
from flarechat.paths import FileTooLarge, read_regular_file

TOKEN = "tok-faults-files-5c1e0a9d77"
#: A refusal is immediate; a read that waits for a writer is let go (by the test) after this.
PATIENCE_S = 20.0
#: The command line is run with this much address space: a read of /dev/zero that does not
#: stop at the limit fails in seconds instead of taking the machine's memory.
ADDRESS_SPACE = 2 * 1024**3


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe no one writes to (a reader that opens it waits until the test lets it go)."""
    path = tmp_path / "pipe.png"
    os.mkfifo(path)
    yield path
    _let_go(path)


def _let_go(fifo: Path) -> None:
    """Open the pipe for writing and close it: a reader stuck in open() gets end of file."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # no reader waits
    os.close(fd)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _ask(profile: Path, emulator: EmulatorServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        {
            "FLARECHAT_HOME": str(profile),
            "CLOUDFLARE_ACCOUNT_ID": DEMO_ACCOUNT_ID,
            "CLOUDFLARE_API_TOKEN": TOKEN,
            "FLARECHAT_API_BASE": emulator.api_base,
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "flarechat", "ask", *args, "hello"],
        env=env,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S * 3,
        check=False,
        preexec_fn=_limit_memory,
    )


@pytest.mark.parametrize("flag", ["--image", "--json-schema", "--tools"])
@pytest.mark.parametrize("target", ["fifo", "dev-zero"])
def test_the_command_line_refuses_a_pipe_or_device_at_once(
    flag: str, target: str, fifo: Path, emulator: EmulatorServer, isolated_profile: Path
) -> None:
    path = fifo if target == "fifo" else Path("/dev/zero")
    watchdog = threading.Timer(PATIENCE_S, _let_go, (fifo,))  # a stuck read ends, and fails
    watchdog.start()
    started = time.monotonic()
    try:
        done = _ask(isolated_profile, emulator, flag, str(path))
    finally:
        watchdog.cancel()
    assert time.monotonic() - started < PATIENCE_S, "the command waited on the file"
    assert done.returncode == 2, done.stderr
    assert "not a regular file (a pipe, device or socket)" in done.stderr
    assert f"{flag} {path}" in done.stderr
    assert "Traceback" not in done.stderr
    assert TOKEN not in done.stderr + done.stdout
    assert emulator.state.requests == []  # nothing was sent


@pytest.mark.asyncio
async def test_the_window_refuses_to_attach_a_pipe_without_blocking(
    emulator: EmulatorServer, tmp_path: Path, fifo: Path
) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        box = main.pane.composer.attachments
        watchdog = threading.Timer(PATIENCE_S, _let_go, (fifo,))
        watchdog.start()
        started = time.monotonic()
        try:
            box.add_files([str(fifo), "/dev/zero"])  # on the GUI thread, as the dialog does
        finally:
            watchdog.cancel()
        assert time.monotonic() - started < PATIENCE_S, "the window waited on the pipe"
        text = box.problem.text()
        assert "pipe.png is not a regular file (a pipe, device or socket)" in text
        assert "zero is not a regular file" in text
        assert box.problem.isVisibleTo(main)
        assert main.pane.composer.attachments.count() == 0


def test_a_file_longer_than_it_says_is_read_only_to_the_limit_plus_one(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(FileTooLarge) as caught:
        read_regular_file(path, limit=1000)
    assert caught.value.size == 1001
    assert read_regular_file(path, limit=1001) == b"x" * 1001

"""A real full disk: a small tmpfs mounted for one test, a profile put on it, and the rest of
it filled until the kernel says ENOSPC. Needs root (``mount -t tmpfs``), as the fault suite
runs here; nothing about the disk is simulated."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["fill", "full_disk"]

#: Room for an empty profile's database (about 100 KB) and nothing much else.
SIZE = "1m"
_FILLER = "filler"
_CHUNKS = (1 << 16, 1 << 12, 1 << 9, 1)


@contextmanager
def full_disk(where: Path, prepare: Callable[[Path], None] = lambda _root: None) -> Iterator[Path]:
    """Mount a tmpfs at ``where``, run ``prepare(where)`` (write the profile), then fill what is
    left; yields ``where``, full. Unmounted on the way out."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(where)], check=True)
    try:
        prepare(where)
        fill(where / _FILLER)
        yield where
    finally:
        if subprocess.run(["umount", str(where)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], check=True)  # something still open


def fill(path: Path) -> None:
    """Write ``path`` until the disk refuses every size of write, down to one byte (and a new
    file's first byte): the disk is then full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in _CHUNKS:
            block = b"\0" * size
            while True:
                try:
                    os.write(fd, block)
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
                    break
    finally:
        os.close(fd)
    probe = path.with_name("probe")
    try:
        with probe.open("wb") as file:
            file.write(b"x")
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
    else:
        raise AssertionError("the disk still takes a new file's first byte: it is not full")

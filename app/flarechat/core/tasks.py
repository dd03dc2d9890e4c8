"""Task keeping for sessions and controllers: every asyncio task is referenced and logged.

No fire-and-forget (asyncio keeps only weak references to tasks): a job lives in a set until it
ends, its exception (if any) is logged instead of vanishing, and ``aclose`` cancels what is
left and waits for it, so quitting leaves nothing running.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

__all__ = ["TaskKeeper"]

log = logging.getLogger(__name__)


class TaskKeeper:
    """A set of background jobs (catalogue refresh, saves, searches…) owned by one controller."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: set[asyncio.Task[Any]] = set()
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any] | None:
        """Start ``coro`` as a kept task; returns None (and closes it) after ``aclose``."""
        if self._closed:
            coro.close()
            return None
        task = asyncio.get_running_loop().create_task(coro, name=f"{self._name}:{name}")
        self._jobs.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._jobs.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("background job %s failed", task.get_name(), exc_info=error)

    def __len__(self) -> int:
        return len(self._jobs)

    async def drain(self) -> None:
        """Wait for the jobs running now (tests use it to reach a quiet state)."""
        while self._jobs:
            await asyncio.gather(*list(self._jobs), return_exceptions=True)

    async def aclose(self) -> None:
        """Refuse new jobs, cancel the running ones and wait until they have unwound."""
        self._closed = True
        jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)

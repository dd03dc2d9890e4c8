"""The capacity model: N generation slots per model, a FIFO queue, and forced-busy holds."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Capacity", "CapacityClosed", "CapacityEvent"]

CapacityAction = Literal["acquired", "queued", "rejected", "released", "left-queue"]


class CapacityClosed(Exception):
    """The emulator is shutting down: nobody in the queue will get a slot."""


@dataclass(frozen=True, slots=True)
class CapacityEvent:
    """One entry of the capacity log; tests assert on the order of these, never on timing."""

    action: CapacityAction
    model: str
    request_id: str


@dataclass(eq=False, slots=True)
class _Waiter:
    request_id: str
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Event

    def notify(self) -> None:
        # RuntimeError: the server loop has closed, nobody is left to wake
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.wake.set)


class Capacity:
    """Thread-safe slot accounting; waiting happens on the server's event loop.

    Controls (``set_slots``, ``hold``, ``reset``) may be called from any thread: they take the
    lock and wake the queued requests so each re-checks whether it may now run.
    """

    def __init__(self, *, default_slots: int, clock: Callable[[], float]) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._default_slots = default_slots
        self._slots: dict[str, int] = {}
        self._busy: dict[str, int] = defaultdict(int)
        self._held_until: dict[str, float] = {}
        self._queues: dict[str, deque[_Waiter]] = defaultdict(deque)
        self._log: list[CapacityEvent] = []
        self._closed = False

    # -- controls ---------------------------------------------------------------------------

    def slots(self, model: str) -> int:
        with self._lock:
            return self._slots.get(model, self._default_slots)

    def set_slots(self, model: str, n: int) -> None:
        if n < 1:
            raise ValueError(f"a model needs at least one slot, not {n}")
        with self._lock:
            self._slots[model] = n
        self.wake_all()

    def hold(self, model: str, seconds: float) -> None:
        """Occupy every slot of ``model`` for ``seconds`` (capacity "forced busy")."""
        if seconds < 0:
            raise ValueError(f"seconds must not be negative, not {seconds}")
        with self._lock:
            self._held_until[model] = self._clock() + seconds
        self.wake_all()

    def reset(self) -> None:
        """Forget slot overrides, holds and the log; requests in flight keep their slots."""
        with self._lock:
            self._slots.clear()
            self._held_until.clear()
            self._log.clear()
        self.wake_all()

    def close(self, closed: bool = True) -> None:
        """Shutting down: queued requests give up (CapacityClosed); ``False`` reopens."""
        with self._lock:
            self._closed = closed
        self.wake_all()

    def wake_all(self) -> None:
        with self._lock:
            waiters = [w for queue in self._queues.values() for w in queue]
        for waiter in waiters:
            waiter.notify()

    @property
    def log(self) -> list[CapacityEvent]:
        with self._lock:
            return list(self._log)

    # -- used by the generation path (on the server loop) ------------------------------------

    def try_acquire(self, model: str, request_id: str) -> bool:
        """Take a slot at once if one is free and nobody is queued ahead."""
        with self._lock:
            if self._queues[model] or not self._free_locked(model):
                return False
            self._take_locked(model, request_id)
            return True

    def reject(self, model: str, request_id: str) -> None:
        with self._lock:
            self._log.append(CapacityEvent("rejected", model, request_id))

    async def wait_for_slot(self, model: str, request_id: str) -> None:
        """Queue FIFO until a slot is free; leaving (cancellation) frees the place in line."""
        waiter = _Waiter(request_id, asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._queues[model].append(waiter)
            self._log.append(CapacityEvent("queued", model, request_id))
        try:
            while True:
                waiter.wake.clear()
                with self._lock:
                    if self._closed:
                        raise CapacityClosed(f"{request_id} was queued at shutdown")
                    if self._queues[model][0] is waiter and self._free_locked(model):
                        self._queues[model].popleft()
                        self._take_locked(model, request_id)
                        break
                    timeout = self._hold_remaining_locked(model)
                await self._sleep_until_woken(waiter, timeout)
        except BaseException:
            self._leave(model, waiter)
            raise
        self.wake_all()  # another slot may be free for the next in line

    def release(self, model: str, request_id: str) -> None:
        with self._lock:
            self._busy[model] = max(0, self._busy[model] - 1)
            self._log.append(CapacityEvent("released", model, request_id))
        self.wake_all()

    # -- internals ---------------------------------------------------------------------------

    @staticmethod
    async def _sleep_until_woken(waiter: _Waiter, hold_left: float | None) -> None:
        try:
            async with asyncio.timeout(hold_left):
                await waiter.wake.wait()
        except TimeoutError:
            pass  # a hold expired: re-check

    def _leave(self, model: str, waiter: _Waiter) -> None:
        with self._lock:
            if waiter in self._queues[model]:
                self._queues[model].remove(waiter)
                self._log.append(CapacityEvent("left-queue", model, waiter.request_id))
        self.wake_all()

    def _free_locked(self, model: str) -> int:
        if self._hold_remaining_locked(model) is not None:
            return 0
        return max(0, self._slots.get(model, self._default_slots) - self._busy[model])

    def _hold_remaining_locked(self, model: str) -> float | None:
        remaining = self._held_until.get(model, 0.0) - self._clock()
        return remaining if remaining > 0 else None

    def _take_locked(self, model: str, request_id: str) -> None:
        self._busy[model] += 1
        self._log.append(CapacityEvent("acquired", model, request_id))

"""The wait between attempts: Retry now ends it, and a cancel always wins."""

from __future__ import annotations

import asyncio

import pytest

from flarechat.core.session.reply import CuttableSleep

pytestmark = pytest.mark.asyncio


async def test_retry_now_ends_the_wait_at_once() -> None:
    sleep = CuttableSleep()
    task = asyncio.create_task(sleep(3600))
    await asyncio.sleep(0)
    sleep.cut()
    await asyncio.wait_for(task, 30)
    assert task.done()
    assert not task.cancelled()


async def test_the_wait_ends_on_its_own_after_the_delay() -> None:
    await asyncio.wait_for(CuttableSleep()(0.01), 30)


async def test_a_cancel_in_the_turn_retry_now_is_pressed_is_not_lost() -> None:
    """Cancel (the user's Cancel, or quitting) and Retry now in one loop turn: on Python 3.11
    ``asyncio.wait_for`` returned normally and the reply went on to another attempt."""
    sleep = CuttableSleep()
    task = asyncio.create_task(sleep(3600))
    await asyncio.sleep(0)  # the task waits
    sleep.cut()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

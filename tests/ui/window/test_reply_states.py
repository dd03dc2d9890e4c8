"""What the window says about a reply as it waits: no retry promised after giving up, a model
change shown at once, and a wait in the model's queue shown and counted."""

from __future__ import annotations

from pathlib import Path

import pytest
from shell_helpers import MODEL, slow_policy
from window_helpers import until, window

from flarechat.emulator import EmulatorServer

pytestmark = pytest.mark.asyncio

OTHER_MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
PROMISES = ("will retry", "will try again", "automatically")


async def test_a_cancelled_retry_promises_no_retry(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as (
        env,
        main,
        _seen,
    ):
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.chat.send("Busy?")
        assert reply_id is not None
        await env.recorder.wait("retry_scheduled")
        env.chat.cancel_retry()
        data = await env.finished(reply_id)
        assert data.status == "failed"
        shown = [main.pane.retry_banner.text, main.pane.notice_banner.text, data.error_text or ""]
        assert not [t for t in shown if any(p in t.lower() for p in PROMISES)], shown


async def test_a_spent_retry_budget_promises_no_retry(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True) as (env, main, _seen):
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.chat.send("Busy?")
        assert reply_id is not None
        await env.recorder.wait("turn_failed")
        data = await env.finished(reply_id)
        shown = [main.pane.retry_banner.text, data.error_text or ""]
        assert not [t for t in shown if any(p in t.lower() for p in PROMISES)], shown


async def test_a_model_change_shows_at_once(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        env.chat.set_model(OTHER_MODEL)
        short = OTHER_MODEL.rsplit("/", 1)[-1]
        assert env.recorder.args("model_changed")[-1] == (OTHER_MODEL,)
        assert short in main.pane.composer._edit.placeholderText()
        assert env.recorder.args("metrics_changed")[-1][0].startswith(short)


async def test_waiting_in_the_queue_is_shown_and_counted(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as (
        env,
        main,
        _seen,
    ):
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.chat.send("Busy?")
        assert reply_id is not None
        await env.recorder.wait("retry_scheduled")
        env.chat.wait_in_queue()
        label = main.pane.composer.queued_label
        await until(label.isVisible, "the queue status")
        assert "queue" in label.text().lower()
        emulator.state.advance_time(601)  # the queue moves: the reply arrives
        data = await env.finished(reply_id)
        assert data.status == "done"
        await until(lambda: not label.isVisible(), "the queue status to go")

"""Timing labels say what the protocol says (issue 23 #8): a wait is "queued" only after Wait
in queue or a 3040 waited out; a slow first byte with Reject if busy on, or gpt-oss generating
a reply that does not stream, is waiting for the first token."""

from __future__ import annotations

from pathlib import Path

import pytest
from shell_helpers import MODEL
from window_helpers import until, window

from flarechat.emulator import EmulatorServer
from flarechat.ui.chat.composer import WAITING_TEXT

pytestmark = pytest.mark.asyncio(loop_scope="function")

NOT_STREAMED_MODEL = "@cf/openai/gpt-oss-120b"  # /ai/run answers it with one JSON body
#: Longer than the composer's 1 s before it shows a wait, so the label is seen while it lasts.
SLOW_FIRST_BYTE_S = 3.0
WAITING_PREFIX = WAITING_TEXT.split("{", 1)[0]


async def test_a_slow_first_byte_with_reject_if_busy_is_not_called_queued(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True) as (env, main, _seen):
        emulator.state.delay_first_byte(SLOW_FIRST_BYTE_S, model=MODEL)
        reply = env.chat.send("Slow to start?")
        assert reply is not None
        label = main.pane.composer.queued_label
        await until(label.isVisible, "the wait to be shown")
        assert label.text().startswith(WAITING_PREFIX)
        assert "queue" not in label.text().lower()
        data = await env.finished(reply)
        assert data.status == "done"
        assert "queued" not in data.meta_line
        assert "TTFT" in data.meta_line  # the slow first byte is in the time to first token
        await until(lambda: not label.isVisible(), "the wait label to go")


async def test_gpt_oss_generating_without_streaming_is_not_called_queued(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    emulator.state.set_tokens_per_second(20)  # the whole reply is generated before a byte
    async with window(emulator, tmp_path, last_model=NOT_STREAMED_MODEL) as (env, main, _seen):
        reply = env.chat.send("Explain queues at length")
        assert reply is not None
        label = main.pane.composer.queued_label
        await until(label.isVisible, "the wait to be shown")
        assert label.text().startswith(WAITING_PREFIX)
        assert "queue" not in label.text().lower()
        phases = [p for m, p in env.recorder.args("turn_phase_changed") if m == reply]
        assert "queued" not in phases
        data = await env.finished(reply)
        assert data.status == "done"
        assert "queued" not in data.meta_line
        assert data.meta_line.startswith("took ")


async def test_a_capacity_refusal_waited_out_is_called_queued(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True) as (env, _main, _seen):
        emulator.state.fail_next(1, code=3040, status=429, model=MODEL)
        emulator.state.delay_first_byte(1.2, model=MODEL)  # the retry is answered slowly
        reply = env.chat.send("Busy, then not")
        assert reply is not None
        data = await env.finished(reply)
        assert data.status == "done"
        assert data.meta_line.startswith("queued ")
        tree = await env.store.load_tree(str(env.chat.current_id))
        assert (tree.get(reply).timings or {})["queued"] is True

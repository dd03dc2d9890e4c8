"""One usage ledger, fed by what happened on each request, read by every meter (issue 23 #7):
the status bar's "neurons today", the allocation gauge and the chat's usage agree for a
stopped reply, a gateway cache HIT, demo mode and a daily-allocation refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from shell_helpers import TOKEN, ChatEnv
from window_helpers import until, window

from flarechat.core import figures, ledger, meters
from flarechat.emulator import EmulatorServer
from flarechat.settings.secrets import API_TOKEN
from flarechat.ui.lab.gauges import USED_UP_TEXT
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio(loop_scope="function")

SLOW_TOKENS_PER_SECOND = 15


async def _reply(env: ChatEnv, text: str) -> str:
    reply = env.chat.send(text)
    assert reply is not None
    await env.finished(reply)
    await env.chat.drain()
    return reply


async def _day_read(env: ChatEnv, main: MainWindow) -> ledger.DayUsage:
    """The gauge's day, re-read from the store after everything written was written."""
    lab = main.lab_hooks.lab
    lab.set_usage_source(env.store)
    await lab.drain()
    return lab.day


def _today_in_status_bar(main: MainWindow) -> str:
    return str(main.metrics_label.text())


async def test_a_stopped_reply_adds_its_neurons_and_their_cost(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    emulator.state.set_tokens_per_second(SLOW_TOKENS_PER_SECOND)
    async with window(emulator, tmp_path) as (env, main, _seen):
        reply = env.chat.send("Tell me a long story")
        assert reply is not None
        await env.recorder.wait("turn_text_appended", lambda m, _t: m == reply)
        env.chat.stop()
        data = await env.finished(reply)
        assert data.status == "stopped"
        await env.chat.drain()
        day = await _day_read(env, main)
        tree = await env.store.load_tree(str(env.chat.current_id))
        billed = (tree.get(reply).meta or {})["neurons"]
        assert billed > 0  # the emulator bills the whole reply in its headers
        assert day.neurons == pytest.approx(billed)
        assert day.cost == pytest.approx(billed * ledger.USD_PER_NEURON)
        assert day.priced == 1
        assert meters.cost_text(day.cost) in data.meta_line  # the reply's line says it too
        chat_usage = main.lab_hooks.lab.conversation_usage()
        assert (chat_usage.neurons, chat_usage.cost) == pytest.approx((day.neurons, day.cost))
        assert meters.cost_text(day.cost) in main.lab_hooks.gauge.label.text()
        await until(
            lambda: _today_in_status_bar(main).endswith(
                figures.neurons_text(billed, suffix=" today")
            ),
            "the status bar's neurons today",
        )


async def test_a_gateway_cache_hit_adds_no_neurons(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    settings = {"route": "gateway-url", "gateway_id": "ledger"}
    async with window(emulator, tmp_path, **settings) as (env, main, _seen):
        await _reply(env, "What is a neuron?")
        first = await _day_read(env, main)
        assert first.neurons > 0
        env.chat.new_conversation()  # the same request again: the gateway answers from cache
        again = await _reply(env, "What is a neuron?")
        tree = await env.store.load_tree(str(env.chat.current_id))
        assert (tree.get(again).meta or {}).get("cache_status") == "HIT"
        shown = await env.finished(again)
        assert "0.00 neurons \N{MIDDLE DOT} cache HIT" in shown.meta_line  # as the meters count
        day = await _day_read(env, main)
        assert day.neurons == pytest.approx(first.neurons)
        assert day.cost == pytest.approx(first.cost)
        assert await env.store.neurons_today() == pytest.approx(first.neurons)
        await until(
            lambda: _today_in_status_bar(main).endswith(
                figures.neurons_text(first.neurons, suffix=" today")
            ),
            "the status bar's neurons today",
        )
        assert main.lab_hooks.lab.conversation_usage().neurons == 0.0


async def test_demo_neurons_never_count_in_the_real_accounts_day(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _reply(env, "Billed to my account")
        real = await _day_read(env, main)
        assert real.neurons > 0
        env.workspace.set_tokens({API_TOKEN: None})  # the token is gone: try demo mode
        await env.workspace.use_demo()
        assert env.prefs.demo is not None
        env.chat.new_conversation()
        await _reply(env, "Simulated, billed to nobody")
        demo = await _day_read(env, main)
        assert demo.replies == 1  # in demo mode the gauge reads demo mode's own day
        assert await env.store.neurons_today(demo=True) == pytest.approx(demo.neurons)
        env.workspace.set_tokens({API_TOKEN: TOKEN})  # the account is back: demo mode ends
        await until(lambda: env.prefs.demo is None, "demo mode to end")
        after = await _day_read(env, main)
        assert after.neurons == pytest.approx(real.neurons)
        assert after.replies == 1
        assert await env.store.neurons_today() == pytest.approx(real.neurons)
        assert main.lab_hooks.gauge.bar.value() == round(real.neurons)


async def test_after_a_4006_the_gauge_reads_full_until_the_reset(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _reply(env, "A little usage")
        gauge = main.lab_hooks.gauge
        emulator.state.fail_next(1, code=4006, status=429)
        reply = env.chat.send("Anything left today?")
        assert reply is not None
        await env.recorder.wait("turn_failed", lambda m, *_: m == reply)
        await env.chat.drain()
        day = await _day_read(env, main)
        assert day.used_up
        assert 0 < day.neurons < meters.FREE_DAILY_NEURONS
        await until(lambda: gauge.bar.value() == meters.FREE_DAILY_NEURONS, "a full gauge")
        assert gauge.label.text().startswith(USED_UP_TEXT)
        assert gauge.level == meters.GaugeLevel.RED
        # the next UTC day starts afresh: the refusal was today's
        rows = await env.store.replies_today(
            now=meters.next_reset(main.lab_hooks.lab.now()).timestamp()
        )
        assert not ledger.day_usage(rows, {}, demo=False).used_up

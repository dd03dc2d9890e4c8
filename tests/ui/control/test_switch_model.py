"""The retry banner's Switch model…: picking a model moves the reply held up by capacity."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QWidget
from shell_helpers import MODEL, ChatEnv, slow_policy
from window_helpers import until, window

from flarechat.emulator import EmulatorServer
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio

FindButton = Callable[[QWidget, str], QAbstractButton]
OTHER_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"


def _generation_paths(emulator: EmulatorServer) -> list[str]:
    return [r.path for r in emulator.state.requests if "/ai/run/" in r.path]


def _pick_in_popup(main: MainWindow, model: str) -> None:
    """Type the model's id in the picker's search field and press Enter, as a user would."""
    popup = main.picker.popup
    QTest.keyClicks(popup.search, model)
    QTest.keyClick(popup.search, Qt.Key.Key_Return)


async def _switch_through_the_banner(
    env: ChatEnv, main: MainWindow, find_button: FindButton
) -> None:
    find_button(main.pane.retry_banner, "Switch model").click()
    assert main.picker.popup.isVisible()
    await until(lambda: bool(main.picker.models()), "the model list")
    _pick_in_popup(main, OTHER_MODEL)
    assert not main.picker.popup.isVisible()
    assert env.chat.current_model() == OTHER_MODEL


async def _assert_moved(env: ChatEnv, main: MainWindow, reply_id: str) -> None:
    """The reply finished on the other model, stored with it; the banner is gone."""
    args = await env.recorder.wait(
        "turn_finished", lambda m, d: m == reply_id and d.status == "done"
    )
    assert args[1].content
    assert args[1].model == OTHER_MODEL
    last = _generation_paths(env.emulator)[-1]
    assert OTHER_MODEL in last
    assert not main.pane.retry_banner.isVisible()
    await env.chat.drain()
    stored = (await env.store.load_tree(str(env.chat.current_id))).get(reply_id)
    assert (stored.status, stored.model) == ("done", OTHER_MODEL)
    assert stored.request is not None
    assert stored.request["model"] == OTHER_MODEL
    assert stored.error is None
    assert main.pane.transcript.messages()[-1].model == OTHER_MODEL


async def test_switch_model_while_waiting_to_retry_resends_with_the_new_model(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True, policy=slow_policy()) as (
        env,
        main,
        _seen,
    ):
        emulator.state.hold_slots(MODEL, 600)  # only the first model is busy
        reply_id = env.chat.send("Busy?")
        assert reply_id is not None
        await env.recorder.wait("retry_scheduled")
        assert main.pane.retry_banner.isVisible()
        tried = len(_generation_paths(emulator))
        await _switch_through_the_banner(env, main, find_button)
        await _assert_moved(env, main, reply_id)
        assert len(_generation_paths(emulator)) == tried + 1  # the pending retry never ran
        tree = env.chat.current_tree()
        assert tree is not None
        assert len([m for m in tree.path() if m.role == "assistant"]) == 1


async def test_switch_model_after_the_retry_budget_resends_with_the_new_model(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with window(emulator, tmp_path, reject_if_busy=True) as (env, main, _seen):
        emulator.state.hold_slots(MODEL, 600)
        reply_id = env.chat.send("Busy again?")
        assert reply_id is not None
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "capacity")
        assert main.pane.retry_banner.isVisible()
        assert all(MODEL in path for path in _generation_paths(emulator))
        await _switch_through_the_banner(env, main, find_button)
        await _assert_moved(env, main, reply_id)


async def test_picking_a_model_with_no_reply_retrying_only_changes_the_model(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        reply_id = env.chat.send("Hello")
        assert reply_id is not None
        await env.finished(reply_id)
        await env.chat.drain()
        sent = len(_generation_paths(emulator))
        started = len(env.recorder.args("turn_started"))
        main.picker.open_popup()
        await until(lambda: bool(main.picker.models()), "the model list")
        _pick_in_popup(main, OTHER_MODEL)
        await env.chat.drain()
        assert env.chat.current_model() == OTHER_MODEL
        assert len(env.recorder.args("turn_started")) == started
        assert len(_generation_paths(emulator)) == sent


async def test_switch_model_after_model_unavailable_resends_with_the_new_model(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        emulator.state.fail_next(1, code=5007, status=400, model=MODEL)
        reply_id = env.chat.send("Is this model there?")
        assert reply_id is not None
        failed = await env.recorder.wait("turn_failed")
        assert failed[:2] == (reply_id, "model")
        notice = main.pane.notice_banner
        assert notice.isVisible()
        find_button(notice, "Switch model").click()
        assert main.picker.popup.isVisible()
        await until(lambda: bool(main.picker.models()), "the model list")
        _pick_in_popup(main, OTHER_MODEL)
        await _assert_moved(env, main, reply_id)

"""The compare window over a real ChatController against the emulator: columns stream side by
side, one waits for capacity with its own banner, blind votes reveal the models and feed the
leaderboard, the winner's branch becomes the chat's path, and a run exports without the token."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect, QSize, SignalInstance
from PySide6.QtWidgets import QAbstractButton, QApplication, QMessageBox, QTableWidgetItem, QWidget
from shell_helpers import MODEL, TOKEN, ChatEnv, chat_env, slow_policy
from window_helpers import until

from flarechat.api.models import ModelInfo
from flarechat.core.lab.compare import CompareRun
from flarechat.core.lab.votes import Verdict, Vote, VoteBook
from flarechat.emulator import EmulatorServer
from flarechat.ui.lab.compare_controller import CompareController
from flarechat.ui.lab.compare_view import (
    DISCARD_LABEL,
    WINDOW_SIZE,
    CompareWindow,
    open_compare,
    opening_geometry,
)
from flarechat.ui.lab.leaderboard_dialog import COLUMNS, LeaderboardDialog

pytestmark = pytest.mark.asyncio

BUSY = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
FindButton = Callable[[QWidget, str], QAbstractButton]
WAIT = 20.0
FAST = 1000.0


def _next(
    signal: SignalInstance, match: Callable[..., bool] = lambda *_: True
) -> Coroutine[Any, Any, Any]:
    """The next emission matching ``match``: listening starts now, awaiting may come later."""
    future: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()

    def catch(*args: Any) -> None:
        if not future.done() and match(*args):
            future.set_result(args)

    signal.connect(catch)
    return asyncio.wait_for(future, WAIT)


async def _idle(controller: CompareController) -> None:
    if controller.busy:
        await _next(controller.busy_changed, lambda busy: not busy)
    assert controller.round_done()


@asynccontextmanager
async def _compare(
    emulator: EmulatorServer, tmp_path: Path, **settings: Any
) -> AsyncIterator[tuple[ChatEnv, CompareController, CompareWindow]]:
    emulator.state.set_tokens_per_second(FAST)  # replies of a few hundred tokens, quickly
    async with chat_env(emulator, tmp_path / "profile", **settings) as env:
        catalogue = {
            m: ModelInfo(m, price_input_per_m=0.3, price_output_per_m=0.6) for m in (MODEL, BUSY)
        }
        controller = CompareController(
            env.chat, votes=VoteBook(tmp_path / "votes.json"), catalogue=catalogue,
            rng=random.Random(7),
        )  # fmt: skip
        window = CompareWindow(
            controller, models=list(catalogue.values()), current_model=MODEL,
            votes=VoteBook(tmp_path / "votes.json"),
        )  # fmt: skip
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        before = app.quitOnLastWindowClosed()
        app.setQuitOnLastWindowClosed(False)  # as in the app: closing must not stop the loop
        window.show()
        try:
            yield env, controller, window
        finally:
            window.close()
            await controller.shutdown()
            app.setQuitOnLastWindowClosed(before)


def _send(window: CompareWindow, text: str) -> None:
    window.prompt.setPlainText(text)
    window.send_button.click()


async def test_a_column_waiting_for_capacity_has_its_own_banner_while_the_others_finish(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with _compare(emulator, tmp_path, policy=slow_policy(), reject_if_busy=True) as (
        env, controller, window,
    ):  # fmt: skip
        window.count_box.setValue(3)
        assert len(window.columns) == 3
        window.columns[0].picker.set_current(BUSY)
        window.columns[1].picker.set_current(MODEL)
        window.columns[2].picker.set_current(MODEL)
        window.columns[2].max_tokens.setValue(64)
        emulator.state.hold_slots(BUSY, 600)
        retry = asyncio.ensure_future(_next(controller.column_retry, lambda c, *_: c == 0))
        done = [
            asyncio.ensure_future(_next(controller.column_finished, lambda c, *_, i=i: c == i))
            for i in (1, 2)
        ]
        _send(window, "Name a colour")
        assert not window.send_button.isEnabled()
        await retry
        first, *others = window.columns
        assert first.retry_banner.isVisibleTo(window)
        assert "llama-3.3-70b" in first.retry_banner.title
        assert not any(c.retry_banner.isVisibleTo(window) for c in others)
        for future, column in zip(done, others, strict=True):
            _col, status, _metrics = await future
            assert status == "done"
            assert column.reply_text().strip()
            assert "TTFT" in column.metrics.text()
            assert "neurons" in column.metrics.text()
            assert "(estimate)" in column.metrics.text()
        assert env.chat.is_running(controller.run.rounds[0].replies[0])  # type: ignore[union-attr]
        assert controller.busy
        assert (controller.message(2).request or {})["params"]["max_tokens"] == 64  # type: ignore[union-attr]
        cancelled = asyncio.ensure_future(_next(controller.column_finished, lambda c, *_: c == 0))
        find_button(first, "Cancel").click()
        _col, status, _metrics = await cancelled
        assert status == "failed"
        await _idle(controller)
        assert window.send_button.isEnabled()
        assert first.status.text() == "Failed"


async def test_blind_vote_reveals_the_models_and_the_winner_continues_in_the_chat(
    emulator: EmulatorServer, tmp_path: Path, find_button: FindButton
) -> None:
    async with _compare(emulator, tmp_path) as (env, controller, window):
        window.columns[0].picker.set_current(MODEL)
        window.columns[1].picker.set_current(BUSY)
        window.blind_box.setChecked(True)
        _send(window, "Write a haiku about the sea")
        run = controller.run
        assert run is not None
        titles = [c.title.text() for c in window.columns]
        assert titles == ["Model A", "Model B"]
        assert not any(c.picker.isVisibleTo(window) for c in window.columns)
        assert not window.vote_bar.isVisibleTo(window)
        await _idle(controller)
        assert not any(c.code_button.isEnabled() for c in window.columns)  # it names the model
        for column in window.columns:  # cost and speed tell the models apart: not yet
            footer = column.metrics.text()
            assert "tokens" in footer
            assert not any(figure in footer for figure in ("$", "TTFT", "tok/s", "neurons"))
        assert window.vote_bar.isVisibleTo(window)
        assert not any(c.continue_button.isEnabled() for c in window.columns)
        find_button(window.vote_bar, "B is better").click()
        await controller.drain()
        (vote,) = VoteBook(tmp_path / "votes.json").load()
        assert (vote.verdict, vote.winner) == (Verdict.BEST, 1)
        assert list(vote.models) == [c.model for c in run.columns]
        assert vote.message_ids == tuple(run.rounds[0].replies)
        assert not window.vote_bar.isVisibleTo(window)
        assert window.columns[1].title.text().endswith(run.columns[1].model.rsplit("/", 1)[-1])
        assert "B is best" in window.note.text()
        assert all("TTFT" in c.metrics.text() and "$" in c.metrics.text() for c in window.columns)
        winner = run.rounds[0].replies[1]
        continued = asyncio.ensure_future(_next(controller.continued))
        find_button(window.columns[1], "Continue with this one").click()
        (conversation_id,) = await continued
        assert env.chat.current_id == conversation_id
        assert env.chat.current_tree().path()[-1].id == winner  # type: ignore[union-attr]
        opened = env.recorder.args("conversation_opened")[-1]
        assert [m.id for m in opened[1]][-1] == winner
        assert not window.isVisible()


async def test_follow_ups_go_to_every_column_and_export_holds_no_token(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (env, controller, window):
        window.columns[1].picker.set_current(BUSY)
        _send(window, "Hello")
        await _idle(controller)
        _send(window, "And once more")
        await _idle(controller)
        run = controller.run
        assert run is not None
        assert len(run.rounds) == 2
        tree = env.chat.current_tree()
        assert tree is not None
        for column, widget in enumerate(window.columns):
            follow = tree.get(run.rounds[1].replies[column])
            user = tree.get(follow.parent_id or "")
            assert (user.content, user.parent_id) == (
                "And once more",
                run.rounds[0].replies[column],
            )
            assert widget.rounds_shown == 2
            assert "And once more" in widget.reply_text()
        code = asyncio.ensure_future(_next(window.view_code_requested))
        window.columns[1].code_button.click()
        reply_id, code_tree = await code
        assert (reply_id, code_tree) == (run.rounds[1].replies[1], tree)
        path = tmp_path / "run.json"
        exported = asyncio.ensure_future(_next(controller.exported))
        controller.export(path, "json")
        await exported
        text = path.read_text(encoding="utf-8")
        assert TOKEN not in text
        document = json.loads(text)
        assert [r["prompt"] for r in document["rounds"]] == ["Hello", "And once more"]
        assert [c["model"] for c in document["columns"]] == [MODEL, BUSY]
        table = tmp_path / "run.csv"
        exported = asyncio.ensure_future(_next(controller.exported))
        controller.export(table, "csv")
        await exported
        assert TOKEN not in table.read_text(encoding="utf-8")
        assert table.read_text(encoding="utf-8").count("\n") >= 5  # header + 2 rounds x 2


def _text(cell: QTableWidgetItem | None) -> str:
    assert cell is not None
    return cell.text()


async def test_the_leaderboard_ranks_the_votes_and_exports_them(tmp_path: Path) -> None:
    book = VoteBook(tmp_path / "votes.json")
    for _ in range(3):
        book.add(Vote(("good", "bad"), Verdict.BEST, winner=0))
    book.add(Vote(("bad", "good"), Verdict.TIE))
    dialog = LeaderboardDialog(book)
    dialog.reload()
    await dialog.drain()
    assert dialog.table.rowCount() == 2
    header = [_text(dialog.table.horizontalHeaderItem(i)) for i in range(len(COLUMNS))]
    assert header[:4] == ["#", "Model", "Rating", "± 95 %"]
    assert _text(dialog.table.item(0, 1)) == "good"
    assert _text(dialog.table.item(0, 5)) == "4"
    assert dialog.status.text() == "4 votes"
    dialog.export(tmp_path / "board.csv", "csv")
    dialog.export(tmp_path / "votes-export.json", "votes")
    await dialog.drain()
    assert (
        (tmp_path / "board.csv").read_text(encoding="utf-8").splitlines()[1].startswith("1,good,")
    )
    other = VoteBook(tmp_path / "other.json")
    other.add(Vote(("x", "y"), Verdict.ALL_BAD))
    second = LeaderboardDialog(other)
    second.import_votes(tmp_path / "votes-export.json")
    await second.drain()
    assert second.status.text() == "Imported 4 new votes."
    assert {row.model for row in second.standings} == {"good", "bad", "x", "y"}


async def test_a_template_runs_over_rows_one_column_per_row(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (env, controller, window):
        window.prompt.setPlainText("Describe {{city}} in one line")
        assert window.rows.isVisible()  # variables: the rows box appears
        window.rows.setPlainText("Paris\nRome\nOslo")
        window.send()
        await _idle(controller)
        run = controller.run
        assert run is not None
        assert len(window.columns) == 3  # the column count follows the rows
        tree = env.chat.current_tree()
        assert tree is not None
        users = [tree.get(tree.get(r).parent_id or "").content for r in run.rounds[0].replies]
        assert users == [f"Describe {city} in one line" for city in ("Paris", "Rome", "Oslo")]
        assert not window.rows.isVisible()  # follow-ups go to every column as usual


async def test_bad_rows_say_what_is_wrong_and_send_nothing(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (_env, controller, window):
        window.prompt.setPlainText("Compare {{a}} and {{b}}")
        window.rows.setPlainText("x,y\nonly-one")
        window.send()
        assert controller.run is None or not controller.run.rounds
        assert "Row 2" in window.note.text()


REASONING_MODEL = "@cf/qwen/qwq-32b"


def _run(controller: CompareController) -> CompareRun | None:
    """Read through a call: mypy keeps ``controller.run`` narrowed across a click."""
    return controller.run


async def test_a_reasoning_models_column_shows_its_thinking_and_a_rendered_reply(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (_env, controller, window):
        window.columns[1].picker.set_current(REASONING_MODEL)
        thinking = asyncio.ensure_future(_next(controller.column_reasoning, lambda c, _t: c == 1))
        _send(window, "Why do requests queue?")
        await thinking
        await _idle(controller)
        view = window.columns[1].round_views()[-1]
        assert view.reasoning.isVisibleTo(window)
        assert 'The user wrote "Why do requests queue?"' in view.reasoning.text
        shown = view.reply.plain_text()
        assert "That is all there is to it." in shown
        assert "## " not in shown
        assert "```" not in shown
        assert not window.columns[0].round_views()[-1].reasoning.isVisibleTo(window)


def _widths(window: CompareWindow) -> list[int]:
    return [column.width() for column in window.columns]


async def test_columns_share_the_width_equally(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with _compare(emulator, tmp_path) as (_env, _controller, window):
        window.count_box.setValue(3)
        window.columns[0].picker.set_current(BUSY)  # the longest name: its header is widest
        window.columns[1].preset_box.hide()
        await until(lambda: all(c.isVisible() for c in window.columns), "three columns")
        widths = _widths(window)
        assert max(widths) - min(widths) <= 1, widths
        window.resize(window.width() - 90, window.height())
        await until(lambda: max(_widths(window)) - min(_widths(window)) <= 1, "equal widths")
        window.count_box.setValue(2)
        assert max(_widths(window)) - min(_widths(window)) <= 1, _widths(window)


async def test_the_window_opens_no_larger_than_the_main_window_nor_the_screen(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)  # as in the app: closing must not stop the loop
    async with chat_env(emulator, tmp_path / "profile") as env:
        main = QWidget()
        main.resize(860, 560)  # smaller than the 1240 x 800 the window wants
        main.show()
        window = open_compare(main, env.chat, models=[ModelInfo(MODEL)])
        try:
            area = window.screen().availableGeometry()
            main_frame, frame = main.frameGeometry(), window.frameGeometry()
            assert frame.width() <= min(main_frame.width(), area.width())
            assert frame.height() <= min(main_frame.height(), area.height())
            assert area.contains(frame)
            assert window.width() < WINDOW_SIZE[0]  # not its own wish of 1240 x 800
        finally:
            window.close()
            await window.controller.shutdown()
            main.close()
            app.setQuitOnLastWindowClosed(before)


async def test_the_opening_geometry_stays_inside_the_screen() -> None:
    screen = QApplication.primaryScreen()
    area = screen.availableGeometry()
    huge = QRect(area.left() - 50, area.top() - 50, area.width() * 2, area.height() * 2)
    rect = opening_geometry(QSize(*WINDOW_SIZE), over=huge, screen=screen)
    assert area.contains(rect)
    assert rect.size() == QSize(*WINDOW_SIZE).boundedTo(area.size())
    small = QRect(area.left() + 10, area.top() + 10, 600, 400)
    assert opening_geometry(QSize(*WINDOW_SIZE), over=small, screen=screen) == small


async def test_new_compare_asks_before_clearing_a_finished_run(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (_env, controller, window):
        assert window.new_compare() is None  # nothing run yet: nothing to lose, no question
        _send(window, "Hello")
        await _idle(controller)
        box = window.new_compare()
        assert box is not None
        assert box.isVisible()
        assert "not exported" in box.informativeText()
        box.button(QMessageBox.StandardButton.Cancel).click()
        assert controller.run is not None
        assert controller.run.rounds  # kept
        assert window.columns[0].rounds_shown == 1
        box = window.new_compare()
        assert box is not None
        next(b for b in box.buttons() if b.text() == DISCARD_LABEL).click()
        assert _run(controller) is None
        assert all(c.rounds_shown == 0 for c in window.columns)


async def test_new_compare_does_not_ask_once_the_run_was_exported(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (_env, controller, window):
        _send(window, "Hello")
        await _idle(controller)
        exported = asyncio.ensure_future(_next(controller.exported))
        controller.export(tmp_path / "run.json", "json")
        await exported
        assert window.new_compare() is None
        assert _run(controller) is None


async def test_new_compare_asks_while_a_blind_vote_is_open_even_when_exported(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with _compare(emulator, tmp_path) as (_env, controller, window):
        window.blind_box.setChecked(True)
        _send(window, "Hello")
        await _idle(controller)
        exported = asyncio.ensure_future(_next(controller.exported))
        controller.export(tmp_path / "run.csv", "csv")
        await exported
        box = window.new_compare()
        assert box is not None
        assert "vote" in box.informativeText()
        assert "not exported" not in box.informativeText()
        box.button(QMessageBox.StandardButton.Cancel).click()

"""The real window against local faults and hostile content: a locked, read-only database, a
1 MB paste, quitting mid-stream and mid-countdown, and model output full of HTML."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from drive import DB_NAME, assert_plain, faulty_window, saved
from PySide6.QtGui import QDesktopServices
from shell_helpers import slow_policy

from flarechat.emulator import EmulatorServer
from support.hostile import HostileServer, answer, http_head, sse_reply

pytestmark = pytest.mark.asyncio

PROMPT = "Is anything lost?"
MEGABYTE = 1024 * 1024


async def test_a_read_only_database_says_so_and_the_chat_goes_on(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged, read_only=True) as run:
        outcome = await run.ask(PROMPT)
        assert outcome.data.status == "done"
        await run.env.recorder.wait("store_problem")
        title, text = run.banner()
        assert title == "Can't save to the chat database"
        assert "read-only" in text
        assert_plain(title, text)
        assert ("user", PROMPT, "done") in run.shown()  # kept on screen while unsaved


@pytest.mark.slow
async def test_a_database_locked_by_another_instance_is_written_once_it_is_free(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged) as run:
        other = sqlite3.connect(isolated_profile / DB_NAME, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # another instance holds the write lock
            outcome = await run.ask(PROMPT)
            assert outcome.data.status == "done"
            problem = await run.env.recorder.wait("store_problem")
            assert_plain(problem[0])
            assert ("user", PROMPT, "done") in run.shown()
        finally:
            other.execute("ROLLBACK")
            other.close()
        second = await run.ask("And after the lock is gone?")
        assert second.data.status == "done"
        rows = await run.settle()
        assert ("user", PROMPT, "done") in rows  # kept in memory, written on recovery
        assert ("assistant", outcome.data.content, "done") in rows
        assert ("assistant", second.data.content, "done") in rows


async def test_a_one_megabyte_paste_is_saved_whole_and_the_window_stays_responsive(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    paste = ("All work and no play makes a long paste. " * (MEGABYTE // 41 + 1))[:MEGABYTE]
    async with faulty_window(emulator, isolated_profile, logged) as run:
        outcome = await run.ask(paste)
        assert outcome.data.status in ("done", "failed")
        if outcome.kind is not None:
            assert_plain(*run.banner())
        rows = await run.settle()
        assert rows[0] == ("user", paste, "done")
        assert run.shown()[0][1] == paste


async def test_quitting_while_a_reply_streams_keeps_the_partial_reply(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    emulator.state.tokens_per_second = 20
    async with faulty_window(emulator, isolated_profile, logged) as run:
        reply_id = await run.send(PROMPT)
        await run.env.recorder.wait("turn_text_appended", lambda m, _t: m == reply_id)
        await run.env.chat.shutdown()  # what closing the window does
    rows = saved(isolated_profile / DB_NAME)
    assert rows[0] == ("user", PROMPT, "done")
    role, content, status = rows[-1]
    assert (role, status) == ("assistant", "stopped")
    assert content


async def test_quitting_during_a_retry_countdown_ends_cleanly(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with faulty_window(emulator, isolated_profile, logged, policy=slow_policy()) as run:
        emulator.state.fail_next(1, code=3040, status=429)
        reply_id = await run.send(PROMPT)
        await run.env.recorder.wait("retry_scheduled", lambda m, *_: m == reply_id)
        assert run.main.pane.retry_banner.isVisible()
        await asyncio.wait_for(run.env.chat.shutdown(), 10.0)  # never waits out the countdown
    rows = saved(isolated_profile / DB_NAME)
    assert rows[0] == ("user", PROMPT, "done")
    assert rows[-1][0] == "assistant"
    assert rows[-1][2] in ("stopped", "failed")
    generations = [r for r in emulator.state.requests if "/ai/run/" in r.path]
    assert len(generations) == 1  # the retry never went out


async def test_two_windows_on_one_database_both_save(
    emulator: EmulatorServer, isolated_profile: Path, logged: pytest.LogCaptureFixture
) -> None:
    async with (
        faulty_window(emulator, isolated_profile, logged) as first,
        faulty_window(emulator, isolated_profile, logged) as second,
    ):
        one, two = await asyncio.gather(first.ask("From the first"), second.ask("From the 2nd"))
        assert one.data.status == two.data.status == "done"
        await first.env.chat.drain()
        await second.env.chat.drain()
        rows = saved(isolated_profile / DB_NAME)
        assert ("user", "From the first", "done") in rows
        assert ("user", "From the 2nd", "done") in rows


# -- hostile content ----------------------------------------------------------------------------


async def test_html_in_model_output_is_inert(
    emulator: EmulatorServer,
    isolated_profile: Path,
    logged: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    bait_reply = http_head(200, {"content-length": "0"})
    with HostileServer(answer(bait_reply)) as bait:
        parts = (
            "Look: <img src='" + bait.url + "/img.png'> and ",
            "<script>window.location='" + bait.url + "/js'</script> and ",
            "![remote](" + bait.url + "/md.png) and ",
            "<iframe src='" + bait.url + "/frame'></iframe> and ",
            "[a link](" + bait.url + "/link) done.",
        )
        with HostileServer(answer(sse_reply(*parts))) as model:
            options = {"api_base": model.api_base}
            async with faulty_window(emulator, isolated_profile, logged, **options) as run:
                outcome = await run.ask("Show me some HTML")
                assert outcome.data.status == "done"
                await run.env.chat.drain()
                view = run.main.pane.transcript
                await asyncio.sleep(0)  # one more turn of the loop: the final paint is queued
                assert view.messages()[-1].content == "".join(parts)
        assert bait.connections == 0, "a remote resource was fetched"
    assert opened == []  # no link opens without a click

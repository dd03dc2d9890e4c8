"""Switching: click a conversation in the sidebar until its last page is painted.

A profile of 200 conversations (40 messages each, the newest 5,000) plus an empty one, in the
real window (gui.session). Each open is a real mouse click on the sidebar row; it ends when
the chat controller has opened it, the transcript has filled its page and that page has been
painted. Targets are absolute (ms); the ratio is against opening the empty conversation.
- 40 messages, 5,000 messages (with the GUI thread's longest stall and the RSS growth over the
  empty one), a search hit 4,000 messages back, and wheel-scrolling from the bottom up: all
  COLD (the conversations kept in memory since they were left are dropped first, through
  ``ChatController.forget_left``), as a search hit usually lands in a chat not open lately.
- Switching back to the 5,000-message conversation just left (kept in memory by the book).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QListWidget

from common import Heartbeat, Result, median
from flarechat.emulator import EmulatorServer
from gui import PaintWaiter, run_in_app, session, settle
from profiles import HOME_ENV, make_profile

__all__ = ["run"]

REPEATS, QUICK_REPEATS = 5, 2
CONVERSATIONS, MESSAGES, LAST_MESSAGES = 200, 40, 5_000
JUMP_BACK = 4_000
EMPTY_TITLE = "Empty"
TARGET_SMALL_MS, TARGET_LARGE_MS, TARGET_JUMP_MS = 100.0, 200.0, 150.0
TARGET_REOPEN_MS = 100.0
TARGET_LARGE_STALL_MS, TARGET_GROWTH_MIB, TARGET_WHEEL_STALL_MS = 50.0, 100.0, 33.0
#: Wheel notches (120 units = 3 lines) sent one per frame; quick mode sends fewer.
WHEEL_STEPS, QUICK_WHEEL_STEPS = 600, 150
FRAME_S = 0.016
POLL_S = 0.001
WAIT_S = 30.0
ROLE_ID = Qt.ItemDataRole.UserRole


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1]) / 1024
    return float("nan")


def _add_empty(home: Path) -> None:
    import os

    from flarechat.core.conversation import Conversation, ConversationTree, new_id
    from flarechat.core.store import ChatStore, default_path

    os.environ[HOME_ENV] = str(home)
    with ChatStore(default_path()) as store:
        store.insert_trees([ConversationTree(Conversation(id=new_id(), title=EMPTY_TITLE))])


async def _until(condition: Any, what: str) -> None:
    deadline = time.perf_counter() + WAIT_S
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(POLL_S)


class Opener:
    """Clicks sidebar rows and times them to the painted page."""

    def __init__(self, shown: Any, heartbeat: Heartbeat) -> None:
        self.shown, self.heartbeat = shown, heartbeat
        self.transcript = shown.window.pane.transcript
        self.viewport = self.transcript.scroll_area.viewport()
        # The pane, not the transcript: an empty conversation shows a welcome panel instead.
        self.waiter = PaintWaiter(shown.window.pane)
        self.opened: str | None = None
        shown.chat.conversation_opened.connect(self._on_opened)

    def _on_opened(self, conversation_id: str, _path: list[Any]) -> None:
        self.opened = conversation_id

    def _shows(self, conversation_id: str) -> bool:
        return self.opened == conversation_id and not self.transcript.is_loading()

    async def titles(self, *wanted: str) -> dict[str, str]:
        """Conversation ids by title, once the sidebar lists every ``wanted`` title."""
        await _until(lambda: set(wanted) <= set(self.ids_by_size()), "the sidebar to fill")
        return self.ids_by_size()

    def ids_by_size(self) -> dict[str, str]:
        """Conversation ids by title from the sidebar's list."""
        rows: QListWidget = self.shown.window.sidebar.conversations
        found: dict[str, str] = {}
        for row in range(rows.count()):
            item = rows.item(row)
            if item.data(ROLE_ID):
                found[item.text().split("\n")[0]] = item.data(ROLE_ID)
        return found

    def _click(self, conversation_id: str) -> None:
        rows: QListWidget = self.shown.window.sidebar.conversations
        for row in range(rows.count()):
            item = rows.item(row)
            if item.data(ROLE_ID) == conversation_id:
                rows.scrollToItem(item)
                centre = rows.visualItemRect(item).center()
                QTest.mouseClick(rows.viewport(), Qt.MouseButton.LeftButton, pos=centre)
                return
        raise LookupError(f"{conversation_id} is not in the sidebar")

    def forget_left(self) -> None:
        """The next open is cold: nothing is kept in memory since it was left."""
        self.shown.chat.forget_left()

    async def open(self, conversation_id: str) -> tuple[float, float]:
        """(ms click -> painted page, longest stall ms)."""
        await settle()
        self.opened = None
        start = time.perf_counter()
        self._click(conversation_id)
        await _until(lambda: self._shows(conversation_id), "the conversation to open")
        end = await self.waiter.painted()
        return (end - start) * 1000, self.heartbeat.longest(start, end) * 1000

    async def jump(self, conversation_id: str, message_id: str) -> float:
        """ms from activating a search hit to the painted message."""
        await settle()
        start = time.perf_counter()
        self.shown.window.sidebar.search_hit_activated.emit(conversation_id, message_id)
        await _until(
            lambda: (
                self.transcript.view_for(message_id) is not None
                and not self.transcript.is_loading()
            ),
            "the search hit to show",
        )
        end = await self.waiter.painted()
        return (end - start) * 1000

    async def wheel_to_top(self, steps: int) -> tuple[float, int]:
        """(longest stall ms, notches sent) wheeling up one notch a frame to the top."""
        await settle()
        bar = self.transcript.scroll_area.verticalScrollBar()
        start = time.perf_counter()
        sent = 0
        while sent < steps and not self._at_top(bar.value() == bar.minimum()):
            pos = QPointF(self.viewport.width() / 2, self.viewport.height() / 2)
            event = QWheelEvent(
                pos,
                self.viewport.mapToGlobal(pos),
                QPoint(),
                QPoint(0, 120),
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
                Qt.ScrollPhase.NoScrollPhase,
                False,
            )
            QApplication.sendEvent(self.viewport, event)
            sent += 1
            await asyncio.sleep(FRAME_S)
        end = await self.waiter.painted()
        return self.heartbeat.longest(start, end) * 1000, sent

    first_id = ""

    def _at_top(self, bar_at_top: bool) -> bool:
        """The first message is loaded and the view is scrolled all the way up."""
        loaded = self.transcript.view_for(self.first_id) is not None
        return bar_at_top and loaded and not self.transcript.is_loading()


async def _measure(repeats: int, profile: Path, *, wheel_steps: int) -> list[Result]:
    from flarechat.core.store import ChatStore, default_path

    with EmulatorServer() as emu:
        async with session(profile, emu) as shown:
            await settle(0.5)
            heartbeat = Heartbeat()
            opener = Opener(shown, heartbeat)
            titles = await opener.titles(
                EMPTY_TITLE, f"Conversation {CONVERSATIONS}", f"Conversation {CONVERSATIONS - 1}"
            )
            empty = titles[EMPTY_TITLE]
            large = titles[f"Conversation {CONVERSATIONS}"]
            small = titles[f"Conversation {CONVERSATIONS - 1}"]
            with ChatStore(default_path()) as store:
                path = store.load_tree(large).path()
            target = path[max(0, len(path) - 1 - JUMP_BACK)].id
            opener.first_id = path[0].id
            await opener.open(empty)
            await opener.open(large)
            rows: dict[str, list[float]] = {
                k: [] for k in ("empty", "small", "large", "stall", "growth", "jump", "reopen")
            }
            for _ in range(repeats):
                opener.forget_left()
                rows["empty"].append((await opener.open(empty))[0])
                await settle(0.3)
                before = _rss_mib()
                rows["small"].append((await opener.open(small))[0])
                opener.forget_left()
                took, stall = await opener.open(large)
                await settle(0.3)
                rows["large"].append(took)
                rows["stall"].append(stall)
                rows["growth"].append(_rss_mib() - before)
                await opener.open(small)
                opener.forget_left()
                rows["jump"].append(await opener.jump(large, target))
                await opener.open(small)  # the large one was just left: kept in memory
                rows["reopen"].append((await opener.open(large))[0])
            await opener.open(small)  # the hit left the large one current: a click must change it
            await opener.open(large)
            wheel_stall, notches = await opener.wheel_to_top(wheel_steps)
            heartbeat.stop()
    base = median(rows["empty"])
    note = f"median of {repeats}; baseline: opening an empty conversation"
    return [
        Result(
            "switching.open_40",
            median(rows["small"]),
            base,
            TARGET_SMALL_MS,
            "ms",
            check="value",
            note=note,
        ),
        Result(
            "switching.open_5000",
            median(rows["large"]),
            base,
            TARGET_LARGE_MS,
            "ms",
            check="value",
            note=note,
        ),
        Result(
            "switching.open_5000_stall",
            median(rows["stall"]),
            base,
            TARGET_LARGE_STALL_MS,
            "ms",
            check="value",
            note="5 ms heartbeat; " + note,
        ),
        Result(
            "switching.open_5000_rss_growth",
            median(rows["growth"]),
            0.0,
            TARGET_GROWTH_MIB,
            "MiB",
            check="value",
            note="VmRSS after the 5,000 open minus after the empty open (no ratio)",
        ),
        Result(
            "switching.jump_4000_back",
            median(rows["jump"]),
            base,
            TARGET_JUMP_MS,
            "ms",
            check="value",
            note=f"search hit {JUMP_BACK:,} back; " + note,
        ),
        Result(
            "switching.reopen_5000",
            median(rows["reopen"]),
            base,
            TARGET_REOPEN_MS,
            "ms",
            check="value",
            note="back to the 5,000 just left (kept in memory); " + note,
        ),
        Result(
            "switching.wheel_to_top_stall",
            wheel_stall,
            base,
            TARGET_WHEEL_STALL_MS,
            "ms",
            check="value",
            note=f"longest stall over {notches} wheel notches, one a frame",
        ),
    ]


def run(quick: bool) -> list[Result]:
    repeats = QUICK_REPEATS if quick else REPEATS
    with tempfile.TemporaryDirectory() as home:
        make_profile(
            Path(home), conversations=CONVERSATIONS, messages=MESSAGES, last_messages=LAST_MESSAGES
        )
        _add_empty(Path(home))
        steps = QUICK_WHEEL_STEPS if quick else WHEEL_STEPS
        return run_in_app(lambda: _measure(repeats, Path(home), wheel_steps=steps))

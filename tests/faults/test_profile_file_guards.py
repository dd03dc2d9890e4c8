"""The lab's file and the votes file have the settings file's guards (issue 25 items 1-3): a
file from a newer Flarechat is read but never rewritten, nothing is written before the file
was read, and a damaged file is kept aside with a message the user sees, never lost."""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget
from shell_helpers import MODEL, chat_env
from window_helpers import until, window

from flarechat.api.models import ModelInfo
from flarechat.core.lab.library import LabLibrary
from flarechat.core.lab.presets import Preset
from flarechat.core.lab.storage import LAB_FILENAME, LAB_SCHEMA_VERSION, LabStore
from flarechat.core.lab.votes import VOTES_FORMAT, VOTES_VERSION, VoteBook
from flarechat.emulator import EmulatorServer
from flarechat.ui.lab.compare_controller import CompareController
from flarechat.ui.lab.compare_view import CompareWindow
from flarechat.ui.lab.controller import LabController

pytestmark = pytest.mark.asyncio

OTHER = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"


def _click(root: QWidget, accessible_name: str) -> None:
    (button,) = [
        b
        for b in root.findChildren(QAbstractButton)
        if b.accessibleName() == accessible_name and b.isVisibleTo(root)
    ]
    button.click()


def _preset(number: int) -> dict[str, object]:
    return {
        "id": f"p{number}",
        "name": f"Preset {number}",
        "model": MODEL,
        "params": {"temperature": 0.5},
        "system_prompt": f"You are helper number {number}.",
    }


# -- item 1: a lab file from a newer Flarechat -------------------------------------------------


async def test_a_newer_lab_file_is_read_never_rewritten_and_the_window_says_so(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    path = isolated_profile / "config" / LAB_FILENAME
    path.parent.mkdir(parents=True, exist_ok=True)
    newer = {
        "schema_version": LAB_SCHEMA_VERSION + 1,
        "presets": [{**_preset(1), "colour": "teal"}],  # a field this version does not know
        "prompts": [],
        "templates": [],
        "folders": [{"name": "Work", "presets": ["p1"]}],
    }
    path.write_text(json.dumps(newer), encoding="utf-8")
    before = path.read_bytes()
    async with window(emulator, tmp_path) as (_env, main, _seen):
        lab = main.lab_hooks.lab
        await until(lambda: [p.id for p in lab.presets()] == ["p1"], "the lab file to be read")
        assert "newer Flarechat" in main.statusBar().currentMessage()
        lab.save_preset("Mine")
        await lab.drain()
        assert "not saved" in main.statusBar().currentMessage()
        assert [p.name for p in lab.presets()] == ["Preset 1", "Mine"]  # kept in the session
    assert path.read_bytes() == before


# -- item 2: a save while the file is still being read ----------------------------------------


class _SlowLabStore(LabStore):
    """A real lab file whose read is held until the test lets it go (a large file's read,
    made as long as the test needs)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.release = threading.Event()

    def load(self) -> LabLibrary:
        assert self.release.wait(30), "the test never let the read finish"
        return super().load()


async def test_a_preset_saved_while_the_lab_file_loads_joins_it_and_loses_nothing(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    path = isolated_profile / "config" / LAB_FILENAME
    path.parent.mkdir(parents=True, exist_ok=True)
    many = [_preset(n) for n in range(1, 2001)]
    doc = {"schema_version": 1, "presets": many, "prompts": [], "templates": []}
    path.write_text(json.dumps(doc), encoding="utf-8")
    store = _SlowLabStore(path)
    async with chat_env(emulator, tmp_path) as env:
        lab = LabController(chat=env.chat, prefs=env.prefs, store=store)
        env.chat.new_conversation()
        lab.start()  # the read begins on a worker thread, and is held there
        saved = lab.save_preset("Made while loading")
        assert saved is not None
        # Room for a save that does not wait for the read (the fault) to reach the disk;
        # the guarded controller writes nothing in it.
        await asyncio.sleep(0.3)
        assert json.loads(path.read_text(encoding="utf-8"))["presets"] == many
        store.release.set()
        await lab.drain()
        assert len(lab.presets()) == len(many) + 1
        await lab.shutdown()
    names = [p.name for p in LabStore(path).load().presets]
    assert names == [p["name"] for p in many] + ["Made while loading"]


# -- item 3: a damaged or newer votes file ------------------------------------------------------


@asynccontextmanager
async def _blind_compare(
    emulator: EmulatorServer, tmp_path: Path, votes: VoteBook
) -> AsyncIterator[tuple[CompareController, CompareWindow]]:
    emulator.state.set_tokens_per_second(1000.0)
    async with chat_env(emulator, tmp_path / "chat") as env:
        catalogue = {m: ModelInfo(m) for m in (MODEL, OTHER)}
        controller = CompareController(
            env.chat, votes=votes, catalogue=catalogue, rng=random.Random(7)
        )
        shown = CompareWindow(
            controller, models=list(catalogue.values()), current_model=MODEL, votes=votes
        )
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        shown.show()
        try:
            shown.columns[0].picker.set_current(MODEL)
            shown.columns[1].picker.set_current(OTHER)
            shown.blind_box.setChecked(True)
            shown.prompt.setPlainText("Write a haiku about the sea")
            shown.send_button.click()
            await until(lambda: controller.round_done() and not controller.busy, "the replies")
            yield controller, shown
        finally:
            shown.close()
            await controller.shutdown()


def _kept(folder: Path, name: str) -> list[bytes]:
    return [p.read_bytes() for p in folder.glob(f"{name}.corrupt-*")]


def _votes_doc(**changes: object) -> dict[str, object]:
    vote = {"id": "v1", "at": 1.0, "models": [MODEL, OTHER], "verdict": "tie", "winner": None}
    return {"format": VOTES_FORMAT, "version": VOTES_VERSION, "votes": [vote], **changes}


WRONG_TYPES = {
    "id": "v1",
    "models": [MODEL, OTHER],
    "verdict": "tie",
    "message_ids": 7,
    "at": "now",
}
DAMAGED = {
    "not-utf8": b'{"format": "flarechat.votes", "votes": [\xff\xfe]}',
    "wrong-types": json.dumps(_votes_doc(votes=[WRONG_TYPES, {"conversation_id": {}}])).encode(),
    "deep": b'{"format": "flarechat.votes", "votes": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
async def test_a_damaged_votes_file_is_kept_aside_said_and_the_vote_is_stored(
    name: str, emulator: EmulatorServer, tmp_path: Path
) -> None:
    path = tmp_path / "votes.json"
    path.write_bytes(DAMAGED[name])
    async with _blind_compare(emulator, tmp_path, VoteBook(path)) as (controller, shown):
        _click(shown.vote_bar, "A is better")
        await controller.drain()
        assert "The votes file" in shown.note.text()
        assert "moved to" in shown.note.text()
    assert _kept(tmp_path, "votes.json") == [DAMAGED[name]]  # nothing of the old file lost
    (vote,) = VoteBook(path).load()
    assert vote.winner == 0


async def test_a_newer_votes_file_is_never_rewritten_and_the_window_says_so(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    path = tmp_path / "votes.json"
    path.write_text(json.dumps(_votes_doc(version=VOTES_VERSION + 1, judges=["me"])))
    before = path.read_bytes()
    async with _blind_compare(emulator, tmp_path, VoteBook(path)) as (controller, shown):
        _click(shown.vote_bar, "A is better")
        await controller.drain()
        assert "newer Flarechat" in shown.note.text()
        assert "could not be saved" in shown.note.text()
    assert path.read_bytes() == before


async def test_the_lab_store_reads_a_file_before_its_first_save(tmp_path: Path) -> None:
    """A store saved before it was loaded reads the file for its guards first: a newer
    file is not replaced by this version's smaller view of it."""
    path = tmp_path / LAB_FILENAME
    path.write_text(json.dumps({"schema_version": LAB_SCHEMA_VERSION + 3, "presets": []}))
    before = path.read_bytes()
    library = LabLibrary()
    library.presets.add(Preset(id="x", name="X", model=MODEL, system_prompt="", params={}))
    with pytest.raises(OSError, match="newer Flarechat"):
        LabStore(path).save(library)
    assert path.read_bytes() == before

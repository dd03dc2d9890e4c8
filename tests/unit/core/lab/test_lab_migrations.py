"""The lab file's format is versioned: a version-1 file, as Flarechat 0.2 wrote it, is read
whole, upgraded once (the old file kept beside it) and read as it is after that; names made
from an item's first words or its model follow the item when it is edited, names the user
gave never change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.lab.exchange import import_lab, lab_to_json
from flarechat.core.lab.library import LabLibrary
from flarechat.core.lab.migrations import LAB_DOC_VERSION
from flarechat.core.lab.presets import Preset
from flarechat.core.lab.prompt_library import SavedPrompt
from flarechat.core.lab.storage import LAB_FILENAME, LabStore
from flarechat.core.lab.templates import Template

#: Written by Flarechat's LabStore.save at schema version 1 (the commit before version 2).
V1_FILE = Path(__file__).parent / "data" / "lab-v1.json"
LONG = "You are a careful code reviewer. Point out bugs first, then style, and keep it short."


def _v1_copy(tmp_path: Path) -> Path:
    path = tmp_path / LAB_FILENAME
    shutil.copyfile(V1_FILE, path)
    return path


def _v1_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(V1_FILE.read_text(encoding="utf-8"))
    return doc


def _fields(library: LabLibrary) -> dict[str, list[dict[str, Any]]]:
    """Every field of every item, but auto_name (what version 1 did not have)."""
    doc = lab_to_json(library)
    return {
        kind: [{k: v for k, v in item.items() if k != "auto_name"} for item in doc[kind]]
        for kind in ("presets", "prompts", "templates")
    }


def test_the_v1_fixture_is_a_version_1_file() -> None:
    assert _v1_doc()["schema_version"] == 1
    assert "auto_name" not in json.dumps(_v1_doc())


def test_a_v1_file_loads_with_nothing_lost(tmp_path: Path) -> None:
    store = LabStore(_v1_copy(tmp_path))
    library = store.load()
    assert store.problems == []
    v1 = _v1_doc()
    assert _fields(library) == {kind: v1[kind] for kind in ("presets", "prompts", "templates")}
    assert library.default_preset_id == v1["default_preset"]


def test_names_made_by_v1_are_marked_automatic_and_given_ones_are_not(tmp_path: Path) -> None:
    library = LabStore(_v1_copy(tmp_path)).load()
    items = [*library.prompts, *library.templates]
    auto = {item.id: item.auto_name for item in items}
    # s1, s2 ("… (2)"), s3 and t1 were named by their first words; "Pirate", "Summary" by hand
    assert auto == {"s1": True, "s2": True, "s3": True, "s4": False, "t1": True, "t2": False}
    presets = {p.id: p.auto_name for p in library.presets}
    assert presets == {"p1": False, "p2": True}  # p2 is called after its model


def test_the_upgrade_is_written_once_and_the_old_file_kept(tmp_path: Path) -> None:
    path = _v1_copy(tmp_path)
    store = LabStore(path)
    first = store.load()
    assert store.migrated
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["schema_version"] == LAB_DOC_VERSION
    [kept] = tmp_path.glob(f"{LAB_FILENAME}.v1-*")
    assert kept.read_bytes() == V1_FILE.read_bytes()
    text_after_first = path.read_bytes()
    again = LabStore(path)
    second = again.load()
    assert not again.migrated  # a no-op: nothing to upgrade, nothing written
    assert again.problems == []
    assert path.read_bytes() == text_after_first
    assert lab_to_json(second) == lab_to_json(first)
    assert len(list(tmp_path.glob(f"{LAB_FILENAME}*"))) == 2


def test_a_v1_export_imports_with_automatic_names_marked() -> None:
    section = {"format": "flarechat.lab", "version": 1, **_v1_doc()}
    library = LabLibrary()
    report = import_lab(library, {"lab": section})
    assert report.added == 8
    assert library.prompts.get("s1").auto_name  # type: ignore[union-attr]
    assert not library.prompts.get("s4").auto_name  # type: ignore[union-attr]


# -- names follow an edit unless the user gave them ---------------------------------------------


def test_editing_an_automatically_named_prompt_renames_it() -> None:
    library = LabLibrary()
    library.prompts.add(SavedPrompt("s1", "You are a careful code reviewer. Point…", LONG, True))
    edited = library.prompts.edit("s1", text="Answer in French.")
    assert edited is not None
    assert (edited.name, edited.auto_name) == ("Answer in French.", True)


def test_a_name_given_by_the_user_survives_an_edit() -> None:
    library = LabLibrary()
    library.templates.add(Template("t1", "Translate {{x}}", "Translate {{x}}", auto_name=True))
    library.templates.rename("t1", "Translator")
    edited = library.templates.edit("t1", text="Render {{x}} in Welsh")
    assert edited is not None
    assert (edited.name, edited.auto_name) == ("Translator", False)


def test_a_preset_named_after_its_model_follows_a_new_model() -> None:
    library = LabLibrary()
    library.presets.add(Preset("p1", "gpt-oss-120b", "@cf/openai/gpt-oss-120b", auto_name=True))
    edited = library.presets.edit("p1", model="@cf/meta/llama-3.1-8b-instruct-fast")
    assert edited is not None
    assert edited.name == "llama-3.1-8b-instruct-fast"


def test_an_edit_keeps_names_unique_and_a_copy_is_its_own_item() -> None:
    library = LabLibrary()
    library.prompts.add(SavedPrompt("s1", "Pirate", "Talk like a pirate."))
    library.prompts.add(SavedPrompt("s2", "Be brief.", "Be brief.", auto_name=True))
    assert library.prompts.edit("s2", name="Pirate").name == "Pirate (2)"  # type: ignore[union-attr]
    copy_ = library.prompts.duplicate("s1")
    assert copy_ is not None
    library.prompts.edit(copy_.id, text="Talk like a parrot.")
    assert library.prompts.get("s1").text == "Talk like a pirate."  # type: ignore[union-attr]


@pytest.mark.parametrize("flag", ["yes", 1, None])
def test_an_odd_auto_name_value_keeps_the_name_as_given(tmp_path: Path, flag: object) -> None:
    doc = {"schema_version": LAB_DOC_VERSION, "prompts": [
        {"id": "s1", "name": "Mine", "text": "Be brief.", "auto_name": flag}
    ]}  # fmt: skip
    path = tmp_path / LAB_FILENAME
    path.write_text(json.dumps(doc), encoding="utf-8")
    prompt = LabStore(path).load().prompts.get("s1")
    assert prompt is not None
    assert (prompt.name, prompt.auto_name) == ("Mine", False)

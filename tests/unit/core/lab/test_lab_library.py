"""Presets, saved prompts and templates: taken from a conversation, applied to one, kept in
the profile's lab file and round-tripped through export and import without duplicates or
silent overwrites."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.conversation import Conversation
from flarechat.core.export import export_all
from flarechat.core.lab.exchange import IMPORTED_SUFFIX, import_lab, lab_to_json
from flarechat.core.lab.library import LabLibrary
from flarechat.core.lab.presets import (
    PARAM_REASONING_EFFORT,
    Preset,
    apply_preset,
    gateway_of,
    preset_from_conversation,
    with_gateway,
)
from flarechat.core.lab.prompt_library import SavedPrompt, prompt_title
from flarechat.core.lab.storage import LAB_FILENAME, LabStore
from flarechat.core.lab.templates import Template
from flarechat.core.store import DB_FILENAME, ChatStore
from flarechat.settings.schema import Settings

MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
GATEWAY = {"skip_cache": True, "cache_ttl": 600, "gateway_metadata": {"team": "docs"}}


def _preset(**changes: Any) -> Preset:
    values: dict[str, Any] = {
        "id": "p1",
        "name": "Terse reviewer",
        "model": MODEL,
        "params": {"max_tokens": 512, "temperature": 0.2, "top_p": 0.9, "seed": 7},
        "system_prompt": "Be terse.",
        "reasoning_effort": "low",
        "gateway": GATEWAY,
    }
    return Preset(**{**values, **changes})


def _library() -> LabLibrary:
    library = LabLibrary()
    library.presets.add(_preset())
    library.presets.add(_preset(id="p2", name="Plain", gateway=None, reasoning_effort=None))
    library.prompts.add(SavedPrompt("s1", "Reviewer", "You review code."))
    library.templates.add(Template("t1", "Translate", "{{text}} to {{lang}}", {"lang": "fr"}))
    library.default_preset_id = "p1"
    return library


def _snapshot(library: LabLibrary) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(lab_to_json(library)))
    return doc


class _Target:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def set_model(self, model: str) -> None:
        self.calls.append(("model", model))

    def set_options(self, system_prompt: str, params: dict[str, Any]) -> None:
        self.calls.append(("options", (system_prompt, params)))


def test_a_conversation_becomes_a_preset_and_applies_back() -> None:
    conv = Conversation(
        "c1",
        model=MODEL,
        system_prompt="Be terse.",
        params={"max_tokens": 512, "temperature": 0.2, PARAM_REASONING_EFFORT: "high"},
    )
    preset = preset_from_conversation(conv, preset_id="p", name="Mine", model="other", gateway=None)
    assert preset.model == MODEL
    assert preset.reasoning_effort == "high"
    assert dict(preset.params) == {"max_tokens": 512, "temperature": 0.2}
    target = _Target()
    apply_preset(target, preset)
    assert target.calls == [
        ("model", MODEL),
        (
            "options",
            ("Be terse.", {"max_tokens": 512, "temperature": 0.2, "reasoning_effort": "high"}),
        ),
    ]


def test_gateway_options_move_between_settings_and_a_preset() -> None:
    settings = with_gateway(Settings(), GATEWAY)
    assert settings.skip_cache
    assert settings.cache_ttl == 600
    assert gateway_of(settings)["gateway_metadata"] == {"team": "docs"}
    assert with_gateway(Settings(), {"cache_ttl": 5}).cache_ttl is None  # invalid: left out


def test_shelf_keeps_names_unique_on_add_rename_and_duplicate() -> None:
    library = _library()
    assert library.presets.add(_preset(id="p3")).name == "Terse reviewer (2)"
    assert library.presets.rename("p2", "Terse reviewer") is not None
    assert library.presets.get("p2").name == "Terse reviewer (3)"  # type: ignore[union-attr]
    copy_ = library.presets.duplicate("p1")
    assert copy_ is not None
    assert copy_.id != "p1"
    assert copy_.name == "Terse reviewer (copy)"
    assert copy_.params == _preset().params


def test_deleting_the_default_preset_clears_the_default() -> None:
    library = _library()
    library.remove_preset("p1")
    assert library.default_preset() is None
    assert "p1" not in library.presets


def test_save_then_load_gives_the_same_library(tmp_path: Path) -> None:
    store = LabStore(tmp_path / LAB_FILENAME)
    library = _library()
    store.save(library)
    loaded = store.load()
    assert store.problems == []
    assert _snapshot(loaded) == _snapshot(library)
    assert loaded.default_preset() == _preset()


def test_default_path_is_in_the_profile_config(isolated_profile: Path) -> None:
    store = LabStore()
    store.save(_library())
    assert store.path.is_relative_to(isolated_profile)
    assert store.path.name == LAB_FILENAME


def test_a_corrupt_file_is_set_aside_and_an_empty_library_used(tmp_path: Path) -> None:
    path = tmp_path / LAB_FILENAME
    path.write_text("{not json", encoding="utf-8")
    store = LabStore(path)
    assert len(store.load().presets) == 0
    assert "moved to" in store.problems[0]
    assert not path.exists()
    assert any(tmp_path.glob(f"{LAB_FILENAME}.corrupt-*"))


def test_bad_items_and_values_are_left_out_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / LAB_FILENAME
    doc = _snapshot(_library())
    doc["presets"][0]["params"]["temperature"] = "hot"
    doc["presets"][1]["model"] = ""
    doc["prompts"].append("not an object")
    path.write_text(json.dumps({"schema_version": 1, **doc}), encoding="utf-8")
    store = LabStore(path)
    library = store.load()
    assert [p.id for p in library.presets] == ["p1"]
    assert "temperature" not in library.presets.get("p1").params  # type: ignore[union-attr]
    assert len(store.problems) == 3


def test_export_then_import_into_an_empty_library_round_trips() -> None:
    data = json.loads(json.dumps({"lab": lab_to_json(_library())}))
    fresh = LabLibrary()
    report = import_lab(fresh, data)
    assert (report.added, report.skipped_same, report.renamed) == (4, 0, [])
    assert _snapshot(fresh) == _snapshot(_library())


def test_importing_the_same_export_again_adds_nothing() -> None:
    library = _library()
    report = import_lab(library, {"lab": lab_to_json(library)})
    assert (report.added, report.skipped_same, report.renamed) == (0, 4, [])
    assert len(library.presets) == 2


def test_a_renamed_item_here_is_still_the_same_item() -> None:
    library = _library()
    data = {"lab": lab_to_json(library)}
    library.presets.rename("p1", "My name for it")
    assert import_lab(library, data).skipped_same == 4


def test_an_id_holding_different_content_comes_in_as_a_copy() -> None:
    library = _library()
    data = copy.deepcopy({"lab": lab_to_json(library)})
    data["lab"]["presets"][0]["system_prompt"] = "Be verbose."
    report = import_lab(library, data)
    assert report.renamed == ["Terse reviewer" + IMPORTED_SUFFIX]
    assert library.presets.get("p1").system_prompt == "Be terse."  # type: ignore[union-attr]
    assert len(library.presets) == 3


def test_the_default_preset_is_imported_only_when_there_is_none() -> None:
    library = LabLibrary()
    library.presets.add(_preset(id="mine", name="Mine"))
    library.default_preset_id = "mine"
    import_lab(library, {"lab": lab_to_json(_library())})
    assert library.default_preset_id == "mine"


def test_an_export_from_a_newer_flarechat_imports_nothing() -> None:
    data = {"lab": {**lab_to_json(_library()), "version": 99}}
    report = import_lab(LabLibrary(), data)
    assert report.added == 0
    assert report.problems


def test_export_all_carries_the_lab_and_never_a_token(tmp_path: Path) -> None:
    library = _library()
    leaky = _preset(id="p9", name="Leaky", params={"max_tokens": 64, "api_token": "tok-SECRET"})
    library.presets.add(leaky)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        data = json.loads(json.dumps(export_all(store, now=1.0, lab=lab_to_json(library))))
    assert "SECRET" not in json.dumps(data)
    fresh = LabLibrary()
    assert import_lab(fresh, data).added == 5
    assert fresh.presets.get("p9").params == {"max_tokens": 64}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "title"),
    [("You are a\nterse reviewer.", "You are a terse reviewer."), ("", "Untitled prompt")],
)
def test_prompt_titles_from_their_first_words(text: str, title: str) -> None:
    assert prompt_title(text) == title

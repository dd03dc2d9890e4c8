"""The model catalogue cache: round trip, atomic save, tolerant load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flarechat.api.models import ModelInfo
from flarechat.core.catalogue import CACHE_FILE_NAME, CatalogueCache

KIMI = ModelInfo(
    name="@cf/moonshotai/kimi-k2.6",
    description="Kimi K2.6 is a frontier-scale open-source model",
    context_window=262_144,
    paid_only=True,
    reasoning=True,
    function_calling=True,
    vision=True,
    price_input_per_m=0.95,
    price_output_per_m=4.0,
    price_cached_per_m=0.16,
)
LLAMA = ModelInfo(name="@cf/meta/llama-3.1-8b-instruct-fast", beta=True, lora=True)
FETCHED_AT = 1_767_225_600.5


def test_default_path_is_in_the_profile_cache_dir(isolated_profile: Path) -> None:
    cache = CatalogueCache()
    assert cache.path == isolated_profile / "cache" / CACHE_FILE_NAME


def test_missing_file_loads_as_none(tmp_path: Path) -> None:
    assert CatalogueCache(tmp_path / "models.json").load() is None


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    cache = CatalogueCache(tmp_path / "models.json")
    cache.save([KIMI, LLAMA], fetched_at=FETCHED_AT)
    loaded = CatalogueCache(tmp_path / "models.json").load()
    assert loaded is not None
    models, fetched_at = loaded
    assert models == [KIMI, LLAMA]
    assert fetched_at == FETCHED_AT


def test_save_stamps_with_the_clock_and_leaves_no_temp_files(tmp_path: Path) -> None:
    cache = CatalogueCache(tmp_path / "sub" / "models.json", clock=lambda: 42.0)
    assert cache.save([LLAMA]) == 42.0
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["models.json"]
    loaded = cache.load()
    assert loaded is not None
    assert loaded.fetched_at == 42.0


def test_failed_save_keeps_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    cache = CatalogueCache(folder / "models.json")
    cache.save([KIMI], fetched_at=FETCHED_AT)
    before = (folder / "models.json").read_bytes()

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("flarechat.paths.os.replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        cache.save([LLAMA])
    assert (folder / "models.json").read_bytes() == before
    assert [p.name for p in folder.iterdir()] == ["models.json"]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{not json",
        "[]",
        '{"version": 1, "models": []}',
        '{"version": 1, "fetched_at": "yesterday", "models": []}',
        '{"version": 1, "fetched_at": 1.0, "models": {}}',
    ],
    ids=["empty", "truncated", "list", "no-stamp", "bad-stamp", "models-not-list"],
)
def test_corrupt_file_loads_as_none(tmp_path: Path, content: str) -> None:
    path = tmp_path / "models.json"
    path.write_text(content, encoding="utf-8")
    assert CatalogueCache(path).load() is None


def test_binary_garbage_loads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert CatalogueCache(path).load() is None


def test_bad_entries_are_skipped_and_bad_fields_defaulted(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    entries = [
        {"name": "@cf/good/one", "context_window": 8192, "beta": True, "future_key": [1]},
        {"name": "@cf/good/two", "context_window": "lots", "price_input_per_m": 1},
        {"description": "no name"},
        {"name": "   "},
        "not an object",
    ]
    path.write_text(json.dumps({"fetched_at": 7, "models": entries}), encoding="utf-8")
    loaded = CatalogueCache(path).load()
    assert loaded is not None
    assert loaded.models == [
        ModelInfo(name="@cf/good/one", context_window=8192, beta=True),
        ModelInfo(name="@cf/good/two", price_input_per_m=1.0),
    ]
    assert loaded.fetched_at == 7.0

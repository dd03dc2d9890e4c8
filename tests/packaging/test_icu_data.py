"""The trimmed ICU data library of the Linux bundle (packaging/icu_data.py).

The package format round-trips byte for byte, the trim drops only the trees no ICU service
QtCore calls reads, and Qt gives the same answers with the trimmed library as with the wheel's
(collation, case mapping, converters, time zone names), run in a child process with the
trimmed library preloaded in place of the wheel's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.packaging import PACKAGING, load_script

PROBE = Path(__file__).resolve().parent / "probes" / "icu_calls.py"
#: The trimmed data is about half the wheel's (30.5 MiB -> 15.7 MiB for ICU 73).
MAX_TRIMMED_SHARE = 0.6
PROBE_TIMEOUT = 120

if not sys.platform.startswith("linux"):
    pytest.skip("PySide6 links its own ICU only on Linux", allow_module_level=True)


icu = load_script("icu_data", PACKAGING / "icu_data.py")


@pytest.fixture(scope="module")
def wheel_library() -> Path:
    import PySide6

    found = sorted((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.*"))
    assert found, "the PySide6 wheel carries no libicudata"
    return found[0]


def _tree(name: str) -> str:
    parts = name.split("/")
    return parts[1] if len(parts) > 2 else ""


def test_common_data_round_trips_byte_for_byte(wheel_library: Path) -> None:
    symbol, raw = icu.common_data_bytes(wheel_library)
    assert symbol.startswith("icudt")
    package = icu.CommonData.parse(raw)
    assert len(package.items) > 1000
    assert package.pack() == raw


def test_trim_drops_only_the_trees_qt_never_reads(wheel_library: Path) -> None:
    _symbol, package = icu.read_common_data(wheel_library)
    trimmed = icu.trim(package)
    before, after = dict(package.items), dict(trimmed.items)
    dropped = before.keys() - after.keys()
    assert {_tree(name) for name in dropped} - {""} == icu.DROPPED_TREES
    assert {name.split("/")[-1] for name in dropped if not _tree(name)} == icu.DROPPED_ITEMS
    assert all(after[name] == before[name] for name in after)  # kept items are untouched
    # What Qt's services read is all still there: zones, collation, converters, locales.
    assert {_tree(name) for name in after} >= {"zone", "coll", ""}
    assert any(name.endswith("/cnvalias.icu") for name in after)
    assert any(name.endswith("/zoneinfo64.res") for name in after)
    assert [name for name, _data in trimmed.items] == sorted(after)  # ICU searches it by halves
    assert len(trimmed.pack()) < MAX_TRIMMED_SHARE * sum(len(data) for data in before.values())


def _probe(*, preload: Path | None) -> dict[str, object]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("LD_PRELOAD", None)
    if preload is not None:
        env["LD_PRELOAD"] = str(preload)
    run = subprocess.run(
        [sys.executable, str(PROBE)], capture_output=True, text=True, env=env, timeout=PROBE_TIMEOUT
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, object] = json.loads(run.stdout)
    return result


@pytest.mark.slow
def test_qt_answers_the_same_with_the_trimmed_library(wheel_library: Path, tmp_path: Path) -> None:
    trimmed = icu.trimmed_library(wheel_library, out_dir=tmp_path)
    assert trimmed.name == wheel_library.name
    assert trimmed.stat().st_size < MAX_TRIMMED_SHARE * wheel_library.stat().st_size

    wheel, cut = _probe(preload=None), _probe(preload=trimmed)
    assert wheel["library"] == [str(wheel_library)]
    assert cut["library"] == [str(trimmed)]  # the trimmed data really replaced the wheel's
    assert cut["results"] == wheel["results"]
    results = wheel["results"]
    assert isinstance(results, dict)
    assert results["zone de_DE Europe/Berlin"][0] == "Mitteleuropäische Normalzeit"
    assert results["case tr_TR"][0].startswith("İSTANBUL")
    assert results["codec Shift_JIS"][:2] == [True, True]

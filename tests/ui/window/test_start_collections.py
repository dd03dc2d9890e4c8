"""Start-up runs no garbage collection before the first paint (issue #12): it makes ~50,000
lasting objects and almost no garbage, and ~110 collections cost 20-50 ms of the GUI thread.
The first settling point turns the collector back on (tests/ui/shared/test_settling.py).

Runs ``flarechat`` as ``python -m flarechat`` does, in a fresh interpreter, offscreen, on its
own profile; at the main window's first paint it records whether the collector is on.
"""

from __future__ import annotations

from pathlib import Path

from support.first_paint import at_first_paint, run_probe


def test_the_collector_is_held_until_the_first_paint(tmp_path: Path) -> None:
    enabled: list[bool] = run_probe(tmp_path, at_first_paint("[__import__('gc').isenabled()]"))
    assert enabled == [False]

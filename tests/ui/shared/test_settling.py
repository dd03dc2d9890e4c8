"""One "start-up has settled" hook freezes what the app has built out of the collector's full
passes (flarechat.ui.shared.settling): what was made since the last settling point joins the
frozen generation, at the Markdown warm-up too, and at a reply's start (which begins the warm-up)
without a keystroke. The first paint and the keychain read: tests/ui/window/test_deferred_start.py.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from pytestqt.qtbot import QtBot

from flarechat.ui.shared import settling
from flarechat.ui.shared.settling import hold_collections, start_up_settled
from flarechat.ui.transcript import warm_up
from flarechat.ui.transcript.transcript import TranscriptView
from support.widgets import shown

JOIN_TIMEOUT_S = 60


def _is_frozen(obj: object) -> bool:
    """Whether ``obj`` (tracked by the collector) is in the frozen generation: frozen objects
    are not in ``gc.get_objects()``."""
    return not any(tracked is obj for tracked in gc.get_objects())


def test_each_settling_point_freezes_what_was_made_since_the_last() -> None:
    gc.unfreeze()  # whatever an earlier test in this process froze
    first = ["made before the first point"]
    start_up_settled("first")
    second = ["made before the second point"]
    assert (_is_frozen(first), _is_frozen(second)) == (True, False)
    start_up_settled("second")
    assert (_is_frozen(first), _is_frozen(second)) == (True, True)
    gc.unfreeze()


def test_the_markdown_warm_up_is_a_settling_point() -> None:
    gc.unfreeze()
    made = ["made before the warm-up"]
    warm_up.warm_up()
    assert _is_frozen(made)
    gc.unfreeze()


def test_a_reply_that_starts_without_typing_still_freezes_before_its_first_token(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_up, "_thread", None)  # as in a process that has not warmed up yet
    transcript = shown(qtbot, TranscriptView(), size=(720, 480))
    gc.unfreeze()
    made = ["made before the reply"]
    transcript.begin_reply("a1", model="@cf/meta/llama-3.1-8b-instruct")
    thread = warm_up.warm_up_in_background()  # the one begin_reply started
    thread.join(timeout=JOIN_TIMEOUT_S)
    assert not thread.is_alive()
    assert _is_frozen(made)
    gc.unfreeze()


class _Node:
    """A tracked object that can sit in a reference cycle and be watched by a weakref."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector_on() -> object:
    """The collector on and no hold, before and after (a failed test must not leave it off)."""
    gc.enable()
    yield None
    settling._held = False
    gc.enable()
    gc.unfreeze()


@pytest.mark.usefixtures("collector_on")
def test_start_up_holds_collections_until_it_settles_then_frees_its_cycles() -> None:
    hold_collections()
    assert not gc.isenabled()
    cycle = weakref.ref(_Node())  # garbage made during start-up, only a collection frees
    assert cycle() is not None
    start_up_settled("first paint")
    assert gc.isenabled()
    assert cycle() is None  # collected before the freeze, not frozen for good


@pytest.mark.usefixtures("collector_on")
def test_a_collector_someone_else_turned_off_stays_off() -> None:
    gc.disable()
    hold_collections()
    start_up_settled("first paint")
    assert not gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_only_the_first_settling_point_ends_the_hold() -> None:
    hold_collections()
    start_up_settled("first paint")
    gc.disable()  # e.g. a benchmark's own section
    start_up_settled("keychain read")
    assert not gc.isenabled()

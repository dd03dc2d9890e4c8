"""The toolbar model picker: filter, badges, keyboard, hand-typed ids, status line."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from flarechat.api.models import ModelInfo
from flarechat.ui.models.listing import (
    MODEL_ROLE,
    badges_for,
    format_context,
    format_price,
    looks_like_model_id,
)
from flarechat.ui.models.picker import ModelPicker, format_age
from flarechat.ui.models.popup import ModelPickerPopup

NOW = 1_800_000_000.0
KIMI = ModelInfo(
    name="@cf/moonshotai/kimi-k2.6",
    description="A frontier-scale open-source model",
    context_window=262_144,
    paid_only=True,
    reasoning=True,
    function_calling=True,
    price_input_per_m=0.95,
    price_output_per_m=4.0,
)
LLAMA_FAST = ModelInfo(
    name="@cf/meta/llama-3.1-8b-instruct-fast",
    description="Small and quick",
    context_window=128_000,
    lora=True,
    price_input_per_m=0.045,
    price_output_per_m=0.384,
)
LLAMA_70B = ModelInfo(
    name="@cf/meta/llama-3.3-70b-instruct-fp8-fast",
    description="Quantized to fp8",
    context_window=24_000,
    function_calling=True,
    price_input_per_m=0.29,
    price_output_per_m=2.25,
)
GEMMA = ModelInfo(
    name="@cf/google/gemma-4-26b-a4b-it",
    description="Multimodal, thinks before answering",
    beta=True,
    reasoning=True,
)
CATALOGUE = [KIMI, LLAMA_FAST, LLAMA_70B, GEMMA]


@pytest.fixture
def picker(qtbot: QtBot) -> ModelPicker:
    widget = ModelPicker(clock=lambda: NOW)
    qtbot.addWidget(widget)
    widget.set_models(CATALOGUE, fetched_at=NOW - 300, offline=False)
    widget.set_current(LLAMA_70B.name)
    widget.show()
    return widget


def visible_names(picker: ModelPicker) -> list[str]:
    proxy = picker.popup.proxy
    return [proxy.index(row, 0).data(MODEL_ROLE).name for row in range(proxy.rowCount())]


def test_badges_context_and_price_text() -> None:
    assert [b.text for b in badges_for(KIMI)] == ["Paid plan", "Reasoning", "Functions"]
    assert [b.text for b in badges_for(GEMMA)] == ["Beta", "Reasoning"]
    assert [b.text for b in badges_for(LLAMA_FAST)] == ["LoRA"]
    assert format_context(128_000) == "128K ctx"
    assert format_context(262_144) == "262K ctx"
    assert format_context(None) == ""
    assert format_price(LLAMA_70B) == "$0.29 in / $2.25 out per M"
    assert format_price(LLAMA_FAST) == "$0.045 in / $0.384 out per M"
    assert format_price(GEMMA) == ""


def test_row_accessible_text_carries_everything_painted(picker: ModelPicker) -> None:
    proxy = picker.popup.proxy
    row = visible_names(picker).index(KIMI.name)
    text = proxy.index(row, 0).data(Qt.ItemDataRole.AccessibleTextRole)
    for part in ("kimi-k2.6", KIMI.name, "262K ctx", "Paid plan", "Reasoning", "Functions"):
        assert part in text
    assert "$0.95 in / $4.00 out per M" in text


def test_button_shows_short_name_and_badges(picker: ModelPicker) -> None:
    assert picker.button.display_name() == "llama-3.3-70b-instruct-fp8-fast"
    assert picker.button.badge_texts() == ["Functions"]
    picker.set_current(KIMI.name)
    assert picker.button.badge_texts() == ["Paid plan", "Reasoning", "Functions"]
    assert picker.button.accessibleName() == "Model"


def test_models_are_listed_by_short_name(picker: ModelPicker) -> None:
    picker.open_popup()
    assert visible_names(picker) == [GEMMA.name, KIMI.name, LLAMA_FAST.name, LLAMA_70B.name]


def test_opening_selects_the_current_model(picker: ModelPicker) -> None:
    picker.open_popup()
    assert picker.popup.isVisible()
    assert picker.popup.view.currentIndex().data(MODEL_ROLE) == LLAMA_70B
    assert picker.popup.delegate.current_id == LLAMA_70B.name


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("llama", [LLAMA_FAST.name, LLAMA_70B.name]),
        ("LLAMA fp8", [LLAMA_70B.name]),
        ("reasoning", [GEMMA.name, KIMI.name]),
        ("thinks", [GEMMA.name]),
        ("@cf/meta/", [LLAMA_FAST.name, LLAMA_70B.name]),
        ("nothing-like-this", []),
    ],
)
def test_typing_filters_by_name_description_and_badges(
    picker: ModelPicker, qtbot: QtBot, query: str, expected: list[str]
) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, query)
    assert visible_names(picker) == expected


def test_no_match_explains_how_to_use_an_unlisted_model(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, "mistral")
    assert picker.popup.hint.isVisibleTo(picker.popup)
    assert "@cf/vendor/model" in picker.popup.hint.text()
    assert not picker.popup.footer.isVisibleTo(picker.popup)


def test_down_and_enter_pick_from_the_filtered_list(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, "llama")
    qtbot.keyClick(picker.popup.search, Qt.Key.Key_Down)
    with qtbot.waitSignal(picker.model_selected) as chosen:
        qtbot.keyClick(picker.popup.search, Qt.Key.Key_Return)
    assert chosen.args == [LLAMA_70B.name]
    assert not picker.popup.isVisible()


def test_up_down_move_and_escape_closes_without_choosing(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    search = picker.popup.search
    qtbot.keyClick(search, Qt.Key.Key_Up)
    qtbot.keyClick(search, Qt.Key.Key_Up)
    assert picker.popup.view.currentIndex().data(MODEL_ROLE) == KIMI
    with qtbot.assertNotEmitted(picker.model_selected):
        qtbot.keyClick(search, Qt.Key.Key_Escape)
    assert not picker.popup.isVisible()
    assert picker.current_model() == LLAMA_70B.name


def test_clicking_a_row_selects_it_once(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    view = picker.popup.view
    index = view.model().index(0, 0)
    received: list[str] = []
    picker.model_selected.connect(received.append)
    qtbot.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center()
    )
    assert received == [GEMMA.name]
    assert picker.current_model() == GEMMA.name
    assert picker.button.badge_texts() == ["Beta", "Reasoning"]


def test_a_hand_typed_model_id_is_offered_and_accepted(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, "@cf/new/model-9b")
    footer = picker.popup.footer
    assert footer.isVisibleTo(picker.popup)
    assert footer.text() == "Use “@cf/new/model-9b”"
    with qtbot.waitSignal(picker.model_selected) as chosen:
        qtbot.keyClick(picker.popup.search, Qt.Key.Key_Return)
    assert chosen.args == ["@cf/new/model-9b"]
    assert picker.current_model() == "@cf/new/model-9b"
    assert picker.button.display_name() == "model-9b"
    assert picker.button.badge_texts() == []


def test_the_use_button_accepts_an_unlisted_variant(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, "@cf/meta/llama-3.1-8b-instruct")  # prefix of a listed id
    assert visible_names(picker) == [LLAMA_FAST.name]
    assert picker.popup.footer.isVisibleTo(picker.popup)
    with qtbot.waitSignal(picker.model_selected) as chosen:
        qtbot.mouseClick(picker.popup.footer, Qt.MouseButton.LeftButton)
    assert chosen.args == ["@cf/meta/llama-3.1-8b-instruct"]


def test_a_listed_id_typed_in_full_is_not_offered_twice(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, KIMI.name)
    assert not picker.popup.footer.isVisibleTo(picker.popup)
    with qtbot.waitSignal(picker.model_selected) as chosen:
        qtbot.keyClick(picker.popup.search, Qt.Key.Key_Enter)
    assert chosen.args == [KIMI.name]


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("@cf/new/model", True),
        ("@hf/org/model-v0.2", True),
        ("@cf/meta", True),
        ("llama", False),
        ("cf/meta/llama", False),
        ("@cf/has space", False),
    ],
)
def test_what_counts_as_a_model_id(text: str, ok: bool) -> None:
    assert looks_like_model_id(text) is ok


def test_status_line_says_how_fresh_the_list_is(picker: ModelPicker) -> None:
    assert picker.status_text() == "Updated 5 min ago"
    picker.set_models(CATALOGUE, fetched_at=NOW - 2 * 3600, offline=True)
    assert picker.status_text() == "Offline — showing cached list (updated 2 h ago)"
    picker.set_models([], fetched_at=None, offline=True)
    assert picker.status_text() == "Offline — no cached list"
    picker.set_models([], fetched_at=None, offline=False)
    assert picker.status_text() == "Model list not loaded yet"


def test_loading_disables_refresh_until_the_list_lands(picker: ModelPicker, qtbot: QtBot) -> None:
    picker.open_popup()
    button = picker.popup.refresh_button
    with qtbot.waitSignal(picker.refresh_requested):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    picker.set_loading(True)
    assert not button.isEnabled()
    assert picker.status_text() == "Updating the model list…"
    picker.set_models([*CATALOGUE, ModelInfo(name="@cf/new/one")], fetched_at=NOW, offline=False)
    picker.set_loading(False)
    assert button.isEnabled()
    assert picker.status_text() == "Updated just now"
    assert "@cf/new/one" in visible_names(picker)


def test_an_unknown_current_model_is_shown_by_its_short_name(qtbot: QtBot) -> None:
    picker = ModelPicker()
    qtbot.addWidget(picker)
    assert picker.button.display_name() == "Choose a model"
    picker.set_current("@cf/vendor/brand-new")
    assert picker.button.display_name() == "brand-new"
    assert picker.button.badge_texts() == []


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "just now"),
        (61, "1 min ago"),
        (7_200, "2 h ago"),
        (86_400, "1 day ago"),
        (3 * 86_400, "3 days ago"),
    ],
)
def test_format_age(seconds: float, text: str) -> None:
    assert format_age(seconds) == text


def test_a_list_landing_while_choosing_keeps_the_query_and_highlight(
    picker: ModelPicker, qtbot: QtBot
) -> None:
    picker.open_popup()
    qtbot.keyClicks(picker.popup.search, "llama")
    qtbot.keyClick(picker.popup.search, Qt.Key.Key_Down)
    assert picker.popup.highlighted_name() == LLAMA_70B.name
    newer = ModelInfo(name="@cf/meta/llama-5-tiny", description="new")
    picker.set_models([*CATALOGUE, newer], fetched_at=NOW, offline=False)
    assert picker.popup.search.text() == "llama"
    assert visible_names(picker) == [LLAMA_FAST.name, LLAMA_70B.name, newer.name]
    assert picker.popup.highlighted_name() == LLAMA_70B.name


def test_the_popup_is_made_when_first_opened_with_what_was_set_before(qtbot: QtBot) -> None:
    """Start-up shows only the button (the list's classes and enums cost the first paint);
    the list made at the first open shows the status and current model already set."""
    widget = ModelPicker(clock=lambda: NOW)
    qtbot.addWidget(widget)
    widget.set_models(CATALOGUE, fetched_at=NOW - 300, offline=False)
    widget.set_current(KIMI.name)
    made_before = widget.findChildren(ModelPickerPopup)
    widget.open_popup()
    assert made_before == []
    assert widget.popup.status.text() == "Updated 5 min ago" == widget.status_text()
    assert widget.popup.delegate.current_id == KIMI.name
    assert widget.popup.highlighted_name() == KIMI.name

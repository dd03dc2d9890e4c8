"""Usage and context arithmetic: neurons and cost per reply, conversation and UTC day; the
allocation gauge's thresholds and reset; the context window's use and its warning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from flarechat.api.models import ModelInfo
from flarechat.core import ledger, meters
from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Attachment,
    Conversation,
    ConversationTree,
    Message,
)
from flarechat.core.meters import ContextLevel, GaugeLevel
from flarechat.core.store import DB_FILENAME, ChatStore

LLAMA = ModelInfo(
    "@cf/llama", context_window=1000, price_input_per_m=0.5, price_output_per_m=2.0,
    price_cached_per_m=0.1,
)  # fmt: skip
UNPRICED = ModelInfo("@cf/unpriced", context_window=None)
PRICES = {LLAMA.name: LLAMA, UNPRICED.name: UNPRICED}


def _reply(
    mid: str, parent: str, *, model: str = LLAMA.name, usage: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None, created_at: float = 1.0, content: str = "reply",
) -> Message:  # fmt: skip
    return Message(
        mid, "c", parent, ROLE_ASSISTANT, content, model=model, usage=usage, meta=meta,
        created_at=created_at,
    )  # fmt: skip


def _user(mid: str, parent: str | None, text: str = "hello", created_at: float = 0.5) -> Message:
    return Message(mid, "c", parent, ROLE_USER, text, created_at=created_at)


def test_reply_cost_from_catalogue_prices_with_cached_tokens() -> None:
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 500_000, "cached_tokens": 400_000}
    # 600k at $0.5/M + 400k cached at $0.1/M + 500k out at $2/M
    assert meters.reply_cost(usage, LLAMA) == pytest.approx(0.3 + 0.04 + 1.0)


def test_reply_cost_unknown_without_prices_or_usage() -> None:
    assert meters.reply_cost({"prompt_tokens": 10}, UNPRICED) is None
    assert meters.reply_cost(None, LLAMA) is None
    assert meters.reply_cost({"prompt_tokens": 10}, None) is None


def test_header_neurons_win_over_the_usage_figure() -> None:
    assert meters.reply_neurons({"neurons": 2.0}, {"neurons": 3.5}) == 3.5
    assert meters.reply_neurons({"neurons": 2.0}, None) == 2.0
    assert meters.reply_neurons({}, {"neurons": True}) is None


def test_conversation_usage_counts_every_branch_and_marks_unpriced() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 50}
    tree = ConversationTree(
        Conversation("c"),
        [
            _user("u", None),
            _reply("a1", "u", usage=usage, meta={"neurons": 1.5}),
            _reply("a2", "u", usage={**usage, "neurons": 2.0}, created_at=2.0),  # a branch
            _reply("a3", "u", model=UNPRICED.name, usage=usage, created_at=3.0),
            _reply("a4", "u", usage=None, created_at=4.0),  # never answered
        ],
    )
    total = meters.conversation_usage(tree, PRICES)
    assert total.neurons == pytest.approx(3.5)
    assert (total.replies, total.priced, total.unpriced) == (3, 2, 1)
    assert total.cost == pytest.approx(2 * (100 * 0.5 + 50 * 2.0) / 1_000_000)
    assert (
        meters.usage_text(total)
        == "3.50 neurons \N{MIDDLE DOT} \N{ALMOST EQUAL TO} $0.00030 (estimate)"
    )


def test_cost_text_keeps_two_significant_digits() -> None:
    assert meters.cost_text(0.000421) == "\N{ALMOST EQUAL TO} $0.00042"
    assert meters.cost_text(1.25) == "\N{ALMOST EQUAL TO} $1.25"
    assert meters.cost_text(0) == "\N{ALMOST EQUAL TO} $0"


@pytest.mark.parametrize(
    ("neurons", "level"),
    [(0, GaugeLevel.OK), (7_999.9, GaugeLevel.OK), (8_000, GaugeLevel.AMBER),
     (9_499, GaugeLevel.AMBER), (9_500, GaugeLevel.RED), (12_000, GaugeLevel.RED)],
)  # fmt: skip
def test_gauge_turns_amber_at_80_and_red_at_95_percent(neurons: float, level: GaugeLevel) -> None:
    assert meters.allocation_level(neurons) is level


def test_reset_is_the_next_utc_midnight_in_local_time_too() -> None:
    late = datetime(2025, 3, 1, 23, 59, 59, tzinfo=UTC)
    assert meters.next_reset(late) == datetime(2025, 3, 2, tzinfo=UTC)
    assert meters.next_reset(datetime(2025, 3, 2, tzinfo=UTC)) == datetime(2025, 3, 3, tzinfo=UTC)
    tokyo = timezone(timedelta(hours=9))
    # 08:30 in Tokyo on the 2nd is still the 1st in UTC: the reset is at 09:00 Tokyo time
    tip = meters.allocation_tooltip(
        8_000, now=datetime(2025, 3, 2, 8, 30, tzinfo=tokyo), local_zone=tokyo
    )
    assert "Resets at 09:00 your time (00:00 UTC)" in tip
    assert "8,000" not in tip
    assert "8000.00 of 10,000" in tip
    assert "(80%)" in tip
    assert "not counted" in tip


def test_the_day_boundary_splits_usage_and_cost_across_restarts(tmp_path: Path) -> None:
    midnight = datetime(2025, 3, 2, tzinfo=UTC).timestamp()
    usage = {"prompt_tokens": 1000, "completion_tokens": 1000}
    tree = ConversationTree(
        Conversation("c"),
        [
            _user("u", None, created_at=midnight - 10),
            _reply("before", "u", usage=usage, meta={"neurons": 5.0}, created_at=midnight - 1),
            _reply("after", "u", usage=usage, meta={"neurons": 7.0}, created_at=midnight),
        ],
    )
    path = tmp_path / DB_FILENAME
    with ChatStore(path) as store:
        store.insert_trees([tree])
    with ChatStore(path) as store:  # a restart: counted from what was stored
        assert store.neurons_today(now=midnight - 0.5) == 5.0
        assert store.neurons_today(now=midnight + 3600) == 7.0
        day = ledger.day_usage(store.replies_today(now=midnight + 3600), PRICES, demo=False)
    assert day.neurons == 7.0
    assert day.cost == pytest.approx((1000 * 0.5 + 1000 * 2.0) / 1_000_000)


def test_context_is_estimated_before_any_usage_and_marked() -> None:
    path = [_user("u", None, "x" * 400)]
    use = meters.context_use(path, system_prompt="s" * 40, draft="", window=1000)
    assert use.history == 10 + 4 + 100 + 4
    assert not use.exact
    assert meters.context_text(use) == "~118 / 1.0k tokens (12%)"


def test_images_count_in_the_draft_and_in_the_history_after_the_last_report() -> None:
    image = Attachment("image/png", b"png", 10, 10, "a.png")
    usage = {"total_tokens": 500}
    asked = _user("u2", "a", "", created_at=2.0)
    asked.attachments = [image, image]
    path = [_user("u", None), _reply("a", "u", usage=usage), asked]
    use = meters.context_use(path, system_prompt="", draft="", images=1, window=10_000)
    two = 2 * meters.IMAGE_TOKENS_ESTIMATE
    assert (use.history, use.draft) == (500 + two + 4, meters.IMAGE_TOKENS_ESTIMATE + 4)
    assert not use.exact


def test_context_is_exact_from_the_last_reported_reply() -> None:
    usage = {"prompt_tokens": 300, "completion_tokens": 200, "total_tokens": 500}
    path = [_user("u", None), _reply("a", "u", usage=usage)]
    use = meters.context_use(
        path, system_prompt="ignored: counted by the server", draft="", window=1000
    )
    assert (use.history, use.exact) == (500, True)
    assert meters.context_text(use) == "500 / 1.0k tokens (50%)"
    later = [*path, _user("u2", "a", "y" * 40, created_at=2.0)]
    typed = meters.context_use(later, system_prompt="", draft="z" * 8, window=1000)
    assert (typed.history, typed.draft, typed.exact) == (500 + 14, 2 + 4, False)


@pytest.mark.parametrize(
    ("history", "draft", "max_tokens", "level"),
    [(100, 0, 100, ContextLevel.OK), (800, 0, 100, ContextLevel.NEAR),
     (850, 0, 200, ContextLevel.TIGHT), (990, 20, 0, ContextLevel.OVER)],
)  # fmt: skip
def test_warning_thresholds(history: int, draft: int, max_tokens: int, level: ContextLevel) -> None:
    use = meters.ContextUse(history, draft, 1000, exact=True)
    assert meters.context_level(use, max_tokens=max_tokens) is level


def test_no_window_in_the_catalogue_is_unknown_not_ok() -> None:
    use = meters.ContextUse(10, 0, None, exact=False)
    assert meters.context_level(use, max_tokens=10) is ContextLevel.UNKNOWN
    assert meters.context_text(use) == "~10 tokens"


def test_typing_estimates_a_quarter_token_per_character() -> None:
    assert meters.estimate_tokens("") == 0
    assert meters.estimate_tokens("abcde") == 2

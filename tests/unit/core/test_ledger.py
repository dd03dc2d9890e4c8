"""The usage ledger's charge of one reply and its day (issue 23 #7), from stored records."""

from __future__ import annotations

import pytest

from flarechat.api.models import ModelInfo
from flarechat.core import ledger

MODEL = "@cf/meta/llama-3.1-8b-instruct-fast"
PRICED = ModelInfo(name=MODEL, price_input_per_m=0.5, price_output_per_m=2.0)
USAGE = {"prompt_tokens": 1000, "completion_tokens": 1000}


def test_a_finished_reply_costs_its_tokens_at_the_catalogues_prices() -> None:
    spent = ledger.charge(USAGE, {"neurons": 9.0}, PRICED)
    assert spent is not None
    assert spent.neurons == 9.0
    assert spent.cost == pytest.approx((1000 * 0.5 + 1000 * 2.0) / 1e6)


def test_a_stopped_reply_costs_its_neurons_price_when_no_tokens_came() -> None:
    spent = ledger.charge(None, {"neurons": 4.0}, PRICED)
    assert spent is not None
    assert spent.neurons == 4.0
    assert spent.cost == pytest.approx(4.0 * 0.011 / 1000)


def test_a_cache_hit_is_charged_nothing() -> None:
    spent = ledger.charge(USAGE, {"neurons": 9.0, "cache_status": "HIT"}, PRICED)
    assert spent == ledger.Charge(0.0, 0.0, cached=True)


def test_a_reply_never_answered_is_not_charged() -> None:
    assert ledger.charge(None, None, PRICED) is None


def test_the_day_keeps_demo_mode_apart_and_knows_a_refusal() -> None:
    demo_meta = ledger.mark_demo({"neurons": 5.0})
    rows: list[ledger.LedgerRow] = [
        (MODEL, USAGE, {"neurons": 9.0}, None),
        (MODEL, USAGE, demo_meta, None),
        (MODEL, None, ledger.mark_demo(None), {"kind": "daily_limit", "message": "used up"}),
    ]
    real = ledger.day_usage(rows, {MODEL: PRICED}, demo=False)
    assert (real.neurons, real.replies, real.used_up) == (9.0, 1, False)
    demo = ledger.day_usage(rows, {MODEL: PRICED}, demo=True)
    assert (demo.neurons, demo.replies, demo.used_up) == (5.0, 1, True)

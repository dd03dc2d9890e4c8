"""The emulator's pure parts: replies, tokenising, wire helpers, the capacity queue on asyncio."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from flarechat.emulator import replies, wire
from flarechat.emulator.cache import DEFAULT_CACHE_TTL, parse_ttl
from flarechat.emulator.capacity import Capacity
from flarechat.emulator.config import check_loopback


@pytest.mark.parametrize(
    "text",
    ["", "one", "  leading and trailing  ", "a\n\n```python\nx = 1\n```\n", "supercalifragilistic"],
)
def test_tokenize_round_trips(text: str) -> None:
    tokens = replies.tokenize(text)
    assert "".join(tokens) == text
    assert all(len(t.strip()) <= 10 for t in tokens)


def test_compose_is_deterministic_and_reasoning_is_optional() -> None:
    one = replies.compose("@cf/x/y", "What?", seed=3, reasoning=True)
    assert one == replies.compose("@cf/x/y", "What?", seed=3, reasoning=True)
    assert one.reasoning.startswith('The user wrote "What?"')
    plain = replies.compose("@cf/x/y", "What?", seed=3, reasoning=False)
    assert plain.reasoning == ""
    assert plain.answer == one.answer


def test_long_questions_get_long_answers() -> None:
    short = replies.compose("m", "brief please", seed=0, reasoning=False)
    long = replies.compose("m", "a LONG answer please", seed=0, reasoning=False)
    assert len(replies.tokenize(short.answer)) < 256 < len(replies.tokenize(long.answer))


def test_split_think_always_cuts_the_closing_tag() -> None:
    for seed in range(20):
        chunks = replies.split_think("hmm", "ok", seed=seed)
        assert "".join(chunks) == "<think>\nhmm\n</think>\n\nok"
        assert not any("</think>" in chunk for chunk in chunks)


def test_question_and_prompt_tokens() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "Be brief"},
            {"role": "user", "content": [{"type": "text", "text": "two words"}]},
            {"role": "assistant", "content": "ok"},
        ]
    }
    assert replies.last_user_text(body) == "two words"
    assert replies.last_user_text({"prompt": "p"}) == "p"
    assert replies.prompt_tokens(body) > replies.prompt_tokens({"prompt": "p"})


def test_ulid_padding_and_ids() -> None:
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", wire.ulid())
    rng = random.Random(1)
    for _ in range(50):
        pad = wire.legacy_padding(rng)
        assert pad
        assert "abdefghijklmnoprstuvxyz1234567890".startswith(pad[:33])
        assert re.fullmatch(r"[a-z0-9]+", wire.openai_padding(rng))
    assert re.fullmatch(r"[0-9a-f]{32}", wire.completion_id())
    assert re.fullmatch(r"[0-9a-f]{16}-[A-Z]{3}", wire.cf_ray())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DEFAULT_CACHE_TTL),
        ("60", 60),
        ("59", DEFAULT_CACHE_TTL),
        ("2592000", 2592000),
        ("2592001", DEFAULT_CACHE_TTL),
        ("soon", DEFAULT_CACHE_TTL),
    ],
)
def test_cache_ttl_bounds(value: str | None, expected: int) -> None:
    assert parse_ttl(value) == expected


def test_loopback_check() -> None:
    check_loopback("127.9.9.9")
    check_loopback("::1")
    with pytest.raises(ValueError, match="loopback"):
        check_loopback("172.17.0.1")


@pytest.mark.asyncio
async def test_capacity_queue_is_fifo_and_cancellation_leaves_it() -> None:
    capacity = Capacity(default_slots=1, clock=asyncio.get_running_loop().time)
    assert capacity.try_acquire("m", "r0")
    assert not capacity.try_acquire("m", "r1")
    waiters = [asyncio.create_task(capacity.wait_for_slot("m", f"r{n}")) for n in (1, 2, 3)]
    await asyncio.sleep(0)  # each task runs up to its first wait: all three are in line
    assert [e.request_id for e in capacity.log if e.action == "queued"] == ["r1", "r2", "r3"]
    waiters[1].cancel()  # r2 gives up
    with pytest.raises(asyncio.CancelledError):
        await waiters[1]
    capacity.release("m", "r0")
    await waiters[0]
    capacity.release("m", "r1")
    await waiters[2]
    acquired = [e.request_id for e in capacity.log if e.action == "acquired"]
    assert acquired == ["r0", "r1", "r3"]
    assert [e.request_id for e in capacity.log if e.action == "left-queue"] == ["r2"]


@pytest.mark.asyncio
async def test_capacity_hold_blocks_until_it_expires() -> None:
    now = [0.0]
    capacity = Capacity(default_slots=2, clock=lambda: now[0])
    capacity.hold("m", 10)
    assert not capacity.try_acquire("m", "a")
    waiter = asyncio.create_task(capacity.wait_for_slot("m", "a"))
    await asyncio.sleep(0)
    assert not waiter.done()
    now[0] = 11.0
    capacity.wake_all()
    await waiter
    assert capacity.try_acquire("m", "b")  # two slots once the hold is over
    assert not capacity.try_acquire("m", "c")

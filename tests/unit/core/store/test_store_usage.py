"""Neurons per UTC day from the stored replies (real SQLite files, injected clocks)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import DB_FILENAME, AsyncChatStore, ChatStore, utc_day_start

#: 00:00 UTC on 12 March 2025, and a moment on each side of it.
MIDNIGHT = datetime(2025, 3, 12, tzinfo=UTC).timestamp()
JUST_BEFORE = MIDNIGHT - 1.0
JUST_AFTER = MIDNIGHT + 1.0
NOON = MIDNIGHT + 12 * 3600.0
NEXT_MIDNIGHT = MIDNIGHT + 24 * 3600.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    with ChatStore(tmp_path / DB_FILENAME, clock=lambda: NOON) as s:
        yield s


def add_reply(
    store: ChatStore,
    conv: Conversation,
    *,
    at: float,
    usage: dict[str, object] | None = None,
    meta: dict[str, object] | None = None,
    role: str = ROLE_ASSISTANT,
) -> Message:
    message = Message(
        id=new_id(),
        conversation_id=conv.id,
        parent_id=None,
        role=role,
        content="reply",
        created_at=at,
        usage=usage,
        meta=meta,
    )
    store.add_message(message)
    return message


def test_utc_day_start_is_midnight_utc_whatever_the_time_of_day() -> None:
    assert utc_day_start(MIDNIGHT) == MIDNIGHT
    assert utc_day_start(NOON) == MIDNIGHT
    assert utc_day_start(JUST_BEFORE) == MIDNIGHT - 24 * 3600.0
    assert utc_day_start(NEXT_MIDNIGHT - 0.001) == MIDNIGHT


def test_only_todays_assistant_replies_count(store: ChatStore) -> None:
    conv = store.create_conversation()
    add_reply(store, conv, at=JUST_BEFORE, usage={"neurons": 100.0})  # yesterday (UTC)
    add_reply(store, conv, at=MIDNIGHT, usage={"neurons": 1.25})
    add_reply(store, conv, at=JUST_AFTER, usage={"neurons": 2.5, "completion_tokens": 9})
    add_reply(store, conv, at=NOON, usage={"completion_tokens": 4})  # no neurons reported
    add_reply(store, conv, at=NOON, usage=None)
    add_reply(store, conv, at=NOON, role=ROLE_USER, usage={"neurons": 50.0})  # not a reply
    add_reply(store, conv, at=NEXT_MIDNIGHT, usage={"neurons": 1000.0})  # tomorrow
    assert store.neurons_today(now=NOON) == pytest.approx(3.75)
    assert store.neurons_today(now=JUST_BEFORE) == pytest.approx(100.0)
    assert store.neurons_today(now=NEXT_MIDNIGHT + 5) == pytest.approx(1000.0)
    assert store.neurons_today() == pytest.approx(3.75)  # the store's own clock: NOON


def test_the_header_figure_wins_a_reply_counts_once_and_a_cache_hit_not_at_all(
    store: ChatStore,
) -> None:
    conv = store.create_conversation()
    add_reply(store, conv, at=JUST_AFTER, usage={"neurons": 7.0}, meta={"neurons": 7.5})
    # a HIT replays the first reply's headers, neurons and all, but ran no inference (#23)
    add_reply(store, conv, at=JUST_AFTER, meta={"neurons": 0.5, "cache_status": "HIT"})
    assert store.neurons_today(now=NOON) == pytest.approx(7.5)


def test_deleted_conversations_still_count(store: ChatStore) -> None:
    conv = store.create_conversation()
    add_reply(store, conv, at=JUST_AFTER, usage={"neurons": 4.0})
    store.delete_conversation(conv.id)
    assert store.neurons_today(now=NOON) == pytest.approx(4.0)


def test_odd_rows_count_as_nothing_instead_of_failing(store: ChatStore, tmp_path: Path) -> None:
    conv = store.create_conversation()
    add_reply(store, conv, at=JUST_AFTER, usage={"neurons": 2.0})
    add_reply(store, conv, at=JUST_AFTER, usage={"neurons": "lots"})
    broken = add_reply(store, conv, at=JUST_AFTER, usage={"neurons": 1.0})
    conn = sqlite3.connect(tmp_path / DB_FILENAME)  # another writer left garbage behind
    with conn:
        conn.execute("UPDATE messages SET usage_json = '{oops' WHERE id = ?", (broken.id,))
    conn.close()
    assert store.neurons_today(now=NOON) == pytest.approx(2.0)


def test_an_empty_store_has_spent_nothing(store: ChatStore) -> None:
    assert store.neurons_today(now=NOON) == 0.0


@pytest.mark.asyncio
async def test_the_async_store_answers_off_the_caller_thread(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    with ChatStore(path) as sync:
        conv = sync.create_conversation()
        add_reply(sync, conv, at=JUST_BEFORE, usage={"neurons": 9.0})
        add_reply(sync, conv, at=JUST_AFTER, usage={"neurons": 0.75})
    store = await AsyncChatStore.open(path)
    try:
        assert await store.neurons_today(now=NOON) == pytest.approx(0.75)
        assert await store.neurons_today(now=JUST_BEFORE) == pytest.approx(9.0)
    finally:
        await store.close()

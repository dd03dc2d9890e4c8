"""Find in one conversation: every match, every branch, in order, nothing from elsewhere."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import (
    DB_FILENAME,
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    AsyncChatStore,
    ChatStore,
)
from support.conversations import chain

MESSAGES = 3000
#: Messages whose index modulo PERIOD is below HITS_PER_PERIOD mention the word: 700 of 3000.
PERIOD = 30
HITS_PER_PERIOD = 7
WORD = "kingfisher"
ODD_INPUTS = ['"', "*", "AND(", "NEAR(a b", "col:", "{a b}", "a\"b'c*d", "\x00", "   ", ""]


def _mentions(index: int) -> bool:
    return index % PERIOD < HITS_PER_PERIOD


def _text(index: int) -> str:
    if _mentions(index):
        return f"A {WORD} dived (message {index})."
    return f"Message {index}: nothing to see."


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    with ChatStore(tmp_path / DB_FILENAME) as s:
        yield s


def seed(store: ChatStore) -> tuple[str, list[str]]:
    """A 3,000-message conversation mentioning WORD 700 times (one more time on a side branch
    off its first message), and two other conversations mentioning it (one in its title)."""
    start = time.time() - 2 * MESSAGES
    long_haul = Conversation(id=new_id(), title="Long haul")
    messages = chain(long_haul, [_text(i) for i in range(MESSAGES)], start=start)
    # The earlier version of a reply, written after everything else: found, and last.
    side = Message(
        new_id(), long_haul.id, messages[0].id, ROLE_ASSISTANT, f"The older {WORD} reply."
    )
    side.created_at = start + MESSAGES
    other = Conversation(id=new_id(), title=f"More {WORD} sightings")
    others = chain(other, [f"A {WORD} again", f"and a {WORD} here"], start=start)
    store.insert_trees(
        [ConversationTree(long_haul, [*messages, side]), ConversationTree(other, others)]
    )
    wanted = [m.id for i, m in enumerate(messages) if _mentions(i)] + [side.id]
    return long_haul.id, wanted


def test_every_match_of_one_conversation_in_written_order(store: ChatStore) -> None:
    conversation_id, wanted = seed(store)
    hits = store.search(WORD, None, conversation_id=conversation_id)
    assert len(hits) == len(wanted) == MESSAGES // PERIOD * HITS_PER_PERIOD + 1
    assert [h.message_id for h in hits] == wanted  # the side branch included, by created_at
    assert {h.conversation_id for h in hits} == {conversation_id}
    assert all(h.role in (ROLE_USER, ROLE_ASSISTANT) for h in hits)  # no title hit
    assert all(f"{HIGHLIGHT_START}{WORD}{HIGHLIGHT_END}" in h.snippet for h in hits)
    everywhere = store.search(WORD, None)
    assert len(everywhere) == len(wanted) + 3  # the other's title and two messages
    assert {h.conversation_id for h in everywhere} != {conversation_id}


def test_the_filter_keeps_limit_prefix_and_deletion_rules(store: ChatStore) -> None:
    conversation_id, wanted = seed(store)
    assert [h.message_id for h in store.search(WORD, 5, conversation_id=conversation_id)] == (
        wanted[:5]
    )
    assert store.search(WORD, 0, conversation_id=conversation_id) == []
    prefix = store.search(WORD[:5], None, conversation_id=conversation_id)
    assert [h.message_id for h in prefix] == wanted
    assert store.search(WORD, None, conversation_id="no-such-conversation") == []
    store.delete_conversation(conversation_id)
    assert store.search(WORD, None, conversation_id=conversation_id) == []


@pytest.mark.parametrize("query", ODD_INPUTS)
def test_odd_input_in_one_conversation_never_raises(store: ChatStore, query: str) -> None:
    conversation_id, _ = seed(store)
    hits = store.search(query, None, conversation_id=conversation_id)
    assert {h.conversation_id for h in hits} <= {conversation_id}


@pytest.mark.asyncio
async def test_the_async_store_finds_in_one_conversation(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conversation_id, wanted = await asyncio.to_thread(_seed_file, path)
    store = await AsyncChatStore.open(path)
    try:
        hits = await store.search(WORD, None, conversation_id=conversation_id)
        assert [h.message_id for h in hits] == wanted
        assert len(await store.search(WORD)) == 50  # the default limit, all conversations
    finally:
        await store.close()


def _seed_file(path: Path) -> tuple[str, list[str]]:
    with ChatStore(path) as store:
        return seed(store)

"""Full-text search: matches, highlights, titles, trash, and odd user input."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER, Conversation, Message, new_id
from flarechat.core.store import (
    DB_FILENAME,
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    ChatStore,
    SearchHit,
)

ODD_INPUTS = [
    '"',
    '""',
    "*",
    "**",
    "AND(",
    "OR",
    "NOT",
    "NEAR(a b",
    "a AND",
    "^",
    "-",
    ":",
    "col:",
    "content:x",
    "(",
    ")",
    "{a b}",
    "+",
    "'",
    "\\",
    "a\"b'c*d",
    "\x00",
    "   ",
    "",
    "🔥",
    "x" * 2000,
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    with ChatStore(tmp_path / DB_FILENAME) as s:
        yield s


def add_conversation(store: ChatStore, title: str, *texts: str) -> tuple[str, list[str]]:
    conv = store.create_conversation(Conversation(id=new_id(), title=title))
    parent: str | None = None
    ids = []
    for index, text in enumerate(texts):
        role = ROLE_USER if index % 2 == 0 else ROLE_ASSISTANT
        msg = Message(new_id(), conv.id, parent, role, text)
        store.add_message(msg)
        parent = msg.id
        ids.append(msg.id)
    return conv.id, ids


def plain(hit: SearchHit) -> str:
    return hit.snippet.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_END, "")


def test_finds_message_with_highlight(store: ChatStore) -> None:
    conv_id, ids = add_conversation(
        store, "Cooking", "How long to boil an egg?", "About seven minutes for a firm yolk."
    )
    add_conversation(store, "Other", "Nothing relevant here")
    hits = store.search("yolk")
    assert [(h.conversation_id, h.message_id, h.role) for h in hits] == [
        (conv_id, ids[1], ROLE_ASSISTANT)
    ]
    assert hits[0].conversation_title == "Cooking"
    assert f"{HIGHLIGHT_START}yolk{HIGHLIGHT_END}" in hits[0].snippet
    assert plain(hits[0]) == "About seven minutes for a firm yolk."


def test_every_term_must_match_and_last_is_a_prefix(store: ChatStore) -> None:
    _, ids = add_conversation(store, "t", "the quick brown fox", "a quick red panda")
    assert [h.message_id for h in store.search("quick fo")] == [ids[0]]
    assert {h.message_id for h in store.search("quick")} == set(ids)
    assert store.search("quick fox panda") == []


def test_case_and_diacritics_insensitive(store: ChatStore) -> None:
    _, ids = add_conversation(store, "t", "Un café à Paris")
    assert [h.message_id for h in store.search("CAFE paris")] == [ids[0]]


def test_title_matches_come_first(store: ChatStore) -> None:
    conv_id, ids = add_conversation(store, "Rust lifetimes", "explain rust borrowing")
    hits = store.search("rust")
    assert hits[0] == SearchHit(
        conv_id, "Rust lifetimes", None, None, f"{HIGHLIGHT_START}Rust{HIGHLIGHT_END} lifetimes"
    )
    assert [h.message_id for h in hits[1:]] == [ids[0]]


def test_renamed_title_is_searchable_and_old_one_gone(store: ChatStore) -> None:
    conv_id, _ = add_conversation(store, "Alpha plans")
    store.update_conversation(conv_id, title="Omega plans")
    assert store.search("alpha") == []
    assert [h.conversation_id for h in store.search("omega")] == [conv_id]


def test_partial_saves_are_searchable_and_reindexed(store: ChatStore) -> None:
    _, ids = add_conversation(store, "t", "first draft")
    store.save_partial(ids[0], "second version", "")
    assert store.search("draft") == []
    assert [h.message_id for h in store.search("version")] == [ids[0]]


def test_deleted_conversations_are_not_found(store: ChatStore) -> None:
    conv_id, _ = add_conversation(store, "Secret project", "zebra crossing")
    store.delete_conversation(conv_id)
    assert store.search("zebra") == []
    assert store.search("secret") == []
    store.restore_conversation(conv_id)
    assert len(store.search("zebra")) == 1
    store.delete_conversation(conv_id)
    store.purge_deleted(older_than=0)
    assert store.search("zebra") == []
    assert store.check_integrity() == []


def test_limit(store: ChatStore) -> None:
    add_conversation(store, "Many apples", *[f"apple number {i}" for i in range(30)])
    assert len(store.search("apple", limit=10)) == 10
    assert store.search("apple", limit=0) == []


def test_operators_are_searched_as_words(store: ChatStore) -> None:
    _, ids = add_conversation(store, "t", "cats AND dogs", "cats or dogs")
    assert {h.message_id for h in store.search("cats AND dogs")} == {ids[0]}
    assert {h.message_id for h in store.search('"dogs"')} == set(ids)
    assert {h.message_id for h in store.search("dogs*")} == set(ids)


@pytest.mark.parametrize("query", ODD_INPUTS)
def test_odd_input_never_raises(store: ChatStore, query: str) -> None:
    add_conversation(store, "Odd * title (AND)", 'a "quoted" word AND( x NEAR y')
    hits = store.search(query)
    assert all(isinstance(h, SearchHit) for h in hits)


def test_random_punctuation_never_raises(store: ChatStore) -> None:
    add_conversation(store, "t", "some text to search")
    rng = random.Random(4)
    alphabet = "\"*()^:-+{}[]'\\ ANDORNEARNOT ab"
    for _ in range(300):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        hits = store.search(query)  # raising would be the failure
        assert all(h.snippet.count(HIGHLIGHT_START) == h.snippet.count(HIGHLIGHT_END) for h in hits)


def test_message_hits_come_newest_first_whatever_their_relevance(store: ChatStore) -> None:
    """Issue 12 #4: SQLite stops after ``limit`` rows instead of scoring every match."""
    _, old = add_conversation(store, "t", "heron heron heron heron", "a heron")
    _, new = add_conversation(store, "u", "one heron among many other words here")
    hits = store.search("heron")
    assert [h.message_id for h in hits] == [new[0], old[1], old[0]]


def test_limit_keeps_the_newest_and_skips_deleted_conversations(store: ChatStore) -> None:
    _, kept = add_conversation(store, "t", *[f"apple number {i}" for i in range(8)])
    gone, _ = add_conversation(store, "u", *[f"apple again {i}" for i in range(8)])
    store.delete_conversation(gone)
    hits = store.search("apple", limit=3)
    assert [h.message_id for h in hits] == kept[:-4:-1]
    assert all(f"{HIGHLIGHT_START}apple{HIGHLIGHT_END}" in h.snippet for h in hits)


def test_titles_then_newest_messages_within_the_limit(store: ChatStore) -> None:
    conv_id, ids = add_conversation(store, "Heron notes", "heron one", "heron two", "heron three")
    hits = store.search("heron", limit=3)
    assert [(h.conversation_id, h.message_id) for h in hits] == [
        (conv_id, None),
        (conv_id, ids[2]),
        (conv_id, ids[1]),
    ]

"""ConversationTree branches and paths; auto_title; ids."""

from __future__ import annotations

import copy
import gc
import uuid
from collections.abc import Callable

import pytest

from flarechat.core.conversation import (
    DEFAULT_TITLE,
    ROLE_ASSISTANT,
    ROLE_USER,
    TITLE_MAX_LEN,
    Conversation,
    ConversationTree,
    Message,
    auto_title,
    new_id,
)

CONV_ID = "c1"


def msg(message_id: str, parent: str | None, *, role: str = ROLE_USER, at: float = 0.0) -> Message:
    return Message(
        id=message_id,
        conversation_id=CONV_ID,
        parent_id=parent,
        role=role,
        content=f"text of {message_id}",
        created_at=at,
    )


def contents(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


@pytest.fixture
def tree() -> ConversationTree:
    """u1 -> a1 -> u2 -> a2, plus a regenerated a1b under u1 and an edited u2b under a1."""
    t = ConversationTree(Conversation(id=CONV_ID))
    t.add(msg("u1", None, at=1))
    t.add(msg("a1", "u1", role=ROLE_ASSISTANT, at=2))
    t.add(msg("u2", "a1", at=3))
    t.add(msg("a2", "u2", role=ROLE_ASSISTANT, at=4))
    t.add(msg("u2b", "a1", at=5))
    t.add(msg("a1b", "u1", role=ROLE_ASSISTANT, at=6))
    return t


def test_empty_tree_has_no_path() -> None:
    t = ConversationTree(Conversation(id=CONV_ID))
    assert t.path() == []
    assert t.last() is None
    assert len(t) == 0


def test_linear_conversation_path_follows_additions() -> None:
    t = ConversationTree(Conversation(id=CONV_ID))
    t.add(msg("u1", None, at=1))
    t.add(msg("a1", "u1", role=ROLE_ASSISTANT, at=2))
    assert contents(t.path()) == ["u1", "a1"]
    last = t.last()
    assert last is not None
    assert last.id == "a1"


def test_added_message_becomes_selected_child(tree: ConversationTree) -> None:
    # a1b was added last under u1: the path shows it and ends there (it has no children)
    assert contents(tree.path()) == ["u1", "a1b"]
    assert tree.selected[None] == "u1"
    assert tree.selected["u1"] == "a1b"


def test_siblings_in_creation_order_with_position(tree: ConversationTree) -> None:
    assert contents(tree.siblings("a1b")) == ["a1", "a1b"]
    assert tree.sibling_position("a1") == (1, 2)
    assert tree.sibling_position("a1b") == (2, 2)
    assert tree.sibling_position("u1") == (1, 1)


def test_select_sibling_continues_with_its_selected_descendants(tree: ConversationTree) -> None:
    tree.select("a1")
    # under a1 the latest choice was u2b (added after u2), which has no reply yet
    assert contents(tree.path()) == ["u1", "a1", "u2b"]
    tree.select("u2")
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2"]
    tree.select("a1b")
    tree.select("a1")
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2"]  # the choice under a1 is remembered


def test_select_deep_message_selects_its_ancestors(tree: ConversationTree) -> None:
    tree.select("a2")  # e.g. opening a search hit on a hidden branch
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2"]


def test_adding_under_hidden_branch_makes_it_visible(tree: ConversationTree) -> None:
    tree.add(msg("a2b", "u2", role=ROLE_ASSISTANT, at=7))
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2b"]


def test_constructor_accepts_any_order_and_saved_selection() -> None:
    messages = [
        msg("a1b", "u1", role=ROLE_ASSISTANT, at=6),
        msg("a1", "u1", role=ROLE_ASSISTANT, at=2),
        msg("u1", None, at=1),
    ]
    t = ConversationTree(Conversation(id=CONV_ID), messages, {"u1": "a1"})
    assert contents(t.path()) == ["u1", "a1"]
    assert contents(t.siblings("a1")) == ["a1", "a1b"]


def test_constructor_defaults_to_newest_child_and_ignores_bad_selection() -> None:
    messages = [msg("u1", None, at=1), msg("a1", "u1", at=2), msg("a1b", "u1", at=3)]
    t = ConversationTree(Conversation(id=CONV_ID), messages, {"u1": "nope", "a1": "u1"})
    assert contents(t.path()) == ["u1", "a1b"]
    assert "a1" not in t.selected


def test_equal_timestamps_keep_insertion_order() -> None:
    t = ConversationTree(Conversation(id=CONV_ID))
    t.add(msg("u1", None, at=1))
    for name in ("x", "y", "z"):
        t.add(msg(name, "u1", role=ROLE_ASSISTANT, at=5))
    assert contents(t.siblings("x")) == ["x", "y", "z"]


def test_iteration_covers_every_branch_parents_first(tree: ConversationTree) -> None:
    order = contents(list(tree))
    assert sorted(order) == sorted(["u1", "a1", "u2", "a2", "u2b", "a1b"])
    for message in tree:
        if message.parent_id is not None:
            assert order.index(message.parent_id) < order.index(message.id)


def test_get_and_contains(tree: ConversationTree) -> None:
    assert tree.get("u2").content == "text of u2"
    assert "u2" in tree
    assert "missing" not in tree
    with pytest.raises(KeyError):
        tree.get("missing")


def test_path_to_returns_root_chain(tree: ConversationTree) -> None:
    assert contents(tree.path_to("a2")) == ["u1", "a1", "u2", "a2"]


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (msg("x", "nobody"), "unknown parent"),
        (msg("u1", None), "duplicate"),
        (Message("y", "other", None, ROLE_USER, "hi"), "another conversation"),
    ],
)
def test_add_rejects_inconsistent_messages(
    tree: ConversationTree, message: Message, error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        tree.add(message)


def test_constructor_rejects_orphans() -> None:
    with pytest.raises(ValueError, match="unknown parents: a9"):
        ConversationTree(Conversation(id=CONV_ID), [msg("u1", None), msg("a9", "gone")])


def test_new_ids_are_unique_hex() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_new_ids_are_random_uuids_as_uuid4_makes_them() -> None:
    for made in (new_id() for _ in range(200)):
        parsed = uuid.UUID(hex=made)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert parsed.hex == made
    # 122 random bits: each of them is set in some id of a few hundred
    seen_ones = 0
    for made in (new_id() for _ in range(400)):
        seen_ones |= int(made, 16)
    assert seen_ones | _fixed_uuid4_bits() == (1 << 128) - 1


def _fixed_uuid4_bits() -> int:
    """The bits uuid4 fixes (version nibble, variant's two bits), asked of uuid itself: those
    it clears in an all-ones number or sets in an all-zeros one."""
    full = (1 << 128) - 1
    return (full & ~uuid.UUID(int=full, version=4).int) | uuid.UUID(int=0, version=4).int


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Hello there", "Hello there"),
        ("  Explain\n\n  quicksort\tplease  ", "Explain quicksort please"),
        ("", DEFAULT_TITLE),
        (" \n\t ", DEFAULT_TITLE),
        (
            "Write a haiku about the sea and the mountains in autumn light please",
            "Write a haiku about the sea and the mountains…",
        ),
        ("x" * 100, "x" * (TITLE_MAX_LEN - 1) + "…"),
        ("Is this ok, or is it a very, very long, question about punctuation?", None),
    ],
)
def test_auto_title(text: str, title: str | None) -> None:
    result = auto_title(text)
    assert len(result) <= TITLE_MAX_LEN
    assert "\n" not in result
    if title is not None:
        assert result == title
    else:
        assert result.endswith("…")
        assert not result[:-1].endswith((",", " "))


def test_auto_title_short_limit() -> None:
    assert auto_title("alpha beta gamma", max_len=12) == "alpha beta…"


def test_explicit_selection_keeps_only_non_default_choices(tree: ConversationTree) -> None:
    assert tree.explicit_selection() == {}  # every choice is the newest child
    tree.select("u2")
    assert tree.explicit_selection() == {"u1": "a1", "a1": "u2"}
    rebuilt = ConversationTree(tree.conversation, list(tree), tree.explicit_selection())
    assert contents(rebuilt.path()) == contents(tree.path())


# -- the path is walked once per state of the tree (issue #12: switching) ----------------------


def count_walks(tree: ConversationTree, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time ``tree`` really walks its path."""
    walks: list[int] = []
    walk = tree._walk

    def counted() -> tuple[list[Message], dict[str, int]]:
        walks.append(1)
        return walk()

    monkeypatch.setattr(tree, "_walk", counted)
    return walks


def test_path_is_walked_once_however_often_it_is_read(
    tree: ConversationTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = count_walks(tree, monkeypatch)
    first = tree.path()
    assert [tree.path() for _ in range(3)] == [first] * 3
    assert tree.last() is first[-1]
    assert len(walks) == 1


def test_path_read_again_is_a_copy_the_caller_may_change(tree: ConversationTree) -> None:
    path = tree.path()
    path.pop()
    assert contents(tree.path()) == ["u1", "a1b"]


def test_adding_or_choosing_walks_the_path_again(
    tree: ConversationTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = count_walks(tree, monkeypatch)
    assert contents(tree.path()) == ["u1", "a1b"]
    tree.select("a2")
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2"]
    tree.add(msg("u3", "a2", at=7))
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2", "u3"]
    tree.selected["a1"] = "u2b"  # a write from outside: still seen
    assert contents(tree.path()) == ["u1", "a1", "u2b"]
    assert len(walks) == 4


def test_walk_matches_the_chosen_child_chain_in_a_long_branched_tree() -> None:
    t = ConversationTree(Conversation(id=CONV_ID))
    parent: str | None = None
    for index in range(300):
        t.add(msg(f"m{index}", parent, at=index))
        if index % 7 == 0:
            t.add(msg(f"alt{index}", parent, at=index + 0.5))  # a newer sibling, then back
            t.select(f"m{index}")
        parent = f"m{index}"
    chain: list[Message] = []
    node = t.chosen_child(None)
    while node is not None:
        chain.append(node)
        node = t.chosen_child(node.id)
    assert t.path() == chain
    assert contents(t.path()) == [f"m{index}" for index in range(300)]


def test_on_path_follows_the_chosen_branch_without_walking_again(
    tree: ConversationTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = count_walks(tree, monkeypatch)
    assert [tree.on_path(m) for m in ("u1", "a1b", "a1", "u2", "a2")] == [
        *(True, True),
        *(False, False, False),
    ]
    assert len(walks) == 1  # one walk answers every question about the same state
    tree.select("a2")
    assert [tree.on_path(m) for m in ("a1b", "a1", "u2", "a2", "u2b")] == [
        *(False, True, True, True),
        False,
    ]
    tree.selected["a1"] = "u2b"  # a write from outside: still seen
    assert tree.on_path("u2b")
    assert not tree.on_path("a2")
    assert len(walks) == 3


def test_path_ids_and_positions_follow_the_path_and_are_made_once_per_state(
    tree: ConversationTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = count_walks(tree, monkeypatch)
    assert tree.path_ids() == ("u1", "a1b")
    assert tree.path_positions() == {"u1": 0, "a1b": 1}
    assert tree.path_positions() is tree.path_positions()  # made once, shared
    tree.select("a2")
    assert tree.path_ids() == ("u1", "a1", "u2", "a2")
    assert tree.path_positions() == {"u1": 0, "a1": 1, "u2": 2, "a2": 3}
    tree.selected["a1"] = "u2b"  # a write from outside: still seen
    assert tree.path_ids() == ("u1", "a1", "u2b")
    assert "a2" not in tree.path_positions()
    assert len(walks) == 3


# -- building a tree from a conversation's messages (issue #12: switching) ---------------------


def test_messages_given_out_of_time_order_still_make_siblings_in_creation_order() -> None:
    """Whatever order they come in, siblings are in creation order, equal times in the order
    given, and each parent's newest child is the one shown."""
    given = [
        msg("u1", None, at=1),
        msg("a1c", "u1", role=ROLE_ASSISTANT, at=9),
        msg("a1", "u1", role=ROLE_ASSISTANT, at=2),
        msg("a1b", "u1", role=ROLE_ASSISTANT, at=5),
        msg("a1d", "u1", role=ROLE_ASSISTANT, at=5),  # a tie: after a1b, as given
        msg("u2", "a1b", at=6),
    ]
    t = ConversationTree(Conversation(id=CONV_ID), given)
    assert contents(t.children("u1")) == ["a1", "a1b", "a1d", "a1c"]
    assert contents(t.children(None)) == ["u1"]
    assert t.selected == {None: "u1", "u1": "a1c", "a1b": "u2"}
    assert contents(t.path()) == ["u1", "a1c"]
    assert contents(list(t)) == ["u1", "a1", "a1b", "u2", "a1d", "a1c"]
    assert t.explicit_selection() == {}
    t.select("u2")
    assert contents(t.path()) == ["u1", "a1b", "u2"]
    assert t.explicit_selection() == {"u1": "a1b"}


def test_a_tree_says_whether_each_message_came_after_its_parent() -> None:
    """The store's rows do (a parent is stored first): then none can be orphaned or loop,
    and the store need not look for them."""
    line = [msg("u1", None, at=1), msg("a1", "u1", at=2), msg("u2", "a1", at=3)]
    assert ConversationTree(Conversation(id=CONV_ID), line).parents_first
    late = ConversationTree(Conversation(id=CONV_ID), [line[1], line[0], line[2]])
    assert not late.parents_first
    assert contents(late.path()) == ["u1", "a1", "u2"]


def test_a_long_line_of_messages_makes_no_list_for_each() -> None:
    """One child a message: a list each was a third of the objects a 5,000-message chat made
    for the garbage collector to walk."""
    messages = [msg(f"m{i}", f"m{i - 1}" if i else None, at=i) for i in range(2_000)]
    t = ConversationTree(Conversation(id=CONV_ID), messages)
    lists = [r for r in gc.get_referrers(messages[5]) if isinstance(r, list)]
    assert lists == [messages]  # the test's own, and none of the tree's
    assert contents(t.path()) == [m.id for m in messages]
    assert t.children("m5") == [messages[6]]
    assert t.siblings("m5") == [messages[5]]


@pytest.mark.parametrize(
    "write",
    [
        lambda s: s.__setitem__("a1", "u2b"),
        lambda s: s.update({"a1": "u2b"}),
        lambda s: s.update(a1="u2b"),
        lambda s: s.__ior__({"a1": "u2b"}),
        lambda s: s.__delitem__("a1"),
        lambda s: s.pop("a1"),
        lambda s: s.popitem(),
        lambda s: (s.pop("a1"), s.setdefault("a1", "u2b")),
        lambda s: s.clear(),
    ],
)
def test_every_way_of_writing_the_selection_from_outside_is_seen(
    tree: ConversationTree, write: Callable[[dict[str | None, str]], object]
) -> None:
    """A walked path is kept while the selection takes no writes (comparing the whole of a
    long chat's selection each read cost ~0.3 ms); any write walks it again."""
    tree.select("a2")
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2"]
    expected = dict(tree.selected)
    write(expected)
    write(tree.selected)
    rebuilt = ConversationTree(tree.conversation, list(tree))
    rebuilt.selected = expected  # a whole new selection is seen too
    assert contents(tree.path()) == contents(rebuilt.path())
    assert tree.path_ids() == tuple(contents(rebuilt.path()))
    assert tree.selected == expected


def test_a_copied_tree_keeps_its_selection_and_path(tree: ConversationTree) -> None:
    tree.select("u2")
    copied = copy.deepcopy(tree)
    assert copied.selected == tree.selected
    assert contents(copied.path()) == ["u1", "a1", "u2", "a2"]
    copied.selected["a1"] = "u2b"
    assert contents(copied.path()) == ["u1", "a1", "u2b"]
    assert contents(tree.path()) == ["u1", "a1", "u2", "a2"]

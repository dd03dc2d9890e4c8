"""Reading a conversation back: records decoded exactly as json.loads would, damaged ones as
empty (logged), messages identical to those written, the path walked on the store's thread."""

from __future__ import annotations

import copy
import dataclasses
import gc
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    Attachment,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import DB_FILENAME, ChatStore
from flarechat.core.store import _codec as codec
from support.conversations import chain, save

#: Column texts and what a record reads as (json.loads' rules; anything not an object: None).
RECORD_TEXTS: list[tuple[str, dict[str, Any] | None]] = [
    (
        '{"prompt_tokens":40,"completion_tokens":470}',
        {"prompt_tokens": 40, "completion_tokens": 470},
    ),
    (' \n{"a": [1, 2.5, null, true]}\t ', {"a": [1, 2.5, None, True]}),
    ('{"ttft": NaN, "big": 1e400}', {"ttft": float("nan"), "big": float("inf")}),
    ('{"text": "caf\\u00e9 \\ud83d\\ude00"}', {"text": "café 😀"}),
    ('{"a":1}{"b":2}', None),  # extra data
    ('{"a":1},{"b":2}', None),
    ("[1, 2]", None),
    ("42", None),
    ('"text"', None),
    ("\ufeff{}", None),  # json.loads refuses a BOM in text
    ("{not json", None),
    ("", None),
]


def fill(path: Path, count: int) -> tuple[Conversation, list[Message]]:
    conv = Conversation(id=new_id(), title="Read back")
    messages = chain(conv, [f"text {index}" for index in range(count)])
    for index, message in enumerate(messages):
        if message.role == ROLE_ASSISTANT:
            message.usage = {"prompt_tokens": index, "completion_tokens": 2 * index}
            message.meta = {"log_id": f"log{index}", "cache_status": "MISS"}
            message.timings = {"ttft": index / 10}
            message.request = {"model": "@cf/m", "route": "direct"}
            message.tool_calls = [{"id": f"call{index}", "name": "f", "arguments": "{}"}]
    save(path, [ConversationTree(conv, messages)])
    return conv, messages


def same(loaded: Any, expected: Any) -> bool:
    """Equal, NaN included (json.dumps writes both the same way)."""
    return json.dumps(loaded, sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_messages_read_back_equal_those_written(tmp_path: Path) -> None:
    conv, written = fill(tmp_path / DB_FILENAME, 40)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        tree = store.load_tree(conv.id)
    assert list(tree) == written
    assert tree.path() == written


@pytest.mark.parametrize(("text", "expected"), RECORD_TEXTS)
def test_a_record_reads_as_json_loads_reads_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str, expected: dict[str, Any] | None
) -> None:
    path = tmp_path / DB_FILENAME
    conv, written = fill(path, 2)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "UPDATE messages SET usage_json = ?, meta_json = ? WHERE id = ?",
        (text, text, written[1].id),
    )
    conn.close()
    with ChatStore(path) as store:
        reply = store.load_tree(conv.id).get(written[1].id)
    assert same(reply.usage, expected)
    assert same(reply.meta, expected)
    try:
        json.loads(text)
    except ValueError:
        assert "not valid JSON" in caplog.text  # damage is logged, never silently dropped


def test_a_parent_stored_after_its_child_is_not_taken_for_lost(tmp_path: Path) -> None:
    """Rows out of order (written without foreign keys) still link up, and nothing is
    reported as a lost parent."""
    path = tmp_path / DB_FILENAME
    conv, written = fill(path, 4)
    conn = sqlite3.connect(path, isolation_level=None)
    first = conn.execute("SELECT seq FROM messages WHERE id = ?", (written[0].id,)).fetchone()[0]
    top = conn.execute("SELECT max(seq) FROM messages").fetchone()[0]
    conn.execute("UPDATE messages SET seq = ? WHERE seq = ?", (top + 1, first))
    conn.close()
    with ChatStore(path) as store:
        tree = store.load_tree(conv.id)
        assert store.report.problems == []
    assert tree.path() == written


def test_the_path_is_walked_while_loading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening reads the path right after the load (on the GUI thread): it is ready."""
    conv, written = fill(tmp_path / DB_FILENAME, 10)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        tree = store.load_tree(conv.id)
    monkeypatch.setattr(tree, "_walk", lambda: pytest.fail("walked again after loading"))
    assert tree.path() == written


def test_the_path_ids_and_positions_are_made_while_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transcript's index of the path and a search hit's on_path come ready-made."""
    conv, written = fill(tmp_path / DB_FILENAME, 10)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        tree = store.load_tree(conv.id)
    monkeypatch.setattr(tree, "_walk", lambda: pytest.fail("walked again after loading"))
    assert tree.path_ids() == tuple(m.id for m in written)
    assert tree.path_positions() == {m.id: at for at, m in enumerate(written)}
    assert tree.on_path(written[3].id)


def test_no_collections_run_while_a_chat_is_read_and_the_collector_is_back_on_after(
    tmp_path: Path,
) -> None:
    """Its thousands of objects were walked by every young collection while they were made,
    and now and then a full pass landed in the open (issue #12)."""
    conv, _ = fill(tmp_path / DB_FILENAME, 3000)
    collections: list[int] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    with ChatStore(tmp_path / DB_FILENAME) as store:
        gc.collect()  # which generation the next collection takes depends on those before
        gc.callbacks.append(counted)
        try:
            tree = store.load_tree(conv.id)
        finally:
            gc.callbacks.remove(counted)
        assert gc.isenabled()
    assert len(tree) == 3000
    assert collections in ([], [0])  # at most the one young collection as it is turned back on


def test_a_collector_turned_off_by_someone_else_stays_off(tmp_path: Path) -> None:
    """Start-up holds collections off until it settles: that is theirs to end."""
    conv, _ = fill(tmp_path / DB_FILENAME, 5)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        gc.disable()
        try:
            store.load_tree(conv.id)
            assert not gc.isenabled()
        finally:
            gc.enable()


def test_a_message_without_images_or_calls_holds_no_lists_until_read(tmp_path: Path) -> None:
    """Two empty lists a message were two thirds of a long chat's objects for the collector
    to walk; read, each is a list of its own, which the reader may fill."""
    conv, written = fill(tmp_path / DB_FILENAME, 4)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        tree = store.load_tree(conv.id)
    first, second = tree.path()[:2]
    assert not any(isinstance(o, list) for o in gc.get_referents(first))
    assert first.attachments == []
    assert first.tool_calls == []
    first.attachments.append(Attachment("image/png", b"x", 1, 1))
    assert len(first.attachments) == 1
    assert second.attachments == []
    assert second == written[1]
    assert copy.deepcopy(second) == written[1]


def test_images_come_back_on_their_messages_in_order_and_no_others(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    trees = []
    for name in ("shown", "other"):
        conv = Conversation(id=new_id(), title=name)
        tree = ConversationTree(conv)
        first = Message(new_id(), conv.id, None, ROLE_USER, "look", created_at=1)
        first.attachments = [
            Attachment("image/png", f"{name}{index}".encode(), 2, 3, f"{index}.png")
            for index in (2, 0, 1)
        ]
        tree.add(first)
        tree.add(Message(new_id(), conv.id, first.id, ROLE_ASSISTANT, "seen", created_at=2))
        trees.append(tree)
    with ChatStore(path) as store:
        store.insert_trees(trees)
        loaded = store.load_tree(trees[0].conversation.id)
    assert list(loaded) == list(trees[0])
    assert [a.name for a in loaded.path()[0].attachments] == ["2.png", "0.png", "1.png"]
    assert loaded.path()[1].attachments == []


def test_images_of_a_long_chat_in_a_file_of_few_images_come_back_in_order(
    tmp_path: Path,
) -> None:
    """Fewer images in the file than messages in the chat: read from the images' side."""
    path = tmp_path / DB_FILENAME
    trees = []
    for name in ("shown", "other"):
        conv = Conversation(id=new_id(), title=name)
        messages = chain(conv, [f"{name} {index}" for index in range(12)])
        messages[4].attachments = [
            Attachment("image/png", f"{name}{index}".encode(), 2, 3, f"{index}.png")
            for index in (1, 0)
        ]
        messages[8].attachments = [Attachment("image/jpeg", name.encode(), 4, 5, "8.jpg")]
        trees.append(ConversationTree(conv, messages))
    with ChatStore(path) as store:
        store.insert_trees(trees)
        loaded = store.load_tree(trees[0].conversation.id)
    assert list(loaded) == list(trees[0])
    names = [[a.name for a in m.attachments] for m in loaded.path()]
    assert names == [[], [], [], [], ["1.png", "0.png"], [], [], [], ["8.jpg"], [], [], []]
    assert loaded.path()[4].attachments[0].data == b"shown1"


def test_a_long_chat_in_a_file_without_images_is_not_walked_for_them(tmp_path: Path) -> None:
    """Looking for images costs a few steps, not an index probe for each of its messages."""
    path = tmp_path / DB_FILENAME
    conv, messages = fill(path, 2_000)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0  # go on

    with ChatStore(path) as store:
        store._conn.set_progress_handler(count, 1)
        store._attach_images(conv.id, messages)  # the step of load_tree measured alone
        store._conn.set_progress_handler(None, 1)
    assert 0 < steps < len(messages)


def test_every_field_of_a_message_reads_back_in_its_own_place(tmp_path: Path) -> None:
    """Rows become messages by position: each field holds a value no other field has."""
    conv = Conversation(id=new_id(), title="Every field")
    question = Message(new_id(), conv.id, None, ROLE_USER, "question", created_at=1.0)
    question.attachments.append(Attachment("image/png", b"png", 3, 4, name="a.png"))
    reply = Message(
        id=new_id(),
        conversation_id=conv.id,
        parent_id=question.id,
        role=ROLE_ASSISTANT,
        content="answer",
        reasoning="thought",
        status="stopped",
        created_at=2.0,
        model="@cf/m",
        finish_reason="length",
        request={"route": "direct"},
        usage={"prompt_tokens": 1},
        meta={"log_id": "log"},
        timings={"ttft": 0.5},
        error={"kind": "cut"},
        tool_calls=[{"id": "call", "name": "f", "arguments": "{}"}],
        tool_call_id="answers-call",
    )
    tree = ConversationTree(conv, [question, reply])
    with ChatStore(tmp_path / DB_FILENAME) as store:
        store.insert_trees([tree])
        loaded = store.load_tree(conv.id)
    assert loaded.path() == [question, reply]
    assert loaded.get(question.id).tool_calls == []
    assert loaded.get(reply.id).attachments == []


def test_records_are_read_when_first_asked_for_and_every_use_sees_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a long conversation decoded every record; now only those read are."""
    read: list[str] = []
    real = codec._load_json

    def counting(text: str | None) -> dict[str, Any] | None:
        read.append(text or "")
        return real(text)

    conv, written = fill(tmp_path / DB_FILENAME, 6)
    monkeypatch.setattr(codec, "_load_json", counting)
    with ChatStore(tmp_path / DB_FILENAME) as store:
        tree = store.load_tree(conv.id)
    read.clear()  # the conversation's own params and selection are read at once
    reply, other = tree.get(written[1].id), tree.get(written[3].id)
    assert reply.usage == written[1].usage
    assert read == ['{"prompt_tokens":1,"completion_tokens":2}']
    assert reply == written[1]  # equality reads the rest
    assert copy.copy(other) == written[3]
    assert dataclasses.replace(tree.get(written[5].id), content="x").meta == written[5].meta
    assert dataclasses.asdict(tree.get(written[1].id))["timings"] == written[1].timings
    assert list(tree) == written
    assert not hasattr(tree.get(written[0].id), "_stored")  # a user message has no records

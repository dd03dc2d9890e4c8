"""Markdown and JSON export, export_all / import_all, and no secret in any export."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    STATUS_FAILED,
    STATUS_STOPPED,
    Conversation,
    ConversationTree,
    Message,
)
from flarechat.core.export import (
    CONVERSATION_FORMAT,
    EXPORT_FORMAT,
    EXPORT_VERSION,
    IMPORTED_SUFFIX,
    ImportFormatError,
    conversation_to_json,
    conversation_to_markdown,
    export_all,
    import_all,
)
from flarechat.core.store import DB_FILENAME, ChatStore

SECRETS = ("tok-SECRET-a", "tok-SECRET-b", "tok-SECRET-c", "gw-SECRET-d")
TOKEN_LIKE = re.compile(r"SECRET")
LEAKY_REQUEST: dict[str, Any] = {
    "model": "@cf/meta/llama",
    "route": "gateway-url",
    "endpoint": "openai",
    "params": {"max_tokens": 2048, "temperature": 0.3},
    "system_prompt": "Be brief",
    "gateway": {"cache_ttl": 60, "cf-aig-authorization": "Bearer gw-SECRET-d"},
    "token": "tok-SECRET-a",
    "headers": {"Authorization": "Bearer tok-SECRET-b"},
    "API_KEY": "tok-SECRET-c",
}


def message(message_id: str, parent: str | None, role: str, content: str, **kw: Any) -> Message:
    return Message(message_id, "c1", parent, role, content, created_at=float(len(message_id)), **kw)


def sample_tree() -> ConversationTree:
    """A question, two versions of the answer (the second shown), a follow-up on the first."""
    conv = Conversation(
        id="c1", title="Herons", created_at=0.0, model="@cf/meta/llama", system_prompt="Be brief"
    )
    tree = ConversationTree(conv)
    tree.add(message("u", None, ROLE_USER, "What is a heron?"))
    tree.add(
        message(
            "a1",
            "u",
            ROLE_ASSISTANT,
            "A bird.",
            model="@cf/meta/llama",
            reasoning="User asks about birds.",
            request=dict(LEAKY_REQUEST),
            usage={"total_tokens": 10, "neurons": 1.5},
        )
    )
    tree.add(message("u2", "a1", ROLE_USER, "Where do they live?"))
    tree.add(
        message(
            "a2",
            "u",
            ROLE_ASSISTANT,
            "A long-legged wading bird",
            model="@cf/x",
            status=STATUS_STOPPED,
        )
    )
    return tree


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChatStore]:
    with ChatStore(tmp_path / DB_FILENAME) as s:
        yield s


@pytest.fixture
def other_store(tmp_path: Path) -> Iterator[ChatStore]:
    with ChatStore(tmp_path / "other.sqlite3") as s:
        yield s


def test_markdown_shows_visible_path_with_notes() -> None:
    text = conversation_to_markdown(sample_tree())
    assert text.startswith("# Herons\n")
    assert "- Model: `@cf/meta/llama`" in text
    assert "- Branches:" in text
    assert "## System prompt\n\n> Be brief" in text
    assert "## User\n\nWhat is a heron?" in text
    assert "## Assistant · `@cf/x`\n\nA long-legged wading bird" in text
    assert "_Stopped: this reply is partial._" in text
    assert "_Version 2 of 2" in text
    assert "A bird." not in text  # the hidden branch is in the JSON, not here


def test_markdown_reasoning_is_collapsed_and_failure_is_a_note() -> None:
    tree = sample_tree()
    tree.select("a1")
    failed = message(
        "a3x",
        "u2",
        ROLE_ASSISTANT,
        "",
        status=STATUS_FAILED,
        error={"kind": "capacity", "message": "The model is busy."},
    )
    tree.add(failed)
    text = conversation_to_markdown(tree)
    assert "<details>\n<summary>Reasoning</summary>\n\nUser asks about birds.\n\n</details>" in text
    assert "_Failed: The model is busy._" in text
    assert "_Version 1 of 2" in text
    assert text.index("A bird.") < text.index("Where do they live?")


def test_markdown_of_single_branch_has_no_branch_note() -> None:
    tree = ConversationTree(Conversation(id="c1", title="Line\nbreak"))
    tree.add(message("u", None, ROLE_USER, "hi"))
    text = conversation_to_markdown(tree)
    assert text.startswith("# Line break\n")
    assert "Branches" not in text
    assert "Version" not in text


def test_json_has_every_branch_and_record() -> None:
    doc = conversation_to_json(sample_tree(), now=5.0)
    assert (doc["format"], doc["version"], doc["exported_at"]) == (
        CONVERSATION_FORMAT,
        EXPORT_VERSION,
        5.0,
    )
    conv = doc["conversation"]
    assert [m["id"] for m in conv["messages"]] == ["u", "a1", "u2", "a2"]
    assert conv["selected"] == {"": "u", "u": "a2", "a1": "u2"}
    first = conv["messages"][1]
    assert first["usage"] == {"total_tokens": 10, "neurons": 1.5}
    assert first["request"]["params"] == {"max_tokens": 2048, "temperature": 0.3}
    assert first["request"]["token"] == "[redacted]"
    json.dumps(doc)  # plain data all the way down


@pytest.mark.parametrize("export", ["markdown", "json", "all"])
def test_no_export_contains_a_token(store: ChatStore, export: str) -> None:
    tree = sample_tree()
    store.insert_trees([tree])
    # data written before scrubbing existed (or by a bug) must not leak either
    store._conn.execute(
        "UPDATE messages SET request_json = ?, meta_json = ? WHERE id = 'a1'",
        (json.dumps(LEAKY_REQUEST), json.dumps({"authorization": "Bearer tok-SECRET-b"})),
    )
    loaded = store.load_tree("c1")
    assert loaded.get("a1").request == LEAKY_REQUEST  # the leak is really there
    if export == "markdown":
        text = conversation_to_markdown(loaded)
    elif export == "json":
        text = json.dumps(conversation_to_json(loaded))
    else:
        text = json.dumps(export_all(store))
    assert not TOKEN_LIKE.search(text)
    assert "@cf/meta/llama" in text


def test_export_all_then_import_into_empty_store(store: ChatStore, other_store: ChatStore) -> None:
    store.insert_trees([sample_tree()])
    data = json.loads(json.dumps(export_all(store, now=1.0)))
    assert (data["format"], data["version"]) == (EXPORT_FORMAT, EXPORT_VERSION)
    report = import_all(other_store, data)
    assert (report.added, report.skipped_same, report.renamed_conflicts) == (1, 0, [])
    imported = other_store.load_tree("c1")
    original = store.load_tree("c1")
    assert [m.id for m in imported.path()] == [m.id for m in original.path()]
    assert sorted(m.id for m in imported) == sorted(m.id for m in original)
    assert imported.get("a1").usage == original.get("a1").usage
    assert imported.conversation.system_prompt == "Be brief"
    assert not TOKEN_LIKE.search(json.dumps(export_all(other_store)))


def test_reimport_never_duplicates(store: ChatStore) -> None:
    store.insert_trees([sample_tree()])
    data = export_all(store)
    report = import_all(store, data)
    assert (report.added, report.skipped_same, report.renamed_conflicts) == (0, 1, [])
    assert len(store.list_conversations()) == 1
    assert len(store.load_tree("c1")) == 4


def test_older_export_of_a_continued_conversation_is_skipped(store: ChatStore) -> None:
    store.insert_trees([sample_tree()])
    data = export_all(store)
    store.add_message(message("u3", "a2", ROLE_USER, "And later?"))
    assert import_all(store, data).skipped_same == 1
    assert len(store.load_tree("c1")) == 5


def test_same_id_different_content_is_imported_as_renamed_copy(store: ChatStore) -> None:
    store.insert_trees([sample_tree()])
    data = copy.deepcopy(export_all(store))
    data["conversations"][0]["messages"][0]["content"] = "What is an egret?"
    report = import_all(store, data)
    assert (report.added, report.skipped_same) == (0, 0)
    [conflict] = report.renamed_conflicts
    assert conflict.original_id == "c1"
    assert conflict.title == "Herons" + IMPORTED_SUFFIX
    assert store.load_tree("c1").get("u").content == "What is a heron?"  # untouched
    copy_tree = store.load_tree(conflict.new_id)
    assert copy_tree.conversation.title == "Herons (imported)"
    assert {m.id for m in copy_tree}.isdisjoint({"u", "a1", "u2", "a2"})
    assert [m.content for m in copy_tree.path()] == [
        "What is an egret?",
        "A long-legged wading bird",
    ]
    assert len(store.list_conversations()) == 2


def test_message_id_clash_across_conversations_is_renamed(store: ChatStore) -> None:
    store.insert_trees([sample_tree()])
    data = copy.deepcopy(export_all(store))
    data["conversations"][0]["id"] = "c-new"
    report = import_all(store, data)
    assert report.added == 0
    assert len(report.renamed_conflicts) == 1
    assert len(store.load_tree(report.renamed_conflicts[0].new_id)) == 4


def test_duplicates_inside_one_file_are_imported_once(store: ChatStore) -> None:
    doc = conversation_to_json(sample_tree())["conversation"]
    data = {"format": EXPORT_FORMAT, "version": 1, "conversations": [doc, copy.deepcopy(doc)]}
    report = import_all(store, data)
    assert (report.added, report.skipped_same, report.renamed_conflicts) == (1, 1, [])
    assert len(store.list_conversations()) == 1


def test_single_conversation_document_imports(store: ChatStore, other_store: ChatStore) -> None:
    doc = conversation_to_json(sample_tree())
    assert import_all(other_store, json.loads(json.dumps(doc))).added == 1
    assert other_store.get_conversation("c1").title == "Herons"


def test_import_scrubs_tokens(store: ChatStore) -> None:
    doc = conversation_to_json(sample_tree())
    doc["conversation"]["messages"][1]["request"] = LEAKY_REQUEST  # a hand-made file
    import_all(store, doc)
    dump = "\n".join(str(r) for r in store._conn.execute("SELECT * FROM messages"))
    assert not TOKEN_LIKE.search(dump)


def test_deleted_conversations_are_not_exported(store: ChatStore) -> None:
    store.insert_trees([sample_tree()])
    store.delete_conversation("c1")
    assert export_all(store)["conversations"] == []


BAD_DOCUMENTS: list[tuple[Any, str]] = [
    ([], "not a Flarechat export"),
    ({"format": "something else", "version": 1}, "not a Flarechat export"),
    ({"format": EXPORT_FORMAT, "version": 99, "conversations": []}, "newer Flarechat"),
    ({"format": EXPORT_FORMAT, "version": 1}, "no conversations"),
    ({"format": EXPORT_FORMAT, "version": 1, "conversations": [{"title": "x"}]}, "no id"),
    (
        {"format": EXPORT_FORMAT, "version": 1, "conversations": [{"id": "z", "title": 5}]},
        "wrong type",
    ),
]


@pytest.mark.parametrize(("data", "error"), BAD_DOCUMENTS)
def test_bad_documents_are_refused(store: ChatStore, data: Any, error: str) -> None:
    with pytest.raises(ImportFormatError, match=error):
        import_all(store, data)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"parent_id": "nobody"}, "inconsistent"),
        ({"content": None}, "no content"),
        ({"created_at": "yesterday"}, "wrong type"),
        ({"usage": [1, 2]}, "wrong type"),
        ({"id": 7}, "no id"),
    ],
)
def test_bad_message_refuses_the_whole_import(
    store: ChatStore, change: dict[str, Any], error: str
) -> None:
    good = conversation_to_json(sample_tree())["conversation"]
    bad = copy.deepcopy(good)
    bad["id"] = "c2"
    bad["messages"][2].update(change)
    data = {"format": EXPORT_FORMAT, "version": 1, "conversations": [good, bad]}
    with pytest.raises(ImportFormatError, match=error):
        import_all(store, data)
    assert store.list_conversations() == []  # all or nothing

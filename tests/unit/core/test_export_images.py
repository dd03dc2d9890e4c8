"""Exports keep images and tool calls: JSON (base64) round trips, Markdown writes image files."""

from __future__ import annotations

import json
from pathlib import Path

from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_TOOL,
    ROLE_USER,
    Attachment,
    Conversation,
    ConversationTree,
    Message,
)
from flarechat.core.export import (
    EXPORT_VERSION,
    conversation_to_markdown,
    export_all,
    files_folder,
    import_all,
    write_markdown,
)
from flarechat.core.store import ChatStore

PNG = Attachment("image/png", b"\x89PNG fake bytes \x00\xff", 640, 480, "heron.png")
JPEG = Attachment("image/jpeg", b"\xff\xd8\xff more", 32, 16, "")
CALL = {"id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}


def _tree() -> ConversationTree:
    conv = Conversation(id="c1", title="Birds: a/b", created_at=100.0, model="@cf/meta/scout")
    user = Message("m1", "c1", None, ROLE_USER, "What bird?", created_at=101.0)
    user.attachments = [PNG, JPEG]
    calling = Message("m2", "c1", "m1", ROLE_ASSISTANT, "", created_at=102.0)
    calling.tool_calls = [dict(CALL)]
    result = Message("m3", "c1", "m2", ROLE_TOOL, "Sunny", created_at=103.0)
    result.tool_call_id = "call_1"
    answer = Message("m4", "c1", "m3", ROLE_ASSISTANT, "A heron.", created_at=104.0)
    return ConversationTree(conv, [user, calling, result, answer])


def test_json_export_round_trips_images_and_tool_calls(tmp_path: Path) -> None:
    with ChatStore(tmp_path / "a.sqlite3") as source:
        source.insert_trees([_tree()])
        data = json.loads(json.dumps(export_all(source, now=1.0)))
    assert data["version"] == EXPORT_VERSION
    [image, _jpeg] = data["conversations"][0]["messages"][0]["attachments"]
    assert (image["mime_type"], image["width"], image["name"]) == ("image/png", 640, "heron.png")
    with ChatStore(tmp_path / "b.sqlite3") as target:
        report = import_all(target, data)
        assert report.added == 1
        tree = target.load_tree("c1")
        assert tree.get("m1").attachments == [PNG, JPEG]
        assert tree.get("m2").tool_calls == [CALL]
        assert tree.get("m3").tool_call_id == "call_1"
        assert import_all(target, data).skipped_same == 1  # the same again: nothing duplicated


def test_a_version_1_export_still_imports(tmp_path: Path) -> None:
    doc = {
        "format": "flarechat.export",
        "version": 1,
        "conversations": [
            {
                "id": "old",
                "title": "Old",
                "messages": [{"id": "o1", "role": "user", "content": "Hi", "parent_id": None}],
            }
        ],
    }
    with ChatStore(tmp_path / "c.sqlite3") as store:
        assert import_all(store, doc).added == 1
        assert store.load_tree("old").get("o1").attachments == []


def test_markdown_export_writes_images_beside_it_and_links_them(tmp_path: Path) -> None:
    path = tmp_path / "Birds.md"
    written = write_markdown(_tree(), path)
    folder = files_folder(path)
    assert folder == tmp_path / "Birds files"
    assert written == [
        path,
        folder / "message-001-image-1.png",
        folder / "message-001-image-2.jpg",
    ]
    assert (folder / "message-001-image-1.png").read_bytes() == PNG.data
    text = path.read_text(encoding="utf-8")
    assert "![heron.png](<Birds files/message-001-image-1.png>)" in text
    assert "![image](<Birds files/message-001-image-2.jpg>)" in text
    assert "**Tool call** `get_weather` (`call_1`)" in text
    assert '"city": "Paris"' in text
    assert "## Tool result · `call_1`" in text


def test_markdown_without_a_folder_describes_images_and_writes_no_files(tmp_path: Path) -> None:
    text = conversation_to_markdown(_tree())
    assert "_[heron.png: 640\N{MULTIPLICATION SIGN}480 PNG]_" in text
    path = tmp_path / "plain.md"
    tree = _tree()
    tree.get("m1").attachments = []
    assert write_markdown(tree, path) == [path]
    assert not files_folder(path).exists()

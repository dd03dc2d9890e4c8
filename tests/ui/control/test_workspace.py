"""WorkspaceController against the emulator: catalogue cache, verify, find, export and import."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from shell_helpers import MODEL, TOKEN, Recorder, chat_env

from flarechat.api.config import Secret
from flarechat.api.errors import AuthenticationFailed
from flarechat.api.models import ModelInfo
from flarechat.core.catalogue import CatalogueCache
from flarechat.emulator import DEMO_ACCOUNT_ID, EmulatorServer
from flarechat.ui.control.view_data import VerifyInput

pytestmark = pytest.mark.asyncio

SIGNALS = ("models_loaded", "models_loading", "find_results", "notice", "conversations_changed")
CACHED = ModelInfo(name="@cf/cached/only-in-the-cache")


async def test_the_cached_catalogue_comes_first_then_the_live_one(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    CatalogueCache(tmp_path / "models.json").save([CACHED], fetched_at=1_700_000_000.0)
    async with chat_env(emulator, tmp_path) as env:
        seen = Recorder(env.workspace, SIGNALS)
        env.workspace.refresh_models()
        await env.workspace.drain()
        (cached, fetched, offline), (live, fetched_live, offline_live) = seen.args("models_loaded")
        assert ([m.name for m in cached], fetched, offline) == ([CACHED.name], 1.7e9, False)
        assert MODEL in {m.name for m in live}
        assert len(live) >= 6
        assert offline_live is False
        assert fetched_live > fetched
        assert seen.args("models_loading") == [(True,), (False,)]
        saved = CatalogueCache(tmp_path / "models.json").load()
        assert saved is not None
        assert MODEL in {m.name for m in saved.models}


async def test_an_unreachable_catalogue_shows_the_cache_as_offline(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    CatalogueCache(tmp_path / "models.json").save([CACHED], fetched_at=1_700_000_000.0)
    async with chat_env(emulator, tmp_path, token="invalid" + "z" * 33) as env:
        seen = Recorder(env.workspace, SIGNALS)
        env.workspace.refresh_models()
        await env.workspace.drain()
        models, fetched, offline = seen.args("models_loaded")[-1]
        assert ([m.name for m in models], fetched, offline) == ([CACHED.name], 1.7e9, True)


async def test_verify_reports_the_token_kind_and_fails_for_a_bad_one(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        good = VerifyInput(DEMO_ACCOUNT_ID, Secret(TOKEN), api_base=emulator.api_base)
        assert await env.workspace.verify(good)
        bad = VerifyInput(DEMO_ACCOUNT_ID, Secret("invalid" + "q" * 33), emulator.api_base)
        with pytest.raises(AuthenticationFailed) as caught:
            await env.workspace.verify(bad)
        assert "invalid" + "q" * 33 not in str(caught.value)


async def test_find_in_the_open_conversation(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with chat_env(emulator, tmp_path) as env:
        seen = Recorder(env.workspace, SIGNALS)
        env.chat.new_conversation()
        reply = env.chat.send("Tell me about pelicans")
        assert reply is not None
        await env.finished(reply)
        env.workspace.find("pelicans")
        await env.workspace.drain()
        query, matches = seen.args("find_results")[-1]
        tree = env.chat.current_tree()
        assert tree is not None
        assert query == "pelicans"
        assert matches
        assert matches[0] == tree.path()[0].id


async def test_export_all_then_import_into_a_fresh_profile(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    export = tmp_path / "everything.json"
    async with chat_env(emulator, tmp_path / "one") as env:
        seen = Recorder(env.workspace, SIGNALS)
        env.chat.new_conversation()
        reply = env.chat.send("Keep me forever")
        assert reply is not None
        await env.finished(reply)
        await env.chat.drain()
        env.workspace.export_all(export)
        await env.workspace.drain()
        assert seen.args("notice")[-1][1] == "Everything exported"
    assert TOKEN not in export.read_text(encoding="utf-8")
    assert json.loads(export.read_text(encoding="utf-8"))
    async with chat_env(emulator, tmp_path / "two") as env:
        seen = Recorder(env.workspace, SIGNALS)
        for attempt in ("1 added", "0 added, 1 already here"):
            env.workspace.import_all(export)
            await env.workspace.drain()
            kind, title, text, _actions = seen.args("notice")[-1]
            assert (kind, title) == ("info", "Import finished")
            assert text.startswith(attempt)  # a second import never duplicates
        (summary,) = await env.store.list_conversations()
        assert summary.title == "Keep me forever"


async def test_markdown_export_writes_the_images_beside_it(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    from flarechat.core.conversation import Attachment, Conversation, Message, new_id

    async with chat_env(emulator, tmp_path / "profile") as env:
        conversation = await env.store.create_conversation(Conversation(id=new_id()))
        png = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
        picture = Attachment("image/png", png, 2, 2, name="cat.png")
        user = Message(new_id(), conversation.id, None, "user", "What is this?")
        user.attachments = [picture]
        await env.store.add_message(user)
        target = tmp_path / "chat.md"
        env.workspace.export_conversation(conversation.id, path=target, fmt="markdown")
        await env.workspace.drain()
    images, markdown = await asyncio.to_thread(_written, tmp_path, png, target)
    assert len(images) == 1
    assert images[0].parent != tmp_path  # in a folder beside the Markdown …
    assert images[0].parent.name in markdown  # … and linked from it


def _written(root: Path, data: bytes, markdown: Path) -> tuple[list[Path], str]:
    files = [p for p in root.rglob("*") if p.is_file() and p.read_bytes() == data]
    return files, markdown.read_text(encoding="utf-8")

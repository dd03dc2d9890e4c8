"""The chat pane against the emulator: images sent (or refused before sending), a JSON reply
with its verdict, tool calls answered from their cards, and a licence accepted from its banner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QAbstractButton, QApplication, QFileDialog, QWidget
from pytestqt.qtbot import QtBot
from shell_helpers import MODEL, ChatEnv, chat_env
from ui_capability_helpers import png

from flarechat.emulator import EmulatorServer
from flarechat.ui.capabilities.attach import ATTACH_TIP
from flarechat.ui.capabilities.json_reply import JsonReplyView
from flarechat.ui.capabilities.pane_hooks import NO_VISION_TITLE
from flarechat.ui.capabilities.thumbnails import MessageImages
from flarechat.ui.capabilities.tool_cards import ToolCallsPanel
from flarechat.ui.chat.chat_pane import ChatPane

pytestmark = pytest.mark.asyncio

SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"
LICENSED = "@cf/meta/llama-3.2-11b-vision-instruct"
#: Tokens enough for the emulator's "I received 1 image…" line: a whole demo reply streams
#: for seconds, too long on a loaded machine.
SHORT_REPLY = 24
#: takes response_format and tools in the emulator's catalogue (llama-3.1-8b-fast takes neither)
CAPABLE = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city now",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "canned_result": '{"temp_c": 21, "sky": "clear"}',
}


async def _pane(qtbot: QtBot, env: ChatEnv) -> ChatPane:
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.bind(env.chat)
    pane.show()
    env.chat.set_models(await env.client.list_models(env.prefs.connection()))
    env.chat.new_conversation()
    return pane


def _paste_image(pane: ChatPane) -> None:
    mime = QMimeData()
    mime.setImageData(QImage.fromData(png(200, 100)))
    pane.composer.editor.insertFromMimeData(mime)


def _sent_bodies(emulator: EmulatorServer) -> list[Any]:
    return [r.json for r in emulator.state.requests if "/ai/" in r.path and "/models" not in r.path]


async def test_an_image_goes_to_a_vision_model_and_shows_in_the_transcript(
    qtbot: QtBot, emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        pane = await _pane(qtbot, env)
        attach = pane.composer.attachments
        assert "cannot see images" in attach.button.toolTip()  # llama-3.1-8b cannot see
        env.chat.set_model(SCOUT)
        env.chat.set_options("", {"max_tokens": SHORT_REPLY})  # the image line comes first
        assert attach.button.toolTip() == ATTACH_TIP
        _paste_image(pane)
        pane.composer.set_text("What is in this picture?")
        mark = env.recorder.mark()
        pane.composer._on_submit()
        assert attach.count() == 0  # sent: the box starts empty again
        _, user = await env.recorder.wait("message_added", after=mark)
        assert [(a.width, a.height) for a in user.attachments] == [(200, 100)]
        finished = await env.recorder.wait("turn_finished", after=mark)
        assert "image" in finished[1].content.lower()
        view = pane.transcript.view_for(user.id)
        assert view is not None
        images = view.findChild(MessageImages)
        assert images is not None
        viewer = images.open_viewer(0)
        assert viewer.caption.text().startswith("200\N{MULTIPLICATION SIGN}100 · PNG")
        viewer.close()


async def test_images_for_a_model_without_vision_are_caught_before_sending(
    qtbot: QtBot, emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        pane = await _pane(qtbot, env)
        env.chat.set_model(SCOUT)
        _paste_image(pane)
        env.chat.set_model(MODEL)  # switched after attaching
        pane.composer.set_text("Describe it")
        sent_before = len(_sent_bodies(emulator))
        pane.composer._on_submit()
        banner = pane.notice_banner
        assert banner.isVisibleTo(pane)
        assert banner.title == NO_VISION_TITLE
        assert banner.text.startswith("llama-3.1-8b-instruct-fast cannot see images.")
        assert pane.composer.text() == "Describe it"  # nothing lost
        assert pane.composer.attachments.count() == 1
        assert len(_sent_bodies(emulator)) == sent_before
        with qtbot.waitSignal(pane.switch_model_requested):
            pane.on_notice_action("switch_model")


async def test_the_paperclip_on_a_model_without_vision_says_why_and_offers_switch_model(
    qtbot: QtBot,
    emulator: EmulatorServer,
    tmp_path: Path,
    find_button: Callable[[QWidget, str], QAbstractButton],
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        pane = await _pane(qtbot, env)
        env.chat.set_model(MODEL)  # llama-3.1-8b-fast: no vision in the catalogue
        clip = pane.composer.attachments.button
        assert clip.isEnabled()  # a disabled button shows no tooltip and takes no click
        assert clip.toolTip().startswith("llama-3.1-8b-instruct-fast cannot see images.")
        pane.composer.set_text("Look at this")
        clip.click()
        assert not any(isinstance(w, QFileDialog) for w in QApplication.topLevelWidgets())
        banner = pane.notice_banner
        assert banner.isVisibleTo(pane)
        assert banner.title == NO_VISION_TITLE
        assert banner.text.startswith("llama-3.1-8b-instruct-fast cannot see images.")
        assert pane.composer.text() == "Look at this"
        with qtbot.waitSignal(pane.switch_model_requested):
            find_button(banner, "Switch model").click()
        assert not banner.isVisibleTo(pane)
        env.chat.set_model(SCOUT)
        assert clip.toolTip() == ATTACH_TIP
        with qtbot.waitSignal(pane.composer.attachments.button.clicked):
            clip.click()
        dialog = pane.composer.attachments.file_dialog  # a vision model: a file dialog
        assert dialog is not None
        dialog.reject()


async def test_a_json_reply_is_shown_pretty_with_its_verdict_and_note(
    qtbot: QtBot, emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        pane = await _pane(qtbot, env)
        fmt = {"type": "json_schema", "schema": SCHEMA, "name": "trip"}
        env.chat.set_model(CAPABLE)
        env.chat.set_options("", {"response_format": fmt})
        reply = env.chat.send("Plan a trip as JSON")
        assert reply is not None
        data = await env.finished(reply)
        assert data.json_verdict is not None
        assert data.json_verdict.valid
        assert "does not stream" in data.note
        view = pane.transcript.view_for(reply)
        assert view is not None
        shown = view.findChild(JsonReplyView)
        assert shown is not None
        assert shown.ok
        assert shown.mark.text() == "✓ JSON · follows the schema"
        assert shown.text.text() == data.json_verdict.pretty
        assert shown.note.text() == data.note


async def test_tool_calls_are_answered_from_their_cards(
    qtbot: QtBot, emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        pane = await _pane(qtbot, env)
        env.chat.set_model(CAPABLE)
        env.chat.set_options("", {"tools": [WEATHER]})
        reply = env.chat.send("Use get_weather for Lisbon, please")
        assert reply is not None
        data = await env.finished(reply)
        assert [c.name for c in data.tool_calls] == ["get_weather"]
        assert data.awaiting_tool_results
        view = pane.transcript.view_for(reply)
        assert view is not None
        panel = view.findChild(ToolCallsPanel)
        assert panel is not None
        card = panel.cards[0]
        assert '"city"' in card.arguments.text()
        card.use_canned()
        mark = env.recorder.mark()
        panel.submit()
        _, result = await env.recorder.wait("message_added", after=mark)
        assert (result.role, result.content) == ("tool", WEATHER["canned_result"])
        finished = await env.recorder.wait("turn_finished", after=mark)
        assert finished[1].content
        assert not finished[1].tool_calls
        body = _sent_bodies(emulator)[-1]
        tool_message = next(m for m in body["messages"] if m.get("role") == "tool")
        assert tool_message["tool_call_id"] == data.tool_calls[0].id


async def test_the_licence_banner_names_the_model_links_its_licence_and_agrees(
    qtbot: QtBot, emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with chat_env(emulator, tmp_path) as env:
        pane = await _pane(qtbot, env)
        opened: list[QUrl] = []
        pane.capabilities.opener = opened.append
        env.chat.set_model(LICENSED)
        mark = env.recorder.mark()
        reply = env.chat.send("Hello")
        assert reply is not None
        failed = await env.recorder.wait("turn_failed", after=mark)
        assert failed[1] == "terms"
        banner = pane.notice_banner
        assert banner.title == "Accept the licence of llama-3.2-11b-vision-instruct to use it"
        assert LICENSED in banner.text
        assert opened == []  # nothing opens by itself
        pane.on_notice_action("open_licence")
        assert len(opened) == 1
        assert opened[0].scheme() == "https"
        assert opened[0].toString() in banner.text
        mark = env.recorder.mark()
        pane.on_notice_action("agree_terms")
        finished = await env.recorder.wait("turn_finished", after=mark)
        assert finished[1].status == "done"
        assert finished[1].content
        assert any(
            isinstance(b, dict) and b.get("prompt") == "agree" for b in _sent_bodies(emulator)
        )

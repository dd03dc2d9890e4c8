"""The lab in the real window against the emulator: presets saved, applied and used for new
chats; saved system prompts from the composer's menu; a template's form filling the sent
message; View as code with no token; the allocation gauge and the context meter."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QWidget
from shell_helpers import MODEL, TOKEN
from window_helpers import until, window

from flarechat.api.models import ModelInfo
from flarechat.core import meters
from flarechat.core.conversation import Attachment
from flarechat.core.lab.library import LabLibrary
from flarechat.core.lab.presets import Preset
from flarechat.core.lab.storage import LAB_FILENAME, LabStore
from flarechat.core.ledger import DayUsage
from flarechat.core.meters import ContextLevel, GaugeLevel
from flarechat.core.request_code import CodeKind
from flarechat.emulator import EmulatorServer
from flarechat.ui.lab.code_dialog import TAB_LABELS
from flarechat.ui.lab.gauges import AllocationGauge, ContextMeter
from flarechat.ui.shared.theme import current_palette
from flarechat.ui.window.main_window import MainWindow

pytestmark = pytest.mark.asyncio(loop_scope="function")
OTHER = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
LORA_15K = "@cf/mistral/mistral-7b-instruct-v0.2-lora"
SCOUT = "@cf/meta/llama-4-scout-17b-16e-instruct"  # vision, a 131k window


async def _send(main: MainWindow, text: str) -> None:
    composer = main.pane.composer
    composer.set_text(text)
    composer.editor.setFocus()
    QTest.keyClick(composer.editor, Qt.Key.Key_Return)


def _leaks(text: str) -> list[str]:
    encoded = base64.b64encode(TOKEN.encode()).decode()
    return [f for f in (TOKEN, encoded, encoded.rstrip("="), quote(TOKEN, safe="")) if f in text]


async def test_a_preset_saved_applied_kept_and_used_for_new_chats(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab = main.lab_hooks.lab
        env.chat.set_options("Be terse.", {"max_tokens": 300, "temperature": 0.4})
        preset = lab.save_preset("Terse")
        assert preset is not None
        env.chat.set_model(OTHER)
        env.chat.set_options("", {})
        assert lab.apply_preset(preset.id)
        conv = env.chat.current_tree().conversation  # type: ignore[union-attr]
        assert (conv.model, conv.system_prompt) == (MODEL, "Be terse.")
        assert conv.params == {"max_tokens": 300, "temperature": 0.4}
        lab.set_default_preset(preset.id)
        env.chat.set_model(OTHER)
        env.chat.new_conversation()
        fresh = env.chat.current_tree().conversation  # type: ignore[union-attr]
        assert (fresh.model, fresh.system_prompt) == (MODEL, "Be terse.")
        await lab.drain()
    saved = LabStore(isolated_profile / "config" / LAB_FILENAME).load()
    assert [p.name for p in saved.presets] == ["Terse"]
    assert saved.default_preset_id == preset.id


async def test_the_preset_menu_and_manage_dialog(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        hooks = main.lab_hooks
        preset = hooks.lab.save_preset("First")
        assert preset is not None
        bar = hooks.bar
        bar.preset_menu.aboutToShow.emit()
        texts = [a.text() for a in bar.preset_menu.actions() if a.text()]
        assert texts[0] == "First"
        assert "Save current settings as preset\N{HORIZONTAL ELLIPSIS}" in texts
        dialog = bar.open_presets()
        page = dialog.pages["presets"]
        assert dialog.tabs.currentWidget() is page
        page.buttons["duplicate"].click()
        page.list.setCurrentRow(0)
        page.buttons["default"].click()
        assert [p.name for p in hooks.lab.presets()] == ["First", "First (copy)"]
        assert page.list.item(0).text().endswith("default for new chats")
        page.list.setCurrentRow(1)
        confirm = page.ask_delete()
        assert confirm is not None
        next(b for b in confirm.buttons() if b.text() == "Delete").click()
        assert [p.name for p in hooks.lab.presets()] == ["First"]
        dialog.close()
        await hooks.lab.drain()


async def test_a_saved_system_prompt_is_picked_from_the_composer(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab, bar = main.lab_hooks.lab, main.lab_hooks.bar
        lab.save_prompt("You are a pirate.", "Pirate")
        bar.prompt_menu.aboutToShow.emit()
        [pirate] = [a for a in bar.prompt_menu.actions() if a.text() == "Pirate"]
        pirate.trigger()
        assert env.chat.current_tree().conversation.system_prompt == "You are a pirate."  # type: ignore[union-attr]
        bar.prompt_menu.aboutToShow.emit()
        assert next(a for a in bar.prompt_menu.actions() if a.text() == "Pirate").isChecked()
        await lab.drain()


async def test_a_template_form_fills_the_message_and_remembers_values(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab, bar = main.lab_hooks.lab, main.lab_hooks.bar
        text = "Translate {{phrase}} into {{language}}"
        template = lab.save_template(text, "Translate")
        assert template is not None
        main.pane.composer.set_text(text)
        bar.update_draft()  # what the typing debounce does
        assert bar.form.isVisible()
        assert bar.form.names() == ["phrase", "language"]
        bar.form.fields["phrase"].setText("good morning")
        await _send(main, text)  # a value is missing: nothing is sent, the text stays
        assert env.recorder.args("turn_started") == []
        assert main.pane.composer.text() == text
        bar.form.fields["language"].setText("Welsh")
        await _send(main, text)
        [(_, message_id)] = env.recorder.args("turn_started")
        await env.finished(message_id)
        users = [m for m in env.chat.current_tree().path() if m.role == "user"]  # type: ignore[union-attr]
        assert users[-1].content == "Translate good morning into Welsh"
        assert lab.library.templates.get(template.id).values == {  # type: ignore[union-attr]
            "phrase": "good morning",
            "language": "Welsh",
        }
        await lab.drain()


async def test_view_as_code_shows_every_form_without_the_token(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        hooks = main.lab_hooks
        hooks.view_last_code()
        assert "no sent reply" in main.statusBar().currentMessage()
        await _send(main, "Show me the request")
        [(_, message_id)] = env.recorder.args("turn_started")
        await env.finished(message_id)
        hooks.view_code_action.trigger()
        dialog = hooks.code_dialog
        assert dialog is not None
        assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == list(
            TAB_LABELS.values()
        )
        assert set(dialog.code.forms) == set(CodeKind)
        assert _leaks(json.dumps(dict(dialog.code.forms))) == []
        dialog.copy_current()
        assert QGuiApplication.clipboard().text() == dialog.code.forms[CodeKind.CURL]
        assert "$CLOUDFLARE_API_TOKEN" in QGuiApplication.clipboard().text()
        dialog.close()


def _gauge_level(gauge: AllocationGauge) -> GaugeLevel:
    """The level now: read through a call, as mypy keeps ``gauge.level`` narrowed across the
    show_usage() that changes it."""
    return gauge.level


def _meter_level(meter: ContextMeter) -> ContextLevel:
    """The level now (see _gauge_level)."""
    return meter.level


async def test_gauge_colours_and_reset_tooltip(emulator: EmulatorServer, tmp_path: Path) -> None:
    async with window(emulator, tmp_path) as (_env, main, _seen):
        gauge = main.lab_hooks.gauge
        now = datetime(2025, 3, 1, 22, 0, tzinfo=UTC)
        gauge.show_usage(DayUsage(neurons=8_100, cost=0.0123, replies=3, priced=3), now=now)
        assert _gauge_level(gauge) is GaugeLevel.AMBER
        assert current_palette().banner_warning_border in gauge.bar.styleSheet()
        assert "(00:00 UTC)" in gauge.toolTip()
        assert "not counted" in gauge.toolTip()
        assert "81% of free neurons today" in gauge.label.text()
        gauge.show_usage(DayUsage(neurons=9_600), now=now)
        assert _gauge_level(gauge) is GaugeLevel.RED
        assert current_palette().danger in gauge.bar.styleSheet()


async def test_context_meter_warns_before_a_send_would_not_fit(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab, bar = main.lab_hooks.lab, main.lab_hooks.bar
        lab.set_models([ModelInfo(MODEL, context_window=100)])
        env.chat.set_options("", {"max_tokens": 10})
        main.pane.composer.set_text("x" * 360)  # ~94 tokens: fits, but not with 10 more
        bar.update_draft()
        assert bar.context_meter.text().startswith("~")
        assert _meter_level(bar.context_meter) is ContextLevel.TIGHT
        main.pane.composer.set_text("x" * 800)
        bar.update_draft()
        assert _meter_level(bar.context_meter) is ContextLevel.OVER
        assert "exceed" in bar.context_meter.toolTip()


def _png() -> Attachment:
    image = QImage(64, 48, QImage.Format.Format_RGB32)
    image.fill(QColor("#3a7bd5"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes
    return Attachment("image/png", bytes(data.data()), 64, 48, "chart.png")


async def test_the_meter_counts_a_paste_on_its_card_with_the_current_models_window(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    """An 81,000-character paste on a 15k model warns before the send (issue 23, item 4)."""
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab, meter, composer = (
            main.lab_hooks.lab,
            main.lab_hooks.bar.context_meter,
            main.pane.composer,
        )
        await until(lambda: lab.model_info() is not None, "the catalogue")
        env.chat.set_model(LORA_15K)
        await until(lambda: " / 15k tokens" in meter.text(), "the 15k window")
        generations = len([r for r in emulator.state.requests if "/ai/run/" in r.path])
        QGuiApplication.clipboard().setText("word " * 16_200)  # 81,000 characters
        composer.editor.setFocus()
        composer.editor.paste()
        assert composer.pasted.isVisible()  # held on its card, not typed into the box
        await until(lambda: meter.level is ContextLevel.OVER, "the warning")
        assert meter.text().startswith("~20k / 15k tokens (135%)")
        assert "too long" in meter.text()  # said in words, not only in red
        assert "exceed" in meter.toolTip()
        assert len([r for r in emulator.state.requests if "/ai/run/" in r.path]) == generations
        composer.pasted.remove_button.click()
        await until(lambda: meter.level is ContextLevel.OK, "the paste removed")


async def test_the_meter_counts_images_and_the_system_prompt_as_they_change(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        lab, meter, composer = (
            main.lab_hooks.lab,
            main.lab_hooks.bar.context_meter,
            main.pane.composer,
        )
        await until(lambda: lab.model_info() is not None, "the catalogue")
        env.chat.set_model(SCOUT)
        await until(lambda: meter.model == SCOUT.rsplit("/", 1)[-1], "the vision model")
        empty = meter.text()
        composer.attachments.add([_png()])
        with_image = f"~{meters.IMAGE_TOKENS_ESTIMATE / 1000:.1f}k / 131k"
        await until(lambda: meter.text().startswith(with_image), "the image counted")
        composer.attachments.clear()
        await until(lambda: meter.text() == empty, "the image removed")
        env.chat.set_options("You are a careful assistant. " * 100, {})  # no typing since
        await until(lambda: meter.text().startswith("~729 / 131k"), "the system prompt")


async def test_any_reply_shows_its_request_as_code_from_its_own_action(
    emulator: EmulatorServer,
    tmp_path: Path,
    find_button: Callable[[QWidget, str], QAbstractButton],
) -> None:
    async with window(emulator, tmp_path) as (env, main, _seen):
        await _send(main, "First question")
        [(_, first)] = env.recorder.args("turn_started")
        await env.finished(first)
        await _send(main, "Second question")
        second = env.recorder.args("turn_started")[-1][1]
        await env.finished(second)
        view = main.pane.transcript.view_for(first)  # not the last reply: any of them
        assert view is not None
        find_button(view, "View as code").click()
        dialog = main.lab_hooks.code_dialog
        assert dialog is not None
        curl = dialog.code.forms[CodeKind.CURL]
        assert "First question" in curl
        assert "Second question" not in curl  # the request that produced that reply
        assert _leaks(curl) == []
        dialog.close()


async def test_the_first_chat_starts_from_the_default_preset_read_after_it_opened(
    emulator: EmulatorServer, tmp_path: Path, isolated_profile: Path
) -> None:
    """The lab file is read after the first paint (LabController.start with the chat engine),
    when the start-up's new chat is open already: that chat still takes the default preset."""
    library = LabLibrary()
    preset = library.presets.add(
        Preset(id="p1", name="Terse", model=OTHER, system_prompt="Be terse.", params={})
    )
    library.default_preset_id = preset.id
    LabStore(isolated_profile / "config" / LAB_FILENAME).save(library)
    async with window(emulator, tmp_path) as (env, main, _seen):
        await main.lab_hooks.lab.drain()
        conv = env.chat.current_tree().conversation  # type: ignore[union-attr]
        assert (conv.model, conv.system_prompt) == (OTHER, "Be terse.")

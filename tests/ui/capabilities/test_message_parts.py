"""What a message shows for images, JSON replies and tool calls — parts made only for the
messages that need them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot
from ui_capability_helpers import attachment

from flarechat.core.session import json_check
from flarechat.ui.capabilities.json_reply import JsonReplyView, mark_text
from flarechat.ui.capabilities.thumbnails import MessageImages
from flarechat.ui.capabilities.tool_cards import ToolCallsPanel, pretty_arguments
from flarechat.ui.control.view_data import MessageData, ToolCallData
from flarechat.ui.transcript.message_view import MessageView

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
}
CALLS = (
    ToolCallData("call_1", "get_weather", '{"city":"Lisbon","unit":"c"}', canned='{"temp": 21}'),
    ToolCallData("call_2", "get_time", "{}", canned=None),
)


def test_json_marks_say_what_is_right_or_wrong() -> None:
    good = json_check('{"city": "Lisbon", "days": 3}', SCHEMA)
    assert mark_text(good, kind="json_schema") == "✓ JSON · follows the schema"
    assert mark_text(json_check('{"a": 1}'), kind="json_object") == "✓ JSON"
    wrong = json_check('{"city": "Lisbon"}', SCHEMA)
    assert mark_text(wrong, kind="json_schema").startswith(
        "⚠ JSON, but not what the schema asks — Does not follow the schema at $"
    )
    broken = mark_text(json_check('{"city": '), kind="json_object")
    assert broken.startswith("⚠ Not valid JSON — The reply is not JSON (line 1, column")
    assert mark_text(json_check("[1, 2]"), kind="json_object") == "⚠ JSON, but not an object"


def test_the_json_view_is_pretty_monospace_with_the_note(qtbot: QtBot) -> None:
    view = JsonReplyView()
    qtbot.addWidget(view)
    view.set_verdict(json_check('{"city":"Lisbon","days":3}', SCHEMA), kind="json_schema",
                     note="JSON output does not stream on this endpoint.")  # fmt: skip
    valid = view.ok  # a local: set_verdict below changes the field
    assert valid
    assert view.text.text() == '{\n  "city": "Lisbon",\n  "days": 3\n}'
    assert view.text.font().styleHint() == view.text.font().StyleHint.Monospace
    assert view.note.text() == "JSON output does not stream on this endpoint."
    view.set_verdict(json_check("not json"), kind="json_object")
    assert not view.ok
    assert view.text.text() == "not json"  # shown as it came
    assert view.note.isHidden()


def test_a_json_reply_replaces_the_markdown_body_once_finished(qtbot: QtBot) -> None:
    verdict = json_check('{"city": "Lisbon"}', SCHEMA)
    data = MessageData(id="r1", role="assistant", content='{"city": "Lisbon"}',
                       json_verdict=verdict, json_kind="json_schema")  # fmt: skip
    view = MessageView(data)
    qtbot.addWidget(view)
    json_view = view.findChild(JsonReplyView)
    assert json_view is not None
    assert not json_view.isHidden()
    assert not json_view.ok
    assert "body" not in view._parts or view._parts["body"].isHidden()


def test_ordinary_messages_make_none_of_these_parts(qtbot: QtBot) -> None:
    view = MessageView(MessageData(id="r2", role="assistant", content="Hello"))
    qtbot.addWidget(view)
    for kind in (JsonReplyView, MessageImages, ToolCallsPanel):
        assert view.findChild(kind) is None


def test_a_user_message_shows_its_images(qtbot: QtBot) -> None:
    data = MessageData(id="u1", role="user", content="What is this?",
                       attachments=(attachment("a.png"), attachment("b.png")))  # fmt: skip
    view = MessageView(data)
    qtbot.addWidget(view)
    images = view.findChild(MessageImages)
    assert images is not None
    assert len(images.buttons) == 2


def test_tool_cards_need_a_result_for_each_call_before_continue(qtbot: QtBot) -> None:
    panel = ToolCallsPanel()
    qtbot.addWidget(panel)
    panel.set_calls("r3", CALLS, answerable=True)
    first, second = panel.cards
    assert first.arguments.text() == '{\n  "city": "Lisbon",\n  "unit": "c"\n}'
    assert not panel.continue_button.isEnabled()
    assert first.canned.isVisibleTo(panel)
    assert not second.canned.isVisibleTo(panel)  # no canned result defined for get_time
    qtbot.mouseClick(first.canned, Qt.MouseButton.LeftButton)
    assert first.result_text() == '{"temp": 21}'
    assert not panel.continue_button.isEnabled()
    second.result.setPlainText("12:00")
    assert panel.continue_button.isEnabled()
    with qtbot.waitSignal(panel.results_submitted) as submitted:
        qtbot.mouseClick(panel.continue_button, Qt.MouseButton.LeftButton)
    assert submitted.args == ["r3", {"call_1": '{"temp": 21}', "call_2": "12:00"}]
    assert not panel.continue_button.isEnabled()  # one click sends once


def test_answered_calls_show_without_result_boxes(qtbot: QtBot) -> None:
    panel = ToolCallsPanel()
    qtbot.addWidget(panel)
    panel.set_calls("r4", CALLS, answerable=False)
    assert all(not card.result.isVisibleTo(panel) for card in panel.cards)
    assert not panel.continue_button.isVisibleTo(panel)


def test_the_message_view_forwards_submitted_results(qtbot: QtBot) -> None:
    data = MessageData(id="r5", role="assistant", tool_calls=CALLS[:1], awaiting_tool_results=True)
    view = MessageView(data)
    qtbot.addWidget(view)
    panel = view.findChild(ToolCallsPanel)
    assert panel is not None
    panel.cards[0].use_canned()
    with qtbot.waitSignal(view.tool_results_submitted) as submitted:
        panel.submit()
    assert submitted.args == ["r5", {"call_1": '{"temp": 21}'}]


def test_a_tool_result_message_is_labelled(qtbot: QtBot) -> None:
    view = MessageView(MessageData(id="t1", role="tool", content='{"temp": 21}'))
    qtbot.addWidget(view)
    assert view._role.text() == "Tool result"


def test_arguments_that_are_not_json_are_shown_as_they_came() -> None:
    assert pretty_arguments('{"a": [1') == '{"a": [1'
    assert pretty_arguments("") == "{}"

"""The JSON Schema editor checks as you type: JSON errors with line and column, schema errors
from jsonschema, and a clear "valid"."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from flarechat.ui.capabilities.schema_editor import VALID_TEXT, SchemaEditor


def test_a_json_error_names_its_line_and_column(qtbot: QtBot) -> None:
    editor = SchemaEditor({"type": "object"}, name="Schema")
    qtbot.addWidget(editor)
    editor.edit.setPlainText('{\n  "type": "object",\n  "properties": {\n}')
    with qtbot.waitSignal(editor.checked) as checked:
        pass  # the check runs after a pause in typing
    assert checked.args == [False]
    assert editor.status.text() == "Not valid JSON — Line 4, column 2: Expecting ',' delimiter"
    editor.show_error_position()
    cursor = editor.edit.textCursor()
    assert (cursor.blockNumber(), cursor.positionInBlock()) == (3, 1)


def test_a_schema_mistake_is_caught_as_you_type(qtbot: QtBot) -> None:
    editor = SchemaEditor(None, name="Schema")
    qtbot.addWidget(editor)
    assert editor.problem() == "The schema is empty."
    editor.edit.setPlainText('{"type": "object", "properties": {"city": {"type": "strin"}}}')
    assert not editor.check()
    assert editor.status.text().startswith("Not a usable schema: at properties/city/type:")
    assert editor.value() is None
    editor.edit.setPlainText('{"type": "object", "properties": {"city": {"type": "string"}}}')
    assert editor.check()
    assert editor.status.text() == VALID_TEXT
    assert editor.value() == {"type": "object", "properties": {"city": {"type": "string"}}}


def test_the_root_must_describe_an_object(qtbot: QtBot) -> None:
    editor = SchemaEditor({"type": "array"}, name="Schema")
    qtbot.addWidget(editor)
    assert (
        editor.problem()
        == 'Not a usable schema: the top-level "type" must be "object", not "array"'
    )

"""The Advanced settings tab shows the idle timeout and the deadline: loaded, bounded, saved."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from flarechat.settings import validate
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.ui.settings.dialog import SettingsDialog


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(
        settings, secrets=MemorySecretStore(), overridden=frozenset(), verify=None, env={}
    )
    qtbot.addWidget(dialog)
    return dialog


def test_both_fields_are_on_the_advanced_tab_with_their_saved_values(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings(idle_timeout=25.0, overall_timeout=900.0))
    form = dialog.form
    for spin in (form.idle_timeout, form.overall_timeout):
        assert form.advanced.isAncestorOf(spin)
    assert (form.idle_timeout.value(), form.overall_timeout.value()) == (25.0, 900.0)
    labels = [label.text() for label in form.advanced.findChildren(QLabel)]
    assert "Idle timeout:" in labels
    assert "Deadline:" in labels
    assert form.idle_timeout.accessibleName() == "Idle timeout"
    assert form.overall_timeout.accessibleName() == "Deadline"


def test_the_fields_stop_at_the_validated_ranges(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings())
    form = dialog.form
    assert (form.idle_timeout.minimum(), form.idle_timeout.maximum()) == (
        validate.IDLE_TIMEOUT_MIN,
        validate.IDLE_TIMEOUT_MAX,
    )
    assert (form.overall_timeout.minimum(), form.overall_timeout.maximum()) == (
        validate.OVERALL_TIMEOUT_MIN,
        validate.OVERALL_TIMEOUT_MAX,
    )
    form.idle_timeout.setValue(1)  # typed below the range: clamped, never saved out of it
    form.overall_timeout.setValue(99_999)
    assert (form.idle_timeout.value(), form.overall_timeout.value()) == (5.0, 3600.0)


def test_edited_values_are_what_the_dialog_saves(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings())
    dialog.form.idle_timeout.setValue(30)
    dialog.form.overall_timeout.setValue(120)
    result = dialog.result_settings()
    assert (result.idle_timeout, result.overall_timeout) == (30.0, 120.0)
    assert result == Settings(idle_timeout=30.0, overall_timeout=120.0)

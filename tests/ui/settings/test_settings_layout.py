"""The settings dialog as a user sees it: no clipped note, no squashed field, on any tab."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.ui.settings.dialog import SettingsDialog

GATEWAY = Settings(
    account_id="9a7f3c1e5b2d4f6a8c0e1b3d5f7a9c2e", route="gateway-rest", gateway_id="team-gateway"
)


@pytest.mark.parametrize("tab", range(5))
def test_every_note_and_field_gets_its_full_height(qtbot: QtBot, tab: int) -> None:
    dialog = SettingsDialog(
        GATEWAY, secrets=MemorySecretStore(), overridden=frozenset(), verify=None, env={}
    )
    qtbot.addWidget(dialog)
    dialog.form.tabs.setCurrentIndex(tab)
    dialog.show()
    qtbot.waitExposed(dialog)
    QApplication.processEvents()
    page = dialog.form.tabs.currentWidget()
    assert page is not None
    for label in page.findChildren(QLabel):
        if label.isVisible() and label.wordWrap() and label.text():
            needed = label.heightForWidth(label.width())
            assert label.height() >= needed, f"note clipped: {label.text()[:40]!r}"
    fields = [
        field
        for kind in (QLineEdit, QAbstractSpinBox, QComboBox)
        for field in page.findChildren(kind)
        if field.isVisible() and not field.objectName().startswith("qt_")  # Qt's own parts
    ]
    assert fields
    for field in fields:
        assert field.height() >= field.sizeHint().height(), field.accessibleName()

"""Settings as issue 11 asked: Esc asks first, the keychain warning only where it matters, one
label column, one "Request timeout", disabled fields that look it, theme and text size."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QFormLayout, QLabel, QMessageBox
from pytestqt.qtbot import QtBot

from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore, SecretStoreUnavailable
from flarechat.ui.settings.dialog import SettingsDialog
from flarechat.ui.settings.fields import TokenState

ACCOUNT = "0123456789abcdef0123456789abcdef"


def _dialog(qtbot: QtBot, settings: Settings | None = None, **options: object) -> SettingsDialog:
    dialog = SettingsDialog(
        settings or Settings(),
        secrets=MemorySecretStore(),
        overridden=options.pop("overridden", frozenset()),  # type: ignore[arg-type]
        verify=None,
        env=options.pop("env", {}),  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )
    qtbot.addWidget(dialog)
    return dialog


def _keychain_fails(dialog: SettingsDialog) -> None:
    dialog._mark_keychain_down(SecretStoreUnavailable("No keychain.", reason="no D-Bus"))


def test_the_window_title_names_flarechat_once(qtbot: QtBot) -> None:
    assert _dialog(qtbot).windowTitle() == "Settings \N{EM DASH} Flarechat"


def test_esc_asks_before_discarding_edits(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    dialog.show()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # nothing edited: closes at once
    assert not dialog.isVisible()
    dialog.show()
    dialog.form.system_prompt.setPlainText("Be brief.")
    qtbot.keyClick(dialog.form.system_prompt, Qt.Key.Key_Escape)
    assert dialog.isVisible()
    box = dialog.discard_box
    assert isinstance(box, QMessageBox)
    assert box.isVisible()
    keep = next(b for b in box.buttons() if b.text() == "Keep editing")
    keep.click()
    assert dialog.isVisible()
    qtbot.keyClick(dialog.form.system_prompt, Qt.Key.Key_Escape)
    assert dialog.discard_box is not None
    next(b for b in dialog.discard_box.buttons() if b.text() == "Discard").click()
    assert not dialog.isVisible()


def test_no_keychain_warning_for_a_token_from_the_environment(qtbot: QtBot) -> None:
    """Issue 11 #8."""
    env = {"CLOUDFLARE_API_TOKEN": "cfut_" + "a" * 40}
    dialog = _dialog(
        qtbot, Settings(account_id=ACCOUNT), overridden=frozenset({"api_token"}), env=env
    )
    _keychain_fails(dialog)
    assert not dialog.form.keychain_warning.isVisibleTo(dialog)
    dialog.form.route.setCurrentIndex(dialog.form.route.findData("gateway-rest"))
    assert dialog.form.keychain_warning.isVisibleTo(dialog)  # the gateway token would need it


def test_no_keychain_warning_in_demo_mode_until_a_token_is_typed(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, demo=True)
    _keychain_fails(dialog)
    assert not dialog.form.keychain_warning.isVisibleTo(dialog)
    qtbot.keyClicks(dialog.form.api_token.edit, "cfut_" + "b" * 40)
    assert dialog.form.keychain_warning.isVisibleTo(dialog)
    dialog.form.api_token.edit.clear()
    assert not dialog.form.keychain_warning.isVisibleTo(dialog)


def test_without_demo_the_keychain_warning_shows(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    _keychain_fails(dialog)
    assert dialog.form.keychain_warning.isVisibleTo(dialog)


def test_label_columns_have_one_width_on_every_tab(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    widths = set()
    for page in dialog.form.pages:
        for form in page.findChildren(QFormLayout):
            for row in range(form.rowCount()):
                item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
                if item is not None and isinstance(label := item.widget(), QLabel):
                    widths.add(label.minimumWidth())
    assert len(widths) == 1
    assert widths.pop() > 0


def test_one_request_timeout_field(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    labels = [label.text() for label in dialog.findChildren(QLabel)]
    assert labels.count("Request timeout:") == 1
    assert "Gateway timeout:" in labels


def test_disabled_gateway_fields_look_disabled(qtbot: QtBot, qapp: QApplication) -> None:
    dialog = _dialog(qtbot)  # the direct route: gateway fields are off
    edit = dialog.form.gateway_id
    assert not edit.isEnabled()
    palette = qapp.palette()
    base = QPalette.ColorRole.Base
    assert palette.color(QPalette.ColorGroup.Disabled, base) == palette.color(
        QPalette.ColorRole.Window
    )
    assert palette.color(QPalette.ColorGroup.Disabled, base) != palette.color(
        QPalette.ColorGroup.Active, base
    )


def test_the_basics_and_the_advanced_options_are_apart(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot)
    form = dialog.form
    connection = form.connection
    for widget in (form.route, form.reject_if_busy, form.gateway_id, form.gateway_token):
        assert connection.isAncestorOf(widget)
    for option in (form.cache_ttl, form.skip_cache, form.gateway_options.backoff, form.api_base):
        assert form.advanced.isAncestorOf(option)


def test_theme_and_text_size_read_back(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings(theme="dark", font_size=13))
    appearance = dialog.form.appearance
    assert appearance.theme_value() == "dark"
    assert appearance.font_size_value() == 13
    appearance.set_theme("light")
    appearance.font_size.setValue(appearance.font_size.minimum())
    result = dialog.result_settings()
    assert (result.theme, result.font_size) == ("light", 0)
    assert appearance.font_size.text() == "System size"


def test_pages_scroll_instead_of_squashing(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings(account_id=ACCOUNT))
    dialog.form.api_token.set_state(TokenState.NONE)
    dialog.show()
    dialog.resize(dialog.minimumWidth(), 300)
    QApplication.processEvents()
    dialog.form.show_page(dialog.form.advanced)
    QApplication.processEvents()
    area = dialog.form.tabs.currentWidget()
    assert area is not None
    bar = area.findChild(type(area.verticalScrollBar()))  # type: ignore[attr-defined]
    assert bar is not None
    assert area.verticalScrollBar().maximum() > 0  # type: ignore[attr-defined]
    assert dialog.isSizeGripEnabled()

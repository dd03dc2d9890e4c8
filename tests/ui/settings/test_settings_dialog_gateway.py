"""The settings dialog's "Gateway options" group: enabled per route, validated, read back."""

from __future__ import annotations

import dataclasses

from pytestqt.qtbot import QtBot

from flarechat.settings.schema import Settings
from flarechat.settings.secrets import MemorySecretStore
from flarechat.ui.settings.dialog import SettingsDialog
from flarechat.ui.settings.pages import GATEWAY_DEFAULT

ACCOUNT = "0123456789abcdef0123456789abcdef"
GATEWAY = Settings(
    account_id=ACCOUNT,
    route="gateway-rest",
    gateway_id="my-gw",
    gateway_cache_key="faq-1",
    gateway_metadata={"team": "docs", "ticket": "42"},
    gateway_collect_log=False,
    gateway_request_timeout_ms=15_000,
    gateway_max_attempts=3,
    gateway_retry_delay_ms=0,
    gateway_backoff="linear",
)


def _dialog(qtbot: QtBot, settings: Settings) -> SettingsDialog:
    dialog = SettingsDialog(
        settings, secrets=MemorySecretStore(), overridden=frozenset(), verify=None, env={}
    )
    qtbot.addWidget(dialog)
    return dialog


def test_the_group_is_enabled_only_on_a_gateway_route(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, Settings(account_id=ACCOUNT))
    form, group = dialog.form, dialog.form.gateway_options
    fields = [
        group.cache_key,
        group.metadata,
        group.collect_log,
        group.request_timeout,
        group.max_attempts,
        group.retry_delay,
        group.backoff,
    ]
    assert group.heading.text() == "Gateway options"
    assert not any(field.isEnabled() for field in fields)
    form.route.setCurrentIndex(form.route.findData("gateway-url"))
    assert all(field.isEnabled() for field in fields)
    form.route.setCurrentIndex(form.route.findData("direct"))
    assert not any(field.isEnabled() for field in fields)
    assert not group.heading.isEnabled()


def test_saved_options_are_shown_and_read_back_unchanged(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, GATEWAY)
    group = dialog.form.gateway_options
    assert group.metadata.text() == "team=docs, ticket=42"
    assert group.collect_log.currentData() == "off"
    assert group.retry_delay.value() == 0
    assert group.retry_delay.text() != GATEWAY_DEFAULT  # 0 ms is a real choice
    assert dialog.form.result_settings() == GATEWAY


def test_defaults_show_as_gateway_default_and_are_not_set(qtbot: QtBot) -> None:
    settings = dataclasses.replace(GATEWAY, gateway_id="g")
    defaults = Settings(account_id=ACCOUNT, route="gateway-rest", gateway_id="g")
    dialog = _dialog(qtbot, defaults)
    group = dialog.form.gateway_options
    for spin in (group.request_timeout, group.max_attempts, group.retry_delay):
        assert spin.text() == GATEWAY_DEFAULT
    assert group.backoff.currentText() == GATEWAY_DEFAULT
    assert dialog.form.result_settings() == defaults
    group.cache_key.setText(" faq-1 ")
    group.metadata.setText("team=docs,ticket=42")
    group.collect_log.setCurrentIndex(group.collect_log.findData("off"))
    group.request_timeout.setValue(15_000)
    group.max_attempts.setValue(3)
    group.retry_delay.setValue(0)
    group.backoff.setCurrentIndex(group.backoff.findData("linear"))
    assert dialog.form.result_settings() == settings


def test_bad_metadata_blocks_ok_with_a_clear_message(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, GATEWAY)
    group = dialog.form.gateway_options
    qtbot.keyClicks(group.metadata, ", oops")
    message = group.metadata_row.error_text()
    assert message is not None
    assert "key=value" in message
    assert "gateway_metadata" in dialog.errors()
    assert not dialog.ok_button.isEnabled()
    assert "Metadata (Advanced)" in dialog.form.problems.text()
    group.metadata.setText("a=1, b=2, c=3, d=4, e=5, f=6")
    assert "at most 5" in (group.metadata_row.error_text() or "")
    group.metadata.setText("a=1")
    assert dialog.ok_button.isEnabled()
    assert dialog.form.result_settings().gateway_metadata == {"a": "1"}


def test_gateway_option_errors_do_not_count_on_the_direct_route(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, GATEWAY)
    group = dialog.form.gateway_options
    group.cache_key.setText("caf\u00e9")
    assert "gateway_cache_key" in dialog.errors()
    dialog.form.route.setCurrentIndex(dialog.form.route.findData("direct"))
    assert "gateway_cache_key" not in dialog.errors()
    assert dialog.ok_button.isEnabled()

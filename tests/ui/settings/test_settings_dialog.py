"""The settings dialog: validation, env overrides, keychain storage, session fallback, Verify."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from flarechat.api.errors import AuthenticationFailed
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import (
    API_TOKEN,
    GATEWAY_TOKEN,
    KeyringSecretStore,
    MemorySecretStore,
    SecretStoreUnavailable,
)
from flarechat.settings.store import SettingsStore
from flarechat.ui.settings.dialog import SettingsDialog, VerifyCallable, VerifyInput
from flarechat.ui.settings.fields import STORED_PLACEHOLDER, TokenState
from flarechat.ui.settings.form import MISSING_TOKEN

ACCOUNT = "0123456789abcdef0123456789abcdef"
TOKEN = "cfut_" + "A1b2C3d4E5" * 4
OTHER_TOKEN = "cfat_" + "Z9y8X7w6V5" * 4
GATEWAY_SECRET = "gw_" + "Q1w2E3r4T5" * 3
#: Bound on waiting for a signal or state (never reached when green; generous for busy CPUs).
WAIT = 15.0

SignalFuture = Callable[[SignalInstance], "asyncio.Future[tuple[Any, ...]]"]


class RefusingStore:
    """A keychain that answers reads but refuses writes (a locked or broken keyring)."""

    def get(self, name: str) -> str | None:
        return None

    def set(self, name: str, value: str) -> None:
        raise SecretStoreUnavailable("The system keychain is locked.", reason="locked")

    def delete(self, name: str) -> None:
        raise SecretStoreUnavailable("The system keychain is locked.", reason="locked")


@pytest.fixture(autouse=True)
def keep_loop_alive(qapp: QApplication) -> Iterator[None]:
    """Closing the dialog (the only window) must not make Qt quit the test's qasync loop."""
    before = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)
    yield
    qapp.setQuitOnLastWindowClosed(before)


def make_dialog(
    qtbot: QtBot,
    settings: Settings | None = None,
    *,
    secrets: Any = None,
    session: MemorySecretStore | None = None,
    overridden: frozenset[str] = frozenset(),
    verify: VerifyCallable | None = None,
    env: dict[str, str] | None = None,
) -> SettingsDialog:
    dialog = SettingsDialog(
        settings or Settings(account_id=ACCOUNT),
        secrets=secrets if secrets is not None else MemorySecretStore(),
        overridden=overridden,
        verify=verify,
        session_secrets=session,
        env=env or {},
    )
    qtbot.addWidget(dialog)
    return dialog


async def opened(dialog: SettingsDialog, signal_future: SignalFuture) -> SettingsDialog:
    """open() the dialog and wait until it has looked the tokens up."""
    checked = signal_future(dialog.keychain_checked)
    dialog.open()
    await asyncio.wait_for(checked, WAIT)
    return dialog


async def until(predicate: Callable[[], bool]) -> None:
    """Let the loop run until ``predicate`` holds (bounded: fails after WAIT seconds)."""

    async def poll() -> None:
        # Polling on purpose: these states have no signal of their own.
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), WAIT)


async def press_ok(dialog: SettingsDialog, signal: SignalInstance, future: SignalFuture) -> Any:
    result = future(signal)
    dialog.ok_button.click()
    (value,) = await asyncio.wait_for(result, WAIT)
    return value


# -- validation ---------------------------------------------------------------------------------


def test_bad_account_id_shows_where_to_find_it_and_blocks_ok(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot, Settings())
    assert not dialog.form.verify.isVisibleTo(dialog)  # no verify callable given
    assert dialog.ok_button.isEnabled()  # empty is allowed: the welcome state handles it
    qtbot.keyClicks(dialog.form.account_id, "0123456789abcdef-not-hex")
    message = dialog.form.account_row.error_text()
    assert message is not None
    assert "Use REST API" in message
    assert "account_id" in dialog.errors()
    assert not dialog.ok_button.isEnabled()
    assert "Account ID (Account)" in dialog.form.problems.text()
    dialog.form.account_id.setText(ACCOUNT.upper())
    assert dialog.form.account_row.error_text() is None
    assert dialog.ok_button.isEnabled()
    assert dialog.form.problems.text() == ""


def test_an_account_id_without_a_token_is_refused_inline(qtbot: QtBot) -> None:
    """Issue 11 #6: an account ID with no token used to save without a word."""
    dialog = make_dialog(qtbot, Settings())
    dialog.form.api_token.set_state(TokenState.NONE)  # the keychain holds none
    qtbot.keyClicks(dialog.form.account_id, ACCOUNT)
    assert dialog.form.api_token_row.error_text() == MISSING_TOKEN
    assert not dialog.ok_button.isEnabled()
    assert "API token (Account)" in dialog.form.problems.text()
    qtbot.keyClicks(dialog.form.api_token.edit, TOKEN)
    assert dialog.form.api_token_row.error_text() is None
    assert dialog.ok_button.isEnabled()


def test_a_pasted_token_with_a_space_is_refused_inline(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    qtbot.keyClicks(dialog.form.api_token.edit, "Bearer " + TOKEN)
    message = dialog.form.api_token_row.error_text()
    assert message is not None
    assert "space" in message
    assert TOKEN not in message
    assert not dialog.ok_button.isEnabled()


def test_route_switch_enables_the_gateway_fields(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    form = dialog.form
    gateway_widgets = [form.gateway_id, form.gateway_token.edit, form.skip_cache, form.cache_ttl]
    assert not any(w.isEnabled() for w in gateway_widgets)
    form.route.setCurrentIndex(form.route.findData("gateway-url"))
    assert all(w.isEnabled() for w in gateway_widgets)
    assert "gateway_id" in dialog.errors()  # a gateway route needs a gateway
    assert not dialog.ok_button.isEnabled()
    qtbot.keyClicks(form.gateway_id, "my-gateway")
    assert dialog.ok_button.isEnabled()
    form.route.setCurrentIndex(form.route.findData("direct"))
    assert not form.gateway_id.isEnabled()


def test_cache_ttl_below_the_gateway_minimum_is_an_error(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot, Settings(account_id=ACCOUNT, route="gateway-rest", gateway_id="g"))
    dialog.form.cache_ttl.setValue(30)
    assert "cache_ttl" in dialog.errors()
    dialog.form.cache_ttl.setValue(3600)
    assert "cache_ttl" not in dialog.errors()
    assert dialog.form.cache_ttl_row.note.text() == "Cached answers are kept for 1 h."


def test_bad_base_url_is_explained(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    qtbot.keyClicks(dialog.form.api_base, "http://example.com/client/v4")
    assert "https://" in (dialog.form.api_base_row.error_text() or "")
    assert not dialog.ok_button.isEnabled()
    dialog.form.api_base.setText("http://127.0.0.1:8787/client/v4")
    assert dialog.ok_button.isEnabled()


def test_every_value_reads_back_into_settings(qtbot: QtBot) -> None:
    saved = Settings(account_id=ACCOUNT, cache_ttl=600, default_temperature=0.7, last_model="@x/y")
    dialog = make_dialog(qtbot, saved)
    form = dialog.form
    form.route.setCurrentIndex(form.route.findData("gateway-rest"))
    form.endpoint.setCurrentIndex(form.endpoint.findData("openai"))
    form.gateway_id.setText("team-gw")
    form.reject_if_busy.setChecked(True)
    form.skip_cache.setChecked(True)
    form.cache_ttl.setValue(form.cache_ttl.minimum())  # "Gateway default"
    form.max_tokens.setValue(4096)
    form.temperature.setValue(form.temperature.minimum())  # "Model default"
    form.system_prompt.setPlainText("Be brief.")
    form.request_timeout.setValue(300)
    result = dialog.result_settings()
    assert result == Settings(
        account_id=ACCOUNT,
        route="gateway-rest",
        endpoint="openai",
        gateway_id="team-gw",
        reject_if_busy=True,
        skip_cache=True,
        cache_ttl=None,
        default_max_tokens=4096,
        default_temperature=None,
        default_system_prompt="Be brief.",
        request_timeout=300.0,
        last_model="@x/y",
    )
    assert form.cache_ttl.text() == "Gateway default"
    assert form.temperature.text() == "Model default"


def test_reject_if_busy_says_what_it_does(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    notes = [label.text() for label in dialog.findChildren(type(dialog.form.status))]
    assert any("fail fast and retry" in text and "queue" in text for text in notes)


def test_environment_values_are_shown_read_only(qtbot: QtBot) -> None:
    env = {
        "CLOUDFLARE_ACCOUNT_ID": "fedcba9876543210fedcba9876543210",
        "CLOUDFLARE_AI_GATEWAY_ID": "env-gw",
        "CLOUDFLARE_API_TOKEN": TOKEN,
    }
    overridden = frozenset({"account_id", "gateway_id", "route", "api_token"})
    saved = Settings(account_id=ACCOUNT)
    dialog = make_dialog(qtbot, saved, overridden=overridden, env=env)
    form = dialog.form
    assert form.account_id.isReadOnly()
    assert form.account_id.text() == env["CLOUDFLARE_ACCOUNT_ID"]
    assert form.account_row.note.text() == "Set by CLOUDFLARE_ACCOUNT_ID"
    assert form.gateway_id.isReadOnly()
    assert form.gateway_row.note.text() == "Set by CLOUDFLARE_AI_GATEWAY_ID"
    assert not form.route.isEnabled()
    assert form.route.currentData() == "gateway-rest"
    assert form.api_token.edit.isReadOnly()
    assert form.api_token.edit.text() == ""  # the env token is never displayed
    assert form.api_token.edit.placeholderText() == "Set by CLOUDFLARE_API_TOKEN"
    result = dialog.result_settings()  # the environment's values are not saved
    assert (result.account_id, result.gateway_id, result.route) == (ACCOUNT, "", "direct")


def test_show_toggle_reveals_the_typed_token(qtbot: QtBot) -> None:
    dialog = make_dialog(qtbot)
    field = dialog.form.api_token
    assert field.edit.echoMode() == QLineEdit.EchoMode.Password
    qtbot.mouseClick(field.show_button, Qt.MouseButton.LeftButton)
    assert field.edit.echoMode() == QLineEdit.EchoMode.Normal
    assert field.show_button.text() == "Hide"
    qtbot.mouseClick(field.show_button, Qt.MouseButton.LeftButton)
    assert field.edit.echoMode() == QLineEdit.EchoMode.Password


def test_every_control_has_an_accessible_name(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QPlainTextEdit

    dialog = make_dialog(qtbot)
    kinds = (QAbstractButton, QLineEdit, QAbstractSpinBox, QComboBox, QPlainTextEdit)
    controls = [w for kind in kinds for w in dialog.findChildren(kind)]
    controls = [w for w in controls if not isinstance(w.parent(), QAbstractSpinBox | QComboBox)]
    assert len(controls) > 15
    unnamed = [type(w).__name__ for w in controls if not w.accessibleName()]
    assert unnamed == []


# -- keychain -------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_token_goes_to_the_keychain_never_into_settings(
    qtbot: QtBot, tmp_path: Path, signal_future: SignalFuture
) -> None:
    store = MemorySecretStore()
    dialog = await opened(make_dialog(qtbot, secrets=store), signal_future)
    assert dialog.form.api_token.state is TokenState.NONE
    qtbot.keyClicks(dialog.form.api_token.edit, TOKEN)
    changes = signal_future(dialog.tokens_changed)
    settings = await press_ok(dialog, dialog.settings_accepted, signal_future)
    assert (await asyncio.wait_for(changes, WAIT)) == ({API_TOKEN: TOKEN},)
    assert store.get(API_TOKEN) == TOKEN
    assert dialog.result() == dialog.DialogCode.Accepted
    path = tmp_path / "settings.json"
    SettingsStore(path).save(settings)
    assert settings.account_id == ACCOUNT
    assert TOKEN not in path.read_text(encoding="utf-8")
    assert TOKEN not in repr(settings)


@pytest.mark.asyncio
async def test_a_stored_token_is_masked_and_kept_when_left_empty(
    qtbot: QtBot, signal_future: SignalFuture
) -> None:
    store = MemorySecretStore({API_TOKEN: TOKEN})
    dialog = await opened(make_dialog(qtbot, secrets=store), signal_future)
    field = dialog.form.api_token
    assert field.state is TokenState.STORED
    assert field.edit.text() == ""
    assert field.edit.placeholderText() == STORED_PLACEHOLDER
    assert "Stored in the system keychain" in dialog.form.api_token_row.note.text()
    with qtbot.assertNotEmitted(dialog.tokens_changed):
        await press_ok(dialog, dialog.settings_accepted, signal_future)
    assert store.get(API_TOKEN) == TOKEN


@pytest.mark.asyncio
async def test_remove_deletes_the_stored_token(qtbot: QtBot, signal_future: SignalFuture) -> None:
    store = MemorySecretStore({API_TOKEN: TOKEN, GATEWAY_TOKEN: GATEWAY_SECRET})
    dialog = await opened(make_dialog(qtbot, secrets=store), signal_future)
    field = dialog.form.api_token
    qtbot.mouseClick(field.remove_button, Qt.MouseButton.LeftButton)
    assert field.edit.placeholderText() == "Will be removed when you press OK"
    assert not dialog.ok_button.isEnabled()  # an account without a token cannot send
    dialog.form.account_id.clear()  # forgetting the account too is fine
    assert await press_ok(dialog, dialog.tokens_changed, signal_future) == {API_TOKEN: None}
    assert store.get(API_TOKEN) is None
    assert store.get(GATEWAY_TOKEN) == GATEWAY_SECRET


@pytest.mark.asyncio
async def test_cancel_saves_nothing(qtbot: QtBot, signal_future: SignalFuture) -> None:
    store = MemorySecretStore()
    dialog = await opened(make_dialog(qtbot, secrets=store), signal_future)
    qtbot.keyClicks(dialog.form.api_token.edit, TOKEN)
    with qtbot.assertNotEmitted(dialog.settings_accepted):
        dialog.reject()
    assert store.get(API_TOKEN) is None


@pytest.mark.asyncio
async def test_no_keychain_warns_and_keeps_the_token_for_the_session(
    qtbot: QtBot, signal_future: SignalFuture
) -> None:
    session = MemorySecretStore()
    keychain = KeyringSecretStore()  # the suite forces keyring's "fail" backend
    dialog = await opened(make_dialog(qtbot, secrets=keychain, session=session), signal_future)
    warning = dialog.form.keychain_warning
    assert warning.isVisibleTo(dialog)
    text = warning.text.text()
    assert text.startswith("No system keychain is available (")
    assert text.endswith(
        "The token will be kept for this session only and forgotten when Flarechat quits."
    )
    assert not dialog.keychain_available
    assert "session only" in dialog.form.api_token_row.note.text()
    qtbot.keyClicks(dialog.form.api_token.edit, TOKEN)
    assert await press_ok(dialog, dialog.tokens_changed, signal_future) == {API_TOKEN: TOKEN}
    assert session.get(API_TOKEN) == TOKEN


@pytest.mark.asyncio
async def test_keychain_failing_on_save_falls_back_and_stays_open(
    qtbot: QtBot, signal_future: SignalFuture
) -> None:
    session = MemorySecretStore()
    dialog = await opened(
        make_dialog(qtbot, Settings(), secrets=RefusingStore(), session=session), signal_future
    )
    assert dialog.keychain_available
    dialog.form.route.setCurrentIndex(dialog.form.route.findData("gateway-rest"))
    dialog.form.gateway_id.setText("gw")
    qtbot.keyClicks(dialog.form.gateway_token.edit, GATEWAY_SECRET)
    dialog.ok_button.click()
    await until(lambda: "Press OK" in dialog.form.status.text())
    assert dialog.isVisible()
    assert dialog.form.keychain_warning.isVisibleTo(dialog)
    assert "Press OK to close" in dialog.form.status.text()
    assert session.get(GATEWAY_TOKEN) == GATEWAY_SECRET
    assert dialog.form.gateway_token.state is TokenState.SESSION
    changes = await press_ok(dialog, dialog.tokens_changed, signal_future)
    assert changes == {GATEWAY_TOKEN: GATEWAY_SECRET}
    assert not dialog.isVisible()


@pytest.mark.asyncio
async def test_a_token_kept_for_the_session_is_shown_as_such(
    qtbot: QtBot, signal_future: SignalFuture
) -> None:
    session = MemorySecretStore({API_TOKEN: TOKEN})
    dialog = await opened(
        make_dialog(qtbot, secrets=KeyringSecretStore(), session=session), signal_future
    )
    assert dialog.form.api_token.state is TokenState.SESSION
    assert dialog.form.api_token.remove_button.isEnabled()


# -- Verify ---------------------------------------------------------------------------------


class FakeVerify:
    """Records what Verify sends; answers when released (or fails with ``error``)."""

    def __init__(self, *, error: Exception | None = None) -> None:
        self.calls: list[VerifyInput] = []
        self.release = asyncio.Event()
        self.error = error
        self.cancelled = False

    async def __call__(self, request: VerifyInput) -> str:
        self.calls.append(request)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if self.error is not None:
            raise self.error
        return "This API Token is valid and active"


@pytest.mark.asyncio
async def test_verify_success_is_shown_inline(qtbot: QtBot, signal_future: SignalFuture) -> None:
    verify = FakeVerify()
    dialog = await opened(make_dialog(qtbot, verify=verify), signal_future)
    row = dialog.form.verify
    assert not row.button.isEnabled()  # no token yet
    qtbot.keyClicks(dialog.form.api_token.edit, TOKEN)
    assert row.button.isEnabled()
    finished = signal_future(dialog.verify_finished)
    qtbot.mouseClick(row.button, Qt.MouseButton.LeftButton)
    await until(lambda: bool(verify.calls))
    assert not row.button.isEnabled()
    assert row.busy.isVisibleTo(dialog)
    assert row.result.text() == "Checking…"
    verify.release.set()
    assert await asyncio.wait_for(finished, WAIT) == (True,)
    assert row.result.text() == "✓ This API Token is valid and active"
    assert not row.busy.isVisibleTo(dialog)
    assert row.button.isEnabled()
    (request,) = verify.calls
    assert request.account_id == ACCOUNT
    assert request.api_token.reveal() == TOKEN
    assert TOKEN not in repr(request)


@pytest.mark.asyncio
async def test_verify_failure_is_shown_in_red(qtbot: QtBot, signal_future: SignalFuture) -> None:
    verify = FakeVerify(error=AuthenticationFailed("Cloudflare rejected the API token."))
    verify.release.set()
    store = MemorySecretStore({API_TOKEN: OTHER_TOKEN})
    dialog = await opened(make_dialog(qtbot, secrets=store, verify=verify), signal_future)
    finished = signal_future(dialog.verify_finished)
    dialog.form.verify.button.click()  # uses the stored token: the field is empty
    assert await asyncio.wait_for(finished, WAIT) == (False,)
    error = dialog.form.verify.error
    assert error.isVisibleTo(dialog)
    assert error.text() == "Cloudflare rejected the API token."
    assert error.objectName() == "errorText"
    assert verify.calls[0].api_token.reveal() == OTHER_TOKEN
    assert dialog.form.verify.button.isEnabled()


@pytest.mark.asyncio
async def test_verify_uses_the_environment_token(qtbot: QtBot, signal_future: SignalFuture) -> None:
    verify = FakeVerify(error=RuntimeError("boom"))
    verify.release.set()
    dialog = make_dialog(
        qtbot,
        verify=verify,
        overridden=frozenset({"api_token"}),
        env={"CLOUDFLARE_API_TOKEN": TOKEN},
    )
    await opened(dialog, signal_future)
    finished = signal_future(dialog.verify_finished)
    dialog.form.verify.button.click()
    assert await asyncio.wait_for(finished, WAIT) == (False,)
    assert verify.calls[0].api_token.reveal() == TOKEN
    assert dialog.form.verify.error.text() == "Verification failed: boom"


@pytest.mark.asyncio
async def test_closing_while_verifying_cancels_the_check(
    qtbot: QtBot, signal_future: SignalFuture
) -> None:
    verify = FakeVerify()
    dialog = await opened(make_dialog(qtbot, verify=verify), signal_future)
    qtbot.keyClicks(dialog.form.api_token.edit, TOKEN)
    dialog.form.verify.button.click()
    await until(lambda: bool(verify.calls))
    with qtbot.assertNotEmitted(dialog.verify_finished):
        dialog.reject()
        await until(lambda: verify.cancelled)  # the check itself was cancelled…
        verify.release.set()  # …so answering now reaches no one
        await asyncio.sleep(0.05)
    assert not dialog.isVisible()


def test_read_only_fields_follow_a_theme_change(qtbot: QtBot, qapp: QApplication) -> None:
    from flarechat.ui.shared.theme import DARK, LIGHT, apply_theme

    env = {"FLARECHAT_API_BASE": "http://127.0.0.1:9/client/v4"}
    dialog = make_dialog(
        qtbot, Settings(account_id="bad"), overridden=frozenset({"api_base"}), env=env
    )
    dialog.show()
    edit, error = dialog.form.api_base, dialog.form.account_row.error
    window = QPalette.ColorRole.Window
    assert edit.palette().color(QPalette.ColorRole.Base) == qapp.palette().color(window)
    light_error = error.palette().color(QPalette.ColorRole.WindowText)
    try:
        apply_theme(qapp, "dark")
        qapp.processEvents()  # Qt hands the new palette to widgets from the event loop
        dialog.form.show_page(dialog.form.advanced)
        qapp.processEvents()
        assert edit.palette().color(QPalette.ColorRole.Base) == qapp.palette().color(window)
        assert error.palette().color(QPalette.ColorRole.WindowText) == QColor(DARK.danger)
        assert light_error == QColor(LIGHT.danger) != QColor(DARK.danger)
    finally:
        apply_theme(qapp, "light")

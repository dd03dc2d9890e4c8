"""The settings dialog: account, connection, generation, advanced options; tokens in the keychain.

Tokens never touch ``Settings``: they are read from and written to a ``SecretStore`` off the GUI
thread (``secrets.aget``/``aset``/``adelete``, with a timeout). Without a usable keychain the
dialog says so and keeps them in the session-only store the caller passes. All keychain and
verify work runs as tasks on the running (qasync) loop, kept referenced and cancelled on close.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.api.config import Secret
from flarechat.api.errors import WorkersAIError
from flarechat.settings.resolve import API_TOKEN_FIELD, OVERRIDE_ENV
from flarechat.settings.schema import Settings
from flarechat.settings.secrets import (
    API_TOKEN,
    GATEWAY_TOKEN,
    MemorySecretStore,
    SecretStore,
    SecretStoreUnavailable,
    adelete,
    aget,
    aset,
)
from flarechat.ui.control.view_data import VerifyInput
from flarechat.ui.settings.fields import TokenField, TokenState
from flarechat.ui.settings.form import SettingsForm

__all__ = ["KEYCHAIN_WARNING", "SettingsDialog", "VerifyCallable", "VerifyInput"]

log = logging.getLogger(__name__)

KEYCHAIN_WARNING = (
    "No system keychain is available ({reason}). The token will be kept for this session only "
    "and forgotten when Flarechat quits."
)
#: Seconds the dialog waits for the injected verify callable before giving up.
VERIFY_TIMEOUT = 30.0
#: Seconds to wait for the keychain to name its backend (cached after the first read).
DESCRIBE_TIMEOUT = 2.0
DEFAULT_KEYCHAIN = "the system keychain"
DIALOG_MIN_WIDTH = 660
#: The size a settings window opens at when the screen has room (it can be resized).
PREFERRED_SIZE = (760, 680)
TITLE = "Settings \N{EM DASH} Flarechat"
DISCARD_QUESTION = "Discard your changes to the settings?"


#: Checks a token; returns a short success line, raises (e.g. WorkersAIError) on failure.
VerifyCallable = Callable[[VerifyInput], Awaitable[str]]


class SettingsDialog(QDialog):
    """Edits ``Settings`` and the two tokens; open it with ``open()``, never ``exec()``.

    Signals:
        settings_accepted(Settings): OK pressed and everything saved; the new settings (fields
            set by environment variables keep their saved values).
        tokens_changed(dict[str, str | None]): emitted with settings_accepted when a token
            changed; maps ``secrets.API_TOKEN``/``GATEWAY_TOKEN`` to the new value, ``None`` if
            removed. Not emitted when no token changed.
        keychain_checked(): the saved tokens were looked up (the fields show where they are).
        verify_finished(bool): a Verify ended; True if the token was accepted.
    """

    settings_accepted = Signal(object)
    tokens_changed = Signal(object)
    keychain_checked = Signal()
    verify_finished = Signal(bool)

    def __init__(
        self,
        settings: Settings,
        *,
        secrets: SecretStore,
        overridden: frozenset[str],
        verify: VerifyCallable | None,
        parent: QWidget | None = None,
        session_secrets: SecretStore | None = None,
        env: Mapping[str, str] = os.environ,
        demo: bool = False,
    ) -> None:
        """``demo``: the window runs on the built-in emulator (no token needs a keychain)."""
        super().__init__(parent)
        self.setWindowTitle(TITLE)
        self.setAccessibleName("Settings")
        self.setMinimumWidth(DIALOG_MIN_WIDTH)
        self.setSizeGripEnabled(True)
        self._settings = settings
        self._demo = demo
        self._keychain_text = ""
        self.discard_box: QMessageBox | None = None
        self._secrets = secrets
        self._session = MemorySecretStore() if session_secrets is None else session_secrets
        self._verify = verify
        self._env = env
        self._keychain_down = False
        self._keychain_name = DEFAULT_KEYCHAIN
        self._loaded = False
        self._saving = False
        self._verifying = False
        self._token_changes: dict[str, str | None] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.form = SettingsForm(settings, overridden=overridden, env=env, parent=self)
        box = QVBoxLayout(self)
        box.addWidget(self.form)
        self.form.changed.connect(self._revalidate)
        self.form.verify.setVisible(verify is not None)
        self.form.verify_button.clicked.connect(self._on_verify_button_clicked)
        self.form.buttons.accepted.connect(self._on_buttons_accepted)
        self.form.buttons.rejected.connect(self.reject)
        self._revalidate()

    # -- public ---------------------------------------------------------------------------
    @property
    def ok_button(self) -> QPushButton:
        button = self.form.buttons.button(QDialogButtonBox.StandardButton.Ok)
        assert button is not None
        return button

    def errors(self) -> dict[str, str]:
        return self.form.errors()

    def result_settings(self) -> Settings:
        return self.form.result_settings()

    @property
    def keychain_available(self) -> bool:
        return not self._keychain_down

    # -- validation -----------------------------------------------------------------------
    def has_changes(self) -> bool:
        """Whether anything was edited (a typed token counts, its value is not compared)."""
        return self.form.has_token_changes() or self.result_settings() != self._settings

    def _revalidate(self) -> None:
        self._update_keychain_warning()
        errors = self.form.validate()
        self.ok_button.setEnabled(not errors and not self._saving)
        self.form.verify_button.setEnabled(self._can_verify(errors))

    def _can_verify(self, errors: Mapping[str, str]) -> bool:
        account_ok = bool(self.form.account_id_value()) and "account_id" not in errors
        token = self.form.api_token
        return (
            self._verify is not None
            and not self._verifying
            and account_ok
            and token.available()
            and "api_token" not in errors
            and token.state is not TokenState.LOADING
        )

    # -- task plumbing ----------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            log.warning("settings dialog used without a running event loop; keychain skipped")
            return
        task = loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._on_task_done)

    def _on_task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("settings dialog task failed", exc_info=task.exception())

    def done(self, result: int) -> None:
        current = asyncio.current_task() if _loop_running() else None
        for task in list(self._tasks):
            if task is not current:
                task.cancel()
        super().done(result)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_height()
        if not self._loaded:
            self._loaded = True
            self._spawn(self._load_tokens())

    def _fit_height(self) -> None:
        """Open at a comfortable size within the screen; the pages scroll when it is smaller."""
        width, height = PREFERRED_SIZE
        screen = self.screen()
        if screen is not None:
            room = screen.availableGeometry()
            width, height = min(width, room.width()), min(height, room.height())
        self.resize(max(self.width(), width), max(self.height(), height))

    # -- Esc ------------------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc asks before throwing edits away (Cancel is a deliberate choice and does not)."""
        if event.key() == Qt.Key.Key_Escape and self.has_changes() and not self._saving:
            event.accept()
            self._ask_discard()
            return
        super().keyPressEvent(event)

    def _ask_discard(self) -> None:
        """A sheet-like question, opened (not exec'd); one per dialog, reused."""
        if self.discard_box is None:
            box = QMessageBox(self)
            box.setIcon(QMessageBox.Icon.Question)
            box.setWindowTitle(TITLE)
            box.setText(DISCARD_QUESTION)
            box.setInformativeText("Your edits have not been saved.")
            discard = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
            keep = box.addButton("Keep editing", QMessageBox.ButtonRole.RejectRole)
            box.setDefaultButton(keep)
            discard.clicked.connect(self.reject)
            self.discard_box = box
        self.discard_box.open()

    # -- keychain ---------------------------------------------------------------------------
    def _token_fields(self) -> tuple[tuple[str, TokenField], ...]:
        return ((API_TOKEN, self.form.api_token), (GATEWAY_TOKEN, self.form.gateway_token))

    async def _load_tokens(self) -> None:
        for name, field in self._token_fields():
            if field.state is not TokenState.OVERRIDDEN:
                field.set_state(await self._probe(name))
        await self._learn_keychain_name()
        self._refresh_token_notes()
        self._revalidate()
        self.keychain_checked.emit()

    async def _probe(self, name: str) -> TokenState:
        if not self._keychain_down:
            try:
                if await aget(self._secrets, name) is not None:
                    return TokenState.STORED
            except SecretStoreUnavailable as exc:
                self._mark_keychain_down(exc)
        if await aget(self._session, name) is not None:
            return TokenState.SESSION
        return TokenState.NONE

    async def _learn_keychain_name(self) -> None:
        describe = getattr(self._secrets, "describe", None)
        if self._keychain_down or not callable(describe):
            return
        try:  # the backend was found by the read above, so this is a cached lookup
            async with asyncio.timeout(DESCRIBE_TIMEOUT):  # not wait_for: it can eat a cancel
                name = await asyncio.to_thread(describe)
        except (TimeoutError, SecretStoreUnavailable):
            return
        if isinstance(name, str) and name:
            self._keychain_name = f"the system keychain ({name})"

    def _mark_keychain_down(self, exc: SecretStoreUnavailable) -> None:
        if not self._keychain_down:
            log.warning("keychain unavailable: %s", exc.reason or exc.message)
        self._keychain_down = True
        self._keychain_text = KEYCHAIN_WARNING.format(reason=exc.reason or exc.message)
        self._update_keychain_warning()
        self._refresh_token_notes()

    def _update_keychain_warning(self) -> None:
        """Warn only when a token would need the keychain: not for a token from the
        environment, nor in demo mode until the user types one."""
        if not self._keychain_down:
            return
        form = self.form
        own_api_token = form.api_token.state is not TokenState.OVERRIDDEN
        needs = form.has_token_changes() or (
            not self._demo and (own_api_token or form.connection.uses_gateway())
        )
        form.show_keychain_warning(self._keychain_text, shown=needs)

    def _refresh_token_notes(self) -> None:
        self.form.set_token_notes(keychain=self._keychain_name, session_only=self._keychain_down)

    async def _write(self, store: SecretStore, *, name: str, value: str | None) -> None:
        if value:
            await aset(store, name, value)
        else:
            await adelete(store, name)

    async def _save_tokens(self) -> bool:
        """Write changed tokens; True if the keychain failed and they went to the session store."""
        fell_back = False
        for name, field in self._token_fields():
            if not field.has_change():
                continue
            value = field.new_value()
            store = self._session if self._keychain_down else self._secrets
            try:
                await self._write(store, name=name, value=value)
            except SecretStoreUnavailable as exc:
                self._mark_keychain_down(exc)
                await self._write(self._session, name=name, value=value)
                fell_back = True
            self._token_changes[name] = value
            saved = TokenState.SESSION if self._keychain_down else TokenState.STORED
            field.mark_saved(saved if value else TokenState.NONE)
        return fell_back

    # -- OK -------------------------------------------------------------------------------
    def _on_buttons_accepted(self) -> None:
        if not self._saving and not self.form.validate():
            self._spawn(self._save())

    def _set_saving(self, saving: bool) -> None:
        self._saving = saving
        self.form.set_status("Saving…" if saving else "")
        self._revalidate()

    async def _save(self) -> None:
        self._set_saving(True)
        try:
            fell_back = await self._save_tokens()
        finally:
            self._set_saving(False)
        if fell_back:
            self.form.set_status("Tokens kept for this session only. Press OK to close.")
            return
        self.settings_accepted.emit(self.result_settings())
        if self._token_changes:
            self.tokens_changed.emit(dict(self._token_changes))
        self.accept()

    # -- Verify ---------------------------------------------------------------------------
    def _on_verify_button_clicked(self) -> None:
        if not self._verifying:
            self._spawn(self._run_verify())

    async def _current_api_token(self) -> str | None:
        field = self.form.api_token
        if field.typed():
            return field.typed()
        if field.state is TokenState.OVERRIDDEN:
            return self._env.get(OVERRIDE_ENV[API_TOKEN_FIELD], "").strip() or None
        store = self._session if field.state is TokenState.SESSION else self._secrets
        return await aget(store, API_TOKEN)

    async def _run_verify(self) -> None:
        verify = self._verify
        if verify is None:
            return
        self._verifying = True
        self.form.verify.show_busy()
        self._revalidate()
        ok = False
        try:
            self.form.verify.show_result(await self._verify_once(verify), ok=True)
            ok = True
        except _VerifyFailed as exc:
            self.form.verify.show_result(str(exc), ok=False)
        finally:
            self._verifying = False
            self._revalidate()
        self.verify_finished.emit(ok)

    async def _verify_once(self, verify: VerifyCallable) -> str:
        try:
            token = await self._current_api_token()
        except SecretStoreUnavailable as exc:
            raise _VerifyFailed(exc.message) from None
        if not token:
            raise _VerifyFailed("There is no API token to verify.")
        request = VerifyInput(
            account_id=self.form.account_id_value(),
            api_token=Secret(token),
            api_base=self.form.api_base_value(),
            request_timeout=self.form.request_timeout.value(),
        )
        try:
            async with asyncio.timeout(VERIFY_TIMEOUT):  # not wait_for: it can eat a cancel
                return await verify(request)
        except WorkersAIError as exc:
            raise _VerifyFailed(exc.message) from None
        except TimeoutError:
            raise _VerifyFailed(f"No answer from Cloudflare in {VERIFY_TIMEOUT:g} s.") from None
        # Broad on purpose: verify is injected; whatever it raises is shown inline, and must
        # never escape into the loop's exception handler and leave the dialog stuck "checking".
        except Exception as exc:  # noqa: BLE001
            raise _VerifyFailed(f"Verification failed: {exc}") from None


class _VerifyFailed(Exception):
    """A verify outcome to show in red next to the button."""


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True

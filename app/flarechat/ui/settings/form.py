"""The settings dialog's form: scrolling tabs, inline validation, the values read back."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from PySide6.QtCore import Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from flarechat.settings import gateway_options as gw
from flarechat.settings import validate as v
from flarechat.settings.resolve import API_TOKEN_FIELD, ENV_GATEWAY_ID, OVERRIDE_ENV
from flarechat.settings.schema import Settings
from flarechat.ui.settings.fields import (
    ErrorLabel,
    FieldRow,
    TokenField,
    TokenState,
    WarningStrip,
    make_read_only,
    token_note,
)
from flarechat.ui.settings.pages import (
    DIRECT,
    GATEWAY_TIMEOUT_UNSET,
    GATEWAY_TOKEN_NOTE,
    MAX_ATTEMPTS_UNSET,
    RETRY_DELAY_UNSET,
    TEMPERATURE_UNSET,
    TTL_UNSET,
    AccountPage,
    AdvancedPage,
    AppearancePage,
    ConnectionPage,
    GenerationPage,
)
from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import mute

__all__ = ["SettingsForm"]

_Validator = Callable[[str], str | None]
#: Field -> (its label, the index of the tab it is on), for the "To save, fix: …" line.
FIELD_LABELS = {
    "account_id": "Account ID",
    "api_token": "API token",
    "gateway_id": "Gateway ID",
    "gateway_token": "Gateway token",
    "cache_ttl": "Cache TTL",
    "gateway_cache_key": "Cache key",
    "gateway_metadata": "Metadata",
    "api_base": "API base URL",
    "gateway_base": "Gateway base URL",
}
ACCOUNT_TAB, CONNECTION_TAB, GENERATION_TAB, APPEARANCE_TAB, ADVANCED_TAB = range(5)
FIELD_TABS = {
    "account_id": ACCOUNT_TAB,
    "api_token": ACCOUNT_TAB,
    "gateway_id": CONNECTION_TAB,
    "gateway_token": CONNECTION_TAB,
    "cache_ttl": ADVANCED_TAB,
    "gateway_cache_key": ADVANCED_TAB,
    "gateway_metadata": ADVANCED_TAB,
    "api_base": ADVANCED_TAB,
    "gateway_base": ADVANCED_TAB,
}


MISSING_TOKEN = "Add the API token for this account, or clear the account ID."
#: Space between the tabs, the problems line and the buttons (the 4/8 px grid).
SECTION_GAP_PX = 8


def _scrolling(page: QWidget) -> QScrollArea:
    """``page`` in a frameless scroll area: a small window scrolls instead of squashing rows."""
    area = QScrollArea()
    area.setObjectName("settingsPageScroll")
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(page)
    return area


class SettingsForm(QWidget):
    """Every settings field, laid out in tabs, with the verify row, status line and OK/Cancel.

    Signals:
        changed(): any input changed (the dialog re-validates).
    """

    changed = Signal()

    def __init__(
        self,
        settings: Settings,
        *,
        overridden: frozenset[str],
        env: Mapping[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._settings = settings
        self._overridden = overridden
        self._env = env
        self._errors: dict[str, str] = {}
        self._build()
        self._populate(settings)
        self._apply_overrides()
        self._connect()
        self._on_route_changed()

    # -- layout ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.keychain_warning = WarningStrip(self)
        self.keychain_warning.setAccessibleName("Keychain warning")
        self.account, self.connection = AccountPage(), ConnectionPage()
        self.generation, self.appearance = GenerationPage(), AppearancePage()
        self.advanced = AdvancedPage()
        self.pages: tuple[QWidget, ...] = (
            self.account,
            self.connection,
            self.generation,
            self.appearance,
            self.advanced,
        )
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("Settings sections")
        names = ("&Account", "C&onnection", "&Generation", "A&ppearance", "Ad&vanced")
        for page, name in zip(self.pages, names, strict=True):
            self.tabs.addTab(_scrolling(page), name)
        self._align_label_columns()
        self.problems = ErrorLabel(self)
        self.problems.setAccessibleName("Settings problems")
        self.status = mute(QLabel(self))
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Settings status")
        buttons = QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        self.buttons = QDialogButtonBox(buttons, self)
        for button in self.buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.buttons)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(SECTION_GAP_PX)
        box.addWidget(self.keychain_warning)
        box.addWidget(self.tabs, 1)
        box.addWidget(self.problems)  # full width: "To save, fix: …" can name several fields
        box.addLayout(bottom)
        self.problems.hide()
        self._alias_fields()

    def _align_label_columns(self) -> None:
        """Every tab's labels get the widest label's width, so fields line up across tabs."""
        labels = [label for page in self.pages for label in _form_labels(page)]
        width = max((label.sizeHint().width() for label in labels), default=0)
        for label in labels:
            label.setMinimumWidth(width)

    def tab_page(self, index: int) -> QWidget:
        """The page shown by tab ``index`` (the tab itself holds its scroll area)."""
        return self.pages[index]

    def show_page(self, page: QWidget) -> None:
        self.tabs.setCurrentIndex(self.pages.index(page))

    def _alias_fields(self) -> None:
        """Flat names for the fields the dialog and tests reach for."""
        a, c, g, adv = self.account, self.connection, self.generation, self.advanced
        self.account_id, self.account_row = a.account_id, a.account_row
        self.api_token, self.api_token_row, self.verify = a.api_token, a.api_token_row, a.verify
        self.verify_button = a.verify.button
        self.route, self.route_row, self.endpoint = c.route, c.route_row, c.endpoint
        self.reject_if_busy, self.skip_cache = c.reject_if_busy, adv.skip_cache
        self.gateway_id, self.gateway_row = c.gateway_id, c.gateway_row
        self.gateway_token, self.gateway_token_row = c.gateway_token, c.gateway_token_row
        self.cache_ttl, self.cache_ttl_row = adv.cache_ttl, adv.cache_ttl_row
        self.gateway_options = adv.options
        self.max_tokens, self.temperature = g.max_tokens, g.temperature
        self.system_prompt = g.system_prompt
        self.api_base, self.api_base_row = adv.api_base, adv.api_base_row
        self.gateway_base, self.gateway_base_row = adv.gateway_base, adv.gateway_base_row
        self.request_timeout = adv.request_timeout
        self.idle_timeout, self.overall_timeout = adv.idle_timeout, adv.overall_timeout

    # -- values in ------------------------------------------------------------------------
    def _populate(self, s: Settings) -> None:
        self.account_id.setText(s.account_id)
        self._select(self.route, s.route)
        self._select(self.endpoint, s.endpoint)
        self.gateway_id.setText(s.gateway_id)
        self.reject_if_busy.setChecked(s.reject_if_busy)
        self.skip_cache.setChecked(s.skip_cache)
        self.cache_ttl.setValue(TTL_UNSET if s.cache_ttl is None else s.cache_ttl)
        self.max_tokens.setValue(s.default_max_tokens)
        temperature = s.default_temperature
        self.temperature.setValue(TEMPERATURE_UNSET if temperature is None else temperature)
        self.system_prompt.setPlainText(s.default_system_prompt)
        self.api_base.setText(s.api_base)
        self.gateway_base.setText(s.gateway_base)
        self.request_timeout.setValue(s.request_timeout)
        self.idle_timeout.setValue(s.idle_timeout)
        self.overall_timeout.setValue(s.overall_timeout)
        self._populate_gateway_options(s)
        self.appearance.set_theme(s.theme)
        self.appearance.set_font_size(s.font_size)

    def _populate_gateway_options(self, s: Settings) -> None:
        o = self.gateway_options
        o.cache_key.setText(s.gateway_cache_key)
        o.metadata.setText(gw.format_metadata(s.gateway_metadata))
        o.set_collect_log(s.gateway_collect_log)
        self._select(o.backoff, s.gateway_backoff)
        timeout, attempts, delay = (
            s.gateway_request_timeout_ms,
            s.gateway_max_attempts,
            s.gateway_retry_delay_ms,
        )
        o.request_timeout.setValue(GATEWAY_TIMEOUT_UNSET if timeout is None else timeout)
        o.max_attempts.setValue(MAX_ATTEMPTS_UNSET if attempts is None else attempts)
        o.retry_delay.setValue(RETRY_DELAY_UNSET if delay is None else delay)

    @staticmethod
    def _select(combo: QComboBox, value: str) -> None:
        index = combo.findData(value)
        combo.setCurrentIndex(max(index, 0))

    def _env_value(self, field: str) -> str:
        return self._env.get(OVERRIDE_ENV.get(field, ""), "").strip()

    def _apply_overrides(self) -> None:
        edits = {
            "account_id": (self.account_id, self.account_row),
            "gateway_id": (self.gateway_id, self.gateway_row),
            "api_base": (self.api_base, self.api_base_row),
            "gateway_base": (self.gateway_base, self.gateway_base_row),
        }
        for field, (edit, row) in edits.items():
            if field in self._overridden:
                edit.setText(self._env_value(field))
                make_read_only(edit)
                row.set_note(f"Set by {OVERRIDE_ENV[field]}")
        if API_TOKEN_FIELD in self._overridden:
            env_name = OVERRIDE_ENV[API_TOKEN_FIELD]
            self.api_token.set_state(TokenState.OVERRIDDEN, env_name=env_name)
            self.api_token_row.set_note(f"Set by {env_name}")
        if "route" in self._overridden:
            if self.route.currentData() == DIRECT:
                self._select(self.route, "gateway-rest")
            self.route.setEnabled(False)
            self.route_row.set_note(f"Set by {ENV_GATEWAY_ID}")

    def _connect(self) -> None:
        options = self.gateway_options
        for edit in (
            self.account_id,
            self.gateway_id,
            self.api_base,
            self.gateway_base,
            options.cache_key,
            options.metadata,
        ):
            edit.textChanged.connect(self.changed)
        for token in (self.api_token, self.gateway_token):
            token.edited.connect(self.changed)
        self.route.currentIndexChanged.connect(self._on_route_changed)
        self.cache_ttl.valueChanged.connect(self.changed)

    def _on_route_changed(self) -> None:
        gateway = self.connection.uses_gateway()
        self.connection.set_gateway_enabled(gateway)
        self.advanced.set_gateway_enabled(gateway)
        self.changed.emit()

    # -- validation -----------------------------------------------------------------------
    def validate(self) -> dict[str, str]:
        """Check every editable field, show messages inline; returns field -> message."""
        checks: list[tuple[str, FieldRow, str | None]] = [
            ("account_id", self.account_row, self._check(self.account_id, v.validate_account_id)),
            ("api_token", self.api_token_row, self._check_api_token()),
            *self._gateway_checks(),
            ("api_base", self.api_base_row, self._check(self.api_base, v.validate_base_url)),
            (
                "gateway_base",
                self.gateway_base_row,
                self._check(self.gateway_base, v.validate_base_url),
            ),
        ]
        self._errors = {}
        for field, row, message in checks:
            row.set_error(message)
            if message:
                self._errors[field] = message
        self._show_problems()
        return dict(self._errors)

    def _show_problems(self) -> None:
        """Mark tabs holding an invalid field, and say where they are next to OK."""
        bad_tabs = {FIELD_TABS[field] for field in self._errors}
        for index in range(self.tabs.count()):
            bad = index in bad_tabs
            self.tabs.setTabIcon(index, icon("error", role="danger") if bad else QIcon())
        where = [f"{FIELD_LABELS[f]} ({self._tab_name(FIELD_TABS[f])})" for f in self._errors]
        self.problems.setText(f"To save, fix: {', '.join(where)}." if where else "")
        self.problems.setVisible(bool(where))

    def _tab_name(self, index: int) -> str:
        return self.tabs.tabText(index).replace("&", "")

    def _check_api_token(self) -> str | None:
        """A typed token must be well-formed; an account ID needs a token to go with it."""
        field = self.api_token
        if field.typed():
            return v.validate_api_token(field.typed())
        waiting = field.state is TokenState.LOADING
        if self.account_id_value() and not waiting and not field.available():
            return MISSING_TOKEN
        return None

    def _gateway_checks(self) -> list[tuple[str, FieldRow, str | None]]:
        """Gateway fields only count on a gateway route (they are disabled otherwise)."""
        rows = [
            ("gateway_id", self.gateway_row),
            ("gateway_token", self.gateway_token_row),
            ("cache_ttl", self.cache_ttl_row),
            ("gateway_cache_key", self.gateway_options.cache_key_row),
            ("gateway_metadata", self.gateway_options.metadata_row),
        ]
        if not self.connection.uses_gateway():
            return [(field, row, None) for field, row in rows]
        ttl = self.cache_ttl.value()
        messages = [
            self._check(self.gateway_id, v.validate_gateway_id, required=True),
            _check_token(self.gateway_token, v.validate_gateway_token),
            v.validate_cache_ttl(None if ttl == TTL_UNSET else ttl),
            gw.validate_cache_key(self.gateway_options.cache_key.text()),
            gw.parse_metadata(self.gateway_options.metadata.text())[1],
        ]
        return [(field, row, msg) for (field, row), msg in zip(rows, messages, strict=True)]

    def _check(
        self,
        edit: QLineEdit,
        validator: _Validator,
        *,
        required: bool = False,
    ) -> str | None:
        """Run ``validator`` on an editable field; empty optional fields and env values pass."""
        text = edit.text()
        if edit.isReadOnly() or (not required and not text.strip()):
            return None
        return validator(text)

    def errors(self) -> dict[str, str]:
        return dict(self._errors)

    # -- values out -----------------------------------------------------------------------
    def account_id_value(self) -> str:
        return self.account_id.text().strip()

    def api_base_value(self) -> str:
        return self.api_base.text().strip()

    def result_settings(self) -> Settings:
        """The edited settings; env-overridden fields keep their saved values."""
        s, kept = self._settings, self._overridden
        ttl = self.cache_ttl.value()
        temperature = self.temperature.value()
        settings = dataclasses.replace(
            s,
            account_id=s.account_id if "account_id" in kept else self.account_id_value(),
            route=s.route if "route" in kept else str(self.route.currentData()),
            endpoint=str(self.endpoint.currentData()),
            gateway_id=s.gateway_id if "gateway_id" in kept else self.gateway_id.text().strip(),
            reject_if_busy=self.reject_if_busy.isChecked(),
            skip_cache=self.skip_cache.isChecked(),
            cache_ttl=None if ttl == TTL_UNSET else ttl,
            default_max_tokens=self.max_tokens.value(),
            default_temperature=None if temperature <= TEMPERATURE_UNSET else temperature,
            default_system_prompt=self.system_prompt.toPlainText(),
            api_base=s.api_base if "api_base" in kept else self.api_base_value(),
            gateway_base=s.gateway_base if "gateway_base" in kept else self._gateway_base(),
            request_timeout=self.request_timeout.value(),
            idle_timeout=self.idle_timeout.value(),
            overall_timeout=self.overall_timeout.value(),
            theme=self.appearance.theme_value(),
            font_size=self.appearance.font_size_value(),
            ui_state=dict(s.ui_state),
        )
        return self._with_gateway_options(settings)

    def _with_gateway_options(self, settings: Settings) -> Settings:
        """The Gateway options group's values (a field that does not validate keeps its own)."""
        o = self.gateway_options
        metadata, metadata_error = gw.parse_metadata(o.metadata.text())
        timeout, attempts, delay = (
            o.request_timeout.value(),
            o.max_attempts.value(),
            o.retry_delay.value(),
        )
        return dataclasses.replace(
            settings,
            gateway_cache_key=o.cache_key.text().strip(),
            gateway_metadata=settings.gateway_metadata if metadata_error else metadata,
            gateway_collect_log=o.collect_log_value(),
            gateway_request_timeout_ms=None if timeout == GATEWAY_TIMEOUT_UNSET else timeout,
            gateway_max_attempts=None if attempts == MAX_ATTEMPTS_UNSET else attempts,
            gateway_retry_delay_ms=None if delay <= RETRY_DELAY_UNSET else delay,
            gateway_backoff=str(o.backoff.currentData()),
        )

    def _gateway_base(self) -> str:
        return self.gateway_base.text().strip()

    # -- feedback from the dialog -----------------------------------------------------------
    def show_keychain_warning(self, text: str, *, shown: bool = True) -> None:
        self.keychain_warning.set_text(text)
        self.keychain_warning.setVisible(shown)

    def has_token_changes(self) -> bool:
        return self.api_token.has_change() or self.gateway_token.has_change()

    def set_token_notes(self, *, keychain: str, session_only: bool) -> None:
        api_note = token_note(self.api_token, keychain=keychain, session_only=session_only)
        self.api_token_row.set_note(api_note)
        gateway_note = token_note(self.gateway_token, keychain=keychain, session_only=session_only)
        self.gateway_token_row.set_note(f"{gateway_note} {GATEWAY_TOKEN_NOTE}")

    def set_status(self, text: str) -> None:
        self.status.setText(text)


def _form_labels(page: QWidget) -> list[QLabel]:
    """The labels in the label column of ``page``'s forms."""
    found = []
    for form in page.findChildren(QFormLayout):
        for row in range(form.rowCount()):
            item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            label = item.widget() if item is not None else None
            if isinstance(label, QLabel):
                found.append(label)
    return found


def _check_token(field: TokenField, validator: _Validator) -> str | None:
    typed = field.typed()
    return validator(typed) if typed else None

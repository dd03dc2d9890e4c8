"""The settings dialog's pages, each a widget that builds and owns its fields."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from flarechat.settings import gateway_options as gw
from flarechat.settings import validate as v
from flarechat.settings.resolve import DEFAULT_API_BASE, DEFAULT_GATEWAY_BASE
from flarechat.settings.schema import BACKOFFS
from flarechat.ui.settings.fields import (
    FieldRow,
    TokenField,
    VerifyRow,
    format_lifetime,
    make_double_spin,
    make_spin,
)
from flarechat.ui.shared.theme import mute

__all__ = [
    "ENDPOINT_CHOICES",
    "REJECT_IF_BUSY_NOTE",
    "ROUTE_CHOICES",
    "TEMPERATURE_UNSET",
    "TTL_UNSET",
    "AccountPage",
    "AdvancedPage",
    "AppearancePage",
    "ConnectionPage",
    "GatewayOptionsRows",
    "GenerationPage",
]

ROUTE_CHOICES = (
    ("direct", "Direct to Workers AI"),
    ("gateway-rest", "Through AI Gateway (REST header)"),
    ("gateway-url", "Through AI Gateway (gateway URL)"),
)
ENDPOINT_CHOICES = (
    ("native", "Workers AI native (/ai/run)"),
    ("openai", "OpenAI-compatible (/v1/chat/completions)"),
)
DIRECT = "direct"
REJECT_IF_BUSY_NOTE = (
    "When Workers AI is at capacity, fail fast and retry (shows a banner) instead of waiting "
    "in Cloudflare's queue."
)
TOKENS_PAGE = "https://dash.cloudflare.com/profile/api-tokens"
ACCOUNT_INTRO = (
    "Flarechat talks to Workers AI with your Cloudflare account ID and an API token that has "
    f'the Workers AI Read and Edit permissions. <a href="{TOKENS_PAGE}">Create a token</a>'
)
ACCOUNT_NOTE = 'Find it in the Cloudflare dashboard → Workers AI → "Use REST API".'
GATEWAY_TOKEN_NOTE = (
    "Only for gateways with authentication turned on. This is a different token from the API token."
)
MAX_TOKENS_NOTE = (
    "Sent with every request: Workers AI's own default of 256 tokens truncates most replies."
)
SKIP_CACHE_NOTE = "Always ask the model, even when the gateway has a cached answer."
TEMPERATURE_NOTE = "Lower is more focused, higher more varied. Model default sends nothing."
TIMEOUT_NOTE = "How long to wait for the first byte of a reply; busy models can queue a while."
IDLE_TIMEOUT_NOTE = "A reply that stops sending for this long is cut off; its text is kept."
DEADLINE_NOTE = "The longest one reply may take in all, however steadily it streams."
DEADLINE_STEP = 60
MIN_FORM_FIELD_WIDTH = 380
INTRO_GAP = 6
SYSTEM_PROMPT_LINES = 4
SYSTEM_PROMPT_PADDING = 8
TIMEOUT_STEP = 5
MAX_TOKENS_STEP = 256
TEMPERATURE_STEP = 0.1
TEMPERATURE_DECIMALS = 2
TTL_STEP = 60
#: Spin-box values shown as their special text ("Model default", "Gateway default").
TEMPERATURE_UNSET = v.TEMPERATURE_MIN - TEMPERATURE_STEP
TTL_UNSET = 0
ACCOUNT_ID_MAX_CHARS = 64
GATEWAY_DEFAULT = "Gateway default"
#: Collect log choices; "default" (None in Settings) = the gateway's own logging setting.
COLLECT_LOG_DEFAULT, COLLECT_LOG_ON, COLLECT_LOG_OFF = "default", "on", "off"
COLLECT_LOG_CHOICES = (
    (COLLECT_LOG_DEFAULT, GATEWAY_DEFAULT),
    (COLLECT_LOG_ON, "On: log this app's requests"),
    (COLLECT_LOG_OFF, "Off: don't log this app's requests"),
)
BACKOFF_CHOICES = (("", GATEWAY_DEFAULT), *((kind, kind.capitalize()) for kind in BACKOFFS))
#: Spin-box values shown as "Gateway default" (nothing sent).
GATEWAY_TIMEOUT_UNSET = 0
GATEWAY_TIMEOUT_STEP = 1000
MAX_ATTEMPTS_UNSET = 0
RETRY_DELAY_STEP = 100
RETRY_DELAY_UNSET = -RETRY_DELAY_STEP
METADATA_NOTE = (
    f"Up to {gw.METADATA_MAX_ENTRIES} entries logged with each request, written "
    "key=value, key=value."
)
CACHE_KEY_NOTE = "Requests with the same key share one cached answer."
RETRY_NOTE = "Retries the gateway makes itself when Workers AI fails (before any reply)."
GATEWAY_TIMEOUT_NOTE = (
    "How long the gateway waits for Workers AI before it retries or gives up. "
    "Flarechat's own wait is the Request timeout below."
)
THEME_CHOICES = (("system", "Same as the system"), ("light", "Light"), ("dark", "Dark"))
THEME_NOTE = "Switches as soon as you press OK."
#: Text size in points; the lowest spin-box value reads "System size" (0 in Settings).
FONT_SIZE_MIN, FONT_SIZE_MAX = 8, 24
FONT_SIZE_SYSTEM = FONT_SIZE_MIN - 1
FONT_SIZE_NOTE = "The size of all text in the window; Ctrl+= and Ctrl+- zoom the chat itself."
MORE_GATEWAY_NOTE = "Caching, logging and the gateway's own retries are under Advanced."
GATEWAY_ONLY_NOTE = (
    "These apply only when Connection \N{RIGHTWARDS ARROW} Route goes through AI Gateway."
)


def _heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def _combo(choices: tuple[tuple[str, str], ...], name: str) -> QComboBox:
    combo = QComboBox()
    for value, label in choices:
        combo.addItem(label, value)
    combo.setAccessibleName(name)
    return combo


def _check_box(name: str) -> QCheckBox:
    box = QCheckBox(name)
    box.setAccessibleName(name)
    return box


def _line_edit(name: str, *, placeholder: str = "") -> QLineEdit:
    edit = QLineEdit()
    edit.setAccessibleName(name)
    edit.setPlaceholderText(placeholder)
    edit.setMinimumWidth(MIN_FORM_FIELD_WIDTH)
    return edit


def _form(page: QWidget) -> QFormLayout:
    """A form at the top of ``page`` (rows keep their height; spare space stays below)."""
    outer = QVBoxLayout(page)
    form = QFormLayout()
    outer.addLayout(form)
    outer.addStretch(1)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
    return form


class AccountPage(QWidget):
    """Account ID, API token and the Verify row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = _form(self)
        intro = mute(QLabel(ACCOUNT_INTRO))
        intro.setWordWrap(True)
        intro.setOpenExternalLinks(True)
        intro.setAccessibleName("About the account settings")
        intro.setContentsMargins(0, 0, 0, INTRO_GAP)
        form.addRow(intro)
        self.account_id = _line_edit("Account ID", placeholder="32 hexadecimal characters")
        self.account_id.setMaxLength(ACCOUNT_ID_MAX_CHARS)
        self.account_row = FieldRow(self.account_id, note=ACCOUNT_NOTE)
        form.addRow("Account ID:", self.account_row)
        self.api_token = TokenField("API token", empty_placeholder="Paste your API token")
        self.api_token_row = FieldRow(self.api_token)
        form.addRow("API token:", self.api_token_row)
        self.verify = VerifyRow()
        form.addRow("", self.verify)


class ConnectionPage(QWidget):
    """What most people need: route, endpoint, Reject if busy, the gateway's ID and token."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._form = form = _form(self)
        self.route = _combo(ROUTE_CHOICES, "Route")
        self.route_row = FieldRow(self.route)
        form.addRow("Route:", self.route_row)
        self.endpoint = _combo(ENDPOINT_CHOICES, "Endpoint")
        form.addRow("Endpoint:", FieldRow(self.endpoint))
        self.reject_if_busy = _check_box("Reject if busy")
        form.addRow("", FieldRow(self.reject_if_busy, note=REJECT_IF_BUSY_NOTE))
        form.addRow(_heading("AI Gateway"))
        self.gateway_id = _line_edit("Gateway ID", placeholder="my-gateway")
        self.gateway_row = FieldRow(self.gateway_id, note="The gateway's name in AI Gateway.")
        form.addRow("Gateway ID:", self.gateway_row)
        self.gateway_token = TokenField("Gateway token", empty_placeholder="Not set")
        self.gateway_token_row = FieldRow(self.gateway_token, note=GATEWAY_TOKEN_NOTE)
        form.addRow("Gateway token:", self.gateway_token_row)
        more = mute(QLabel(MORE_GATEWAY_NOTE))
        more.setWordWrap(True)
        form.addRow("", more)

    def uses_gateway(self) -> bool:
        return bool(self.route.currentData() != DIRECT)

    def set_gateway_enabled(self, enabled: bool) -> None:
        """Enable the gateway fields (and their labels) only on a gateway route."""
        _enable_rows(self._form, (self.gateway_row, self.gateway_token_row), enabled=enabled)


class AdvancedPage(QWidget):
    """The gateway's many options (cache, logging, retries), custom URLs, the reply timeout."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._form = form = _form(self)
        self.gateway_heading = _heading("AI Gateway options")
        form.addRow(self.gateway_heading)
        self.gateway_note = mute(QLabel(GATEWAY_ONLY_NOTE))
        self.gateway_note.setWordWrap(True)
        form.addRow(self.gateway_note)
        self.skip_cache = _check_box("Skip cache")
        self.skip_cache_row = FieldRow(self.skip_cache, note=SKIP_CACHE_NOTE)
        form.addRow("", self.skip_cache_row)
        self.cache_ttl = make_spin(low=TTL_UNSET, high=v.CACHE_TTL_MAX, step=TTL_STEP, suffix=" s")
        self.cache_ttl.setSpecialValueText(GATEWAY_DEFAULT)
        self.cache_ttl.setAccessibleName("Cache TTL")
        self.cache_ttl_row = FieldRow(self.cache_ttl, compact=True)
        form.addRow("Cache TTL:", self.cache_ttl_row)
        self.cache_ttl.valueChanged.connect(self._on_cache_ttl_changed)
        self.options = GatewayOptionsRows(form)
        form.addRow(_heading("Endpoints"))
        self.api_base = _line_edit("API base URL", placeholder=DEFAULT_API_BASE)
        self.api_base_row = FieldRow(self.api_base, note="Leave empty for Cloudflare's API.")
        form.addRow("API base URL:", self.api_base_row)
        self.gateway_base = _line_edit("Gateway base URL", placeholder=DEFAULT_GATEWAY_BASE)
        note = "Leave empty for Cloudflare's AI Gateway."
        self.gateway_base_row = FieldRow(self.gateway_base, note=note)
        form.addRow("Gateway base URL:", self.gateway_base_row)
        self.request_timeout = make_double_spin(
            low=v.REQUEST_TIMEOUT_MIN,
            high=v.REQUEST_TIMEOUT_MAX,
            step=TIMEOUT_STEP,
            decimals=0,
            suffix=" s",
        )
        self.request_timeout.setAccessibleName("Request timeout")
        row = FieldRow(self.request_timeout, note=TIMEOUT_NOTE, compact=True)
        form.addRow("Request timeout:", row)
        self.idle_timeout = self._seconds("Idle timeout", v.IDLE_TIMEOUT_MIN, v.IDLE_TIMEOUT_MAX)
        form.addRow(
            "Idle timeout:", FieldRow(self.idle_timeout, note=IDLE_TIMEOUT_NOTE, compact=True)
        )
        self.overall_timeout = self._seconds(
            "Deadline", v.OVERALL_TIMEOUT_MIN, v.OVERALL_TIMEOUT_MAX, step=DEADLINE_STEP
        )
        form.addRow("Deadline:", FieldRow(self.overall_timeout, note=DEADLINE_NOTE, compact=True))
        self._on_cache_ttl_changed(self.cache_ttl.value())

    @staticmethod
    def _seconds(name: str, low: float, high: float, *, step: int = TIMEOUT_STEP) -> QDoubleSpinBox:
        spin = make_double_spin(low=low, high=high, step=step, decimals=0, suffix=" s")
        spin.setAccessibleName(name)
        return spin

    def set_gateway_enabled(self, enabled: bool) -> None:
        """The gateway section counts only on a gateway route; say so when it does not."""
        self.gateway_heading.setEnabled(enabled)
        self.gateway_note.setVisible(not enabled)
        _enable_rows(self._form, (self.skip_cache_row, self.cache_ttl_row), enabled=enabled)
        self.options.set_enabled(enabled)
        self._on_cache_ttl_changed(self.cache_ttl.value())

    def _on_cache_ttl_changed(self, seconds: int) -> None:
        if seconds == TTL_UNSET:
            self.cache_ttl_row.set_note("The gateway's own cache setting applies.")
        else:
            self.cache_ttl_row.set_note(f"Cached answers are kept for {format_lifetime(seconds)}.")


def _enable_rows(form: QFormLayout, rows: tuple[QWidget, ...], *, enabled: bool) -> None:
    for row in rows:
        row.setEnabled(enabled)
        label = form.labelForField(row)
        if label is not None:
            label.setEnabled(enabled)


class GatewayOptionsRows:
    """Cache key, metadata, logging and the gateway's own retries (gateway routes only).

    A headed section of the Connection page's own form, like "AI Gateway" above it. A nested
    QGroupBox layout sized the rows' wrapped notes at a stale width and squeezed the fields.
    """

    TITLE = "Gateway options"

    def __init__(self, form: QFormLayout) -> None:
        self._form = form
        self.heading = _heading(self.TITLE)
        form.addRow(self.heading)
        self.cache_key = _line_edit("Cache key", placeholder=GATEWAY_DEFAULT)
        self.cache_key_row = FieldRow(self.cache_key, note=CACHE_KEY_NOTE)
        form.addRow("Cache key:", self.cache_key_row)
        self.metadata = _line_edit("Metadata", placeholder="team=docs, ticket=42")
        self.metadata_row = FieldRow(self.metadata, note=METADATA_NOTE)
        form.addRow("Metadata:", self.metadata_row)
        self.collect_log = _combo(COLLECT_LOG_CHOICES, "Collect log")
        form.addRow("Collect log:", self.collect_log)
        self.request_timeout = self._spin(
            "Gateway timeout", GATEWAY_TIMEOUT_UNSET, gw.GATEWAY_REQUEST_TIMEOUT_MAX_MS
        )
        self.request_timeout.setSingleStep(GATEWAY_TIMEOUT_STEP)
        self.request_timeout_row = FieldRow(
            self.request_timeout, note=GATEWAY_TIMEOUT_NOTE, compact=True
        )
        form.addRow("Gateway timeout:", self.request_timeout_row)
        self.max_attempts = self._spin(
            "Max attempts", MAX_ATTEMPTS_UNSET, gw.GATEWAY_MAX_ATTEMPTS_MAX, suffix=""
        )
        self.max_attempts_row = FieldRow(self.max_attempts, note=RETRY_NOTE, compact=True)
        form.addRow("Max attempts:", self.max_attempts_row)
        self.retry_delay = self._spin(
            "Retry delay", RETRY_DELAY_UNSET, gw.GATEWAY_RETRY_DELAY_MAX_MS
        )
        self.retry_delay.setSingleStep(RETRY_DELAY_STEP)
        self.retry_delay_row = FieldRow(self.retry_delay, compact=True)
        form.addRow("Retry delay:", self.retry_delay_row)
        self.backoff = _combo(BACKOFF_CHOICES, "Backoff")
        form.addRow("Backoff:", self.backoff)
        self._rows: tuple[QWidget, ...] = (
            self.cache_key_row,
            self.metadata_row,
            self.collect_log,
            self.request_timeout_row,
            self.max_attempts_row,
            self.retry_delay_row,
            self.backoff,
        )

    def set_enabled(self, enabled: bool) -> None:
        """Enable the fields and their labels (and the heading) together."""
        self.heading.setEnabled(enabled)
        _enable_rows(self._form, self._rows, enabled=enabled)

    def collect_log_value(self) -> bool | None:
        chosen = self.collect_log.currentData()
        return None if chosen == COLLECT_LOG_DEFAULT else chosen == COLLECT_LOG_ON

    def set_collect_log(self, value: bool | None) -> None:
        chosen = (
            COLLECT_LOG_DEFAULT if value is None else (COLLECT_LOG_ON if value else COLLECT_LOG_OFF)
        )
        self.collect_log.setCurrentIndex(max(self.collect_log.findData(chosen), 0))

    @staticmethod
    def _spin(name: str, unset: int, high: int, *, suffix: str = " ms") -> QSpinBox:
        spin = make_spin(low=unset, high=high, suffix=suffix)
        spin.setSpecialValueText(GATEWAY_DEFAULT)
        spin.setAccessibleName(name)
        return spin


class GenerationPage(QWidget):
    """Defaults for new requests: max tokens, temperature, system prompt."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = _form(self)
        self.max_tokens = make_spin(
            low=v.MAX_TOKENS_MIN, high=v.MAX_TOKENS_MAX, step=MAX_TOKENS_STEP
        )
        self.max_tokens.setAccessibleName("Default max tokens")
        form.addRow("Max tokens:", FieldRow(self.max_tokens, note=MAX_TOKENS_NOTE, compact=True))
        self.temperature = make_double_spin(
            low=TEMPERATURE_UNSET,
            high=v.TEMPERATURE_MAX,
            step=TEMPERATURE_STEP,
            decimals=TEMPERATURE_DECIMALS,
        )
        self.temperature.setSpecialValueText("Model default")
        self.temperature.setAccessibleName("Default temperature")
        form.addRow("Temperature:", FieldRow(self.temperature, note=TEMPERATURE_NOTE, compact=True))
        self.system_prompt = QPlainTextEdit()
        self.system_prompt.setAccessibleName("Default system prompt")
        self.system_prompt.setPlaceholderText("Optional instructions for every new conversation")
        lines = self.system_prompt.fontMetrics().lineSpacing() * SYSTEM_PROMPT_LINES
        frame = 2 * self.system_prompt.frameWidth() + SYSTEM_PROMPT_PADDING
        self.system_prompt.setFixedHeight(lines + frame)
        form.addRow("System prompt:", self.system_prompt)


class AppearancePage(QWidget):
    """Theme (System, Light, Dark) and text size, applied when the dialog is accepted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = _form(self)
        self.theme = _combo(THEME_CHOICES, "Theme")
        form.addRow("Theme:", FieldRow(self.theme, note=THEME_NOTE))
        self.font_size = make_spin(low=FONT_SIZE_SYSTEM, high=FONT_SIZE_MAX, suffix=" pt")
        self.font_size.setSpecialValueText("System size")
        self.font_size.setAccessibleName("Text size")
        form.addRow("Text size:", FieldRow(self.font_size, note=FONT_SIZE_NOTE, compact=True))

    def theme_value(self) -> str:
        return str(self.theme.currentData())

    def set_theme(self, value: str) -> None:
        self.theme.setCurrentIndex(max(self.theme.findData(value), 0))

    def font_size_value(self) -> int:
        """Points, or 0 for the system's size (the spin box's lowest value reads as that)."""
        size = self.font_size.value()
        return 0 if size <= FONT_SIZE_SYSTEM else size

    def set_font_size(self, points: int) -> None:
        self.font_size.setValue(FONT_SIZE_SYSTEM if points < FONT_SIZE_MIN else points)

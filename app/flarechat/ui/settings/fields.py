"""Settings dialog building blocks: a field row with note and inline error, the token field."""

from __future__ import annotations

import enum

from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.icons import icon_pixmap
from flarechat.ui.shared.theme import current_palette, fill_rounded, mute

__all__ = [
    "ErrorLabel",
    "FieldRow",
    "TokenField",
    "TokenState",
    "VerifyRow",
    "WarningStrip",
    "format_lifetime",
    "make_double_spin",
    "make_read_only",
    "make_spin",
    "token_note",
]

ROW_SPACING = 3
WARNING_ICON_PX = 18
STRIP_PADDING = 10
BUSY_WIDTH_CHARS = 8
SPIN_WIDTH_CHARS = 22
STORED_PLACEHOLDER = "•••••••• (stored)"
SESSION_PLACEHOLDER = "•••••••• (this session only)"
_MINUTE = 60
_HOUR = 3_600
_DAY = 86_400


def format_lifetime(seconds: int) -> str:
    """``3600`` -> ``"1 h"``, ``5400`` -> ``"1 h 30 min"``, ``2592000`` -> ``"30 days"``."""
    days, rest = divmod(seconds, _DAY)
    hours, rest = divmod(rest, _HOUR)
    minutes, secs = divmod(rest, _MINUTE)
    parts = [
        f"{days} day" if days == 1 else f"{days} days" if days else "",
        f"{hours} h" if hours else "",
        f"{minutes} min" if minutes else "",
        f"{secs} s" if secs else "",
    ]
    return " ".join(p for p in parts if p) or "0 s"


class ErrorLabel(QLabel):
    """Wrapped text in the theme's danger colour (kept in step when the theme changes)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorText")
        self.setWordWrap(True)
        self._apply_color()

    def _apply_color(self) -> None:
        _set_role(self, QPalette.ColorRole.WindowText, QColor(current_palette().danger))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the app's palette (theme) changed
            self._apply_color()

    def showEvent(self, event: QShowEvent) -> None:
        self._apply_color()  # a hidden label may have missed a theme change
        super().showEvent(event)


class FieldRow(QWidget):
    """An input with a muted note and a red inline error under it (the error replaces the note)."""

    def __init__(
        self,
        field: QWidget,
        *,
        note: str = "",
        compact: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        """``compact``: keep the field at its natural width (spin boxes), left-aligned."""
        super().__init__(parent)
        self.field = field
        self.note = mute(QLabel(note, self))
        self.note.setWordWrap(True)
        self.note.setOpenExternalLinks(True)
        self.error = ErrorLabel(self)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(ROW_SPACING)
        box.addWidget(field, 0, Qt.AlignmentFlag.AlignLeft if compact else Qt.AlignmentFlag(0))
        box.addWidget(self.error)
        box.addWidget(self.note)
        self.error.hide()
        self.note.setVisible(bool(note))

    def sizeHint(self) -> QSize:
        """The height the wrapped notes need at the width actually given.

        QFormLayout sizes rows by ``sizeHint()``, which otherwise wraps the notes at a narrow
        guessed width and reserves empty lines under long ones.
        """
        hint = super().sizeHint()
        if self.width() > 0:
            return QSize(hint.width(), self.heightForWidth(self.width()))
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.updateGeometry()

    def set_note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text) and self.error.isHidden())

    def set_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))
        self.note.setVisible(not message and bool(self.note.text()))
        field_name = self.field.accessibleName()
        self.error.setAccessibleName(f"{field_name} error" if field_name else "Error")

    def error_text(self) -> str | None:
        return self.error.text() if self.error.isVisibleTo(self) else None


def make_spin(*, low: int, high: int, step: int = 1, suffix: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setSuffix(suffix)
    spin.setGroupSeparatorShown(True)
    spin.setAccelerated(True)
    spin.setMinimumWidth(spin.fontMetrics().averageCharWidth() * SPIN_WIDTH_CHARS)
    return spin


def make_double_spin(
    *, low: float, high: float, step: float, decimals: int, suffix: str = ""
) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setDecimals(decimals)
    spin.setSuffix(suffix)
    spin.setMinimumWidth(spin.fontMetrics().averageCharWidth() * SPIN_WIDTH_CHARS)
    return spin


class TokenState(enum.Enum):
    """Where the currently saved token is, as far as the dialog knows."""

    LOADING = "loading"
    NONE = "none"
    STORED = "stored"  # in the system keychain
    SESSION = "session"  # in the session-only memory store
    OVERRIDDEN = "overridden"  # from an environment variable: read-only here


class TokenField(QWidget):
    """A masked token input: Show toggle, Remove for a stored token, and nothing ever pre-filled.

    The saved token is never loaded into the field: empty means "keep what is stored".

    Signals:
        edited(): the typed text or the remove choice changed.
    """

    edited = Signal()

    def __init__(self, label: str, *, empty_placeholder: str, parent: QWidget | None = None):
        super().__init__(parent)
        self._label = label
        self._empty_placeholder = empty_placeholder
        self._state = TokenState.LOADING
        self._remove = False
        self.edit = QLineEdit(self)
        self.edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.edit.setAccessibleName(label)
        self.edit.setClearButtonEnabled(True)
        noun = label if label[:2].isupper() else label[0].lower() + label[1:]
        for button in self.edit.findChildren(QToolButton):  # the line edit's own clear button
            button.setAccessibleName(f"Clear the typed {noun}")
        self.show_button = self._tool_button("Show", f"Show or hide the {noun}")
        self.show_button.setCheckable(True)
        self.remove_button = self._tool_button("Remove", f"Remove the saved {noun}")
        self.remove_button.setCheckable(True)
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.edit, 1)
        box.addWidget(self.show_button)
        box.addWidget(self.remove_button)
        self.edit.textChanged.connect(self.edited)
        self.show_button.toggled.connect(self._on_show_button_toggled)
        self.remove_button.toggled.connect(self._on_remove_button_toggled)
        self.set_state(TokenState.LOADING)

    def _tool_button(self, text: str, name: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setAccessibleName(name)
        button.setToolTip(name[0].upper() + name[1:])
        return button

    # -- state ----------------------------------------------------------------------------
    @property
    def state(self) -> TokenState:
        return self._state

    def set_state(self, state: TokenState, *, env_name: str = "") -> None:
        self._state = state
        placeholders = {
            TokenState.LOADING: "Checking the keychain…",
            TokenState.NONE: self._empty_placeholder,
            TokenState.STORED: STORED_PLACEHOLDER,
            TokenState.SESSION: SESSION_PLACEHOLDER,
            TokenState.OVERRIDDEN: f"Set by {env_name}",
        }
        overridden = state is TokenState.OVERRIDDEN
        self.edit.setReadOnly(overridden)
        if overridden:
            self.edit.clear()
        self.show_button.setEnabled(not overridden)
        has_saved = state in (TokenState.STORED, TokenState.SESSION)
        self.remove_button.setEnabled(has_saved)
        if not has_saved:
            self.remove_button.setChecked(False)
        self.edit.setPlaceholderText(
            "Will be removed when you press OK" if self._remove else placeholders[state]
        )

    def typed(self) -> str:
        return self.edit.text().strip()

    def has_change(self) -> bool:
        return bool(self.typed()) or self._remove

    def new_value(self) -> str | None:
        """The token to save, or ``None`` to remove the saved one (only when has_change())."""
        return self.typed() or None

    def available(self) -> bool:
        """Whether a token exists for Verify: typed, saved (and not being removed) or from env."""
        saved = self._state in (TokenState.STORED, TokenState.SESSION, TokenState.OVERRIDDEN)
        return bool(self.typed()) or (saved and not self._remove)

    def mark_saved(self, state: TokenState) -> None:
        """After saving: clear the input and reflect where the token now lives."""
        self.edit.clear()
        self.remove_button.setChecked(False)
        self.set_state(state)

    # -- slots ----------------------------------------------------------------------------
    def _on_show_button_toggled(self, shown: bool) -> None:
        mode = QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        self.edit.setEchoMode(mode)
        self.show_button.setText("Hide" if shown else "Show")

    def _on_remove_button_toggled(self, remove: bool) -> None:
        self._remove = remove
        self.remove_button.setText("Keep" if remove else "Remove")
        self.set_state(self._state)
        self.edited.emit()


class WarningStrip(QFrame):
    """A warning line painted like the app's banners (icon + wrapped text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("warningStrip")
        icon = QLabel(self)
        icon.setPixmap(icon_pixmap("warning", WARNING_ICON_PX, dpr=self.devicePixelRatioF()))
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(*(STRIP_PADDING,) * 4)
        row.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.text, 1)
        self.hide()

    def set_text(self, text: str) -> None:
        self.text.setText(text)
        self.text.setAccessibleName(text)

    def paintEvent(self, event: QPaintEvent) -> None:
        fill, border = current_palette().banner_colors("warning")
        painter = QPainter(self)
        fill_rounded(painter, QRectF(self.rect()), fill=fill, border=border)


class VerifyRow(QWidget):
    """[Verify] with a busy bar and the outcome next to it (a result line or a red error)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.button = QPushButton("Verify", self)
        self.button.setAccessibleName("Verify API token")
        self.button.setToolTip("Ask Cloudflare whether this token is valid and active")
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)  # indeterminate: a spinner
        self.busy.setTextVisible(False)
        self.busy.setFixedSize(
            self.fontMetrics().averageCharWidth() * BUSY_WIDTH_CHARS,
            self.fontMetrics().height() // 2,
        )
        self.busy.setAccessibleName("Checking")
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setAccessibleName("Verify result")
        self.error = ErrorLabel(self)
        self.error.setAccessibleName("Verify error")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.busy)
        layout.addWidget(self.result, 1)
        layout.addWidget(self.error, 1)
        self.busy.hide()
        self.error.hide()

    def show_busy(self) -> None:
        self.busy.show()
        self.error.hide()
        self.result.show()
        self.result.setText("Checking…")

    def show_result(self, text: str, *, ok: bool) -> None:
        self.busy.hide()
        self.result.setVisible(ok)
        self.error.setVisible(not ok)
        if ok:
            self.result.setText(f"✓ {text}")
        else:
            self.error.setText(text)


def token_note(field: TokenField, *, keychain: str, session_only: bool) -> str:
    """Where the token lives, in one sentence for under the field."""
    state = field.state
    if state is TokenState.OVERRIDDEN:
        return field.edit.placeholderText() + "."
    if state is TokenState.SESSION or (session_only and state is not TokenState.STORED):
        return "Kept for this session only; never written to disk."
    if state is TokenState.STORED:
        return f"Stored in {keychain}. Leave empty to keep it."
    return f"Saved in {keychain}, never in a settings file."


def make_read_only(edit: QLineEdit) -> None:
    """Read-only, and looking it: the window colour instead of the input background."""
    edit.setReadOnly(True)
    _ReadOnlyLook(edit)


class _ReadOnlyLook(QObject):
    """Paints a line edit's background in the window colour, again after each theme change."""

    def __init__(self, edit: QLineEdit) -> None:
        super().__init__(edit)
        self._edit = edit
        self._apply()
        edit.installEventFilter(self)

    def _apply(self) -> None:
        window = QApplication.palette().color(QPalette.ColorRole.Window)
        _set_role(self._edit, QPalette.ColorRole.Base, window)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # PaletteChange: the theme changed; Show: hidden widgets (other tabs) only get the new
        # palette when they appear.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.Show):
            self._apply()
        return False


def _set_role(widget: QWidget, role: QPalette.ColorRole, color: QColor) -> None:
    """Override one palette role; a no-op when already set (setPalette re-sends PaletteChange)."""
    palette = widget.palette()
    if palette.color(role) != color:
        palette.setColor(role, color)
        widget.setPalette(palette)

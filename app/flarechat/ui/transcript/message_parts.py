"""Small parts of a message widget: action buttons, labels, Thinking, Continue, < n/m >."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from flarechat.ui.shared.capped import ShowAllButton, excerpt
from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import (
    SMALL_FONT_FACTOR,
    current_palette,
    fill_rounded,
    mute,
    named,
    scaled_font_of,
)
from flarechat.ui.transcript.wrapped_label import WrappedLabel

__all__ = [
    "CONTINUE_HINT",
    "ContinueRow",
    "ReasoningSection",
    "SiblingSwitcher",
    "action_button",
    "mark_bold",
    "refresh_fonts",
    "wrapped_label",
]

CONTINUE_HINT = "The reply hit the max-tokens limit."
ACTION_ICON_PX = 16
REASONING_RULE_PX = 2
#: Dynamic property marking labels whose font derives from the message font.
_PRINT = "flarechatPrint"
_SMALL = "small"
_BOLD = "bold"


def wrapped_label(name: str, *, muted: bool = False, small: bool = False) -> WrappedLabel:
    """A selectable, word-wrapped label named ``name`` (muted colour / small print)."""
    label = named(WrappedLabel(), name)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if muted:
        mute(label)
    if small:
        label.setProperty(_PRINT, _SMALL)
    return label


def mark_bold(label: QLabel) -> QLabel:
    """Draw ``label`` in the bold variant of its message's font (see refresh_fonts)."""
    label.setProperty(_PRINT, _BOLD)
    return label


def refresh_fonts(root: QWidget, base: QFont) -> None:
    """Derive the small and bold labels under ``root`` from ``base`` (the message font), so
    they follow zoom and font changes instead of keeping the font they were made with."""
    labels = root.findChildren(QLabel)
    if isinstance(root, QLabel):
        labels.append(root)
    for label in labels:
        kind = label.property(_PRINT)
        if kind == _SMALL:
            label.setFont(scaled_font_of(base, SMALL_FONT_FACTOR))
        elif kind == _BOLD:
            bold = QFont(base)
            bold.setBold(True)
            label.setFont(bold)


def action_button(icon_name: str, *, name: str, tip: str) -> QToolButton:
    """A small flat icon button with an accessible name and a tooltip."""
    button = named(QToolButton(), "actionButton")
    button.setIcon(icon(icon_name, role="muted"))
    button.setIconSize(QSize(ACTION_ICON_PX, ACTION_ICON_PX))
    button.setAutoRaise(True)
    button.setAccessibleName(name)
    button.setToolTip(tip)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    return button


class ContinueRow(QFrame):
    """The max-tokens hint with its Continue button, on a soft panel."""

    def __init__(self, on_continue: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName("continueRow")
        self.hint = hint = wrapped_label("mutedLabel", muted=True)
        hint.setText(CONTINUE_HINT)
        self.button = named(QPushButton(icon("continue"), "Continue"), "continueButton")
        self.button.setAccessibleName("Continue the reply")
        self.button.setToolTip("Let the model go on with this reply from where it stopped")
        self.button.clicked.connect(on_continue)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(hint, 1)
        layout.addWidget(self.button)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        fill_rounded(painter, QRectF(self.rect()), fill=current_palette().alt_base)
        painter.end()
        super().paintEvent(event)


class SiblingSwitcher(QWidget):
    """< n/m >: steps between versions of a message (edits, regenerations)."""

    def __init__(self, on_step: Callable[[int], None]) -> None:
        super().__init__()
        self._prev = action_button("chevron-left", name="Previous version", tip="Previous version")
        self._prev.clicked.connect(lambda: on_step(-1))
        self._label = mute(named(QLabel(), "siblingLabel"))
        self._label.setProperty(_PRINT, _SMALL)
        self._next = action_button("chevron-right", name="Next version", tip="Next version")
        self._next.clicked.connect(lambda: on_step(1))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        for widget in (self._prev, self._label, self._next):
            row.addWidget(widget)

    def set_position(self, index: int, count: int) -> None:
        """Show version ``index + 1`` of ``count`` (``index`` is 0-based)."""
        self._label.setText(f"{index + 1}/{count}")
        self._label.setAccessibleName(f"Version {index + 1} of {count}")
        self._prev.setEnabled(index > 0)
        self._next.setEnabled(index < count - 1)


class _ReasoningText(WrappedLabel):
    """The reasoning text with a thin rule on its left."""

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(0, 0, REASONING_RULE_PX, self.height(), current_palette().border)
        painter.end()
        super().paintEvent(event)


class ReasoningSection(QWidget):
    """A collapsible "Thinking" section; follows the reply until the user toggles it.

    It renders at most ``RENDERED_CHARS`` of the reasoning (a ``<think>`` never closed can
    hold megabytes, streamed a flush at a time); "Show all" opens the rest in a viewer.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.user_toggled = False
        self._live = False
        self._full = self._shown = ""
        self._toggle = mute(named(QToolButton(), "reasoningToggle"))
        self._toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._toggle.setAutoRaise(True)
        self._toggle.setIconSize(QSize(ACTION_ICON_PX, ACTION_ICON_PX))
        self._toggle.setAccessibleName("Show or hide the model's reasoning")
        self._toggle.clicked.connect(self._on_toggle_clicked)
        self._text = mute(named(_ReasoningText(), "reasoningText"))
        self._text.setTextFormat(Qt.TextFormat.PlainText)
        self._text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._text.setContentsMargins(REASONING_RULE_PX + 10, 2, 0, 2)
        self.show_all = ShowAllButton("The model's reasoning", parent=self)
        self._body = QWidget(self)
        body = QVBoxLayout(self._body)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(2)
        body.addWidget(self._text)
        body.addWidget(self.show_all, 0, Qt.AlignmentFlag.AlignLeft)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        column.addWidget(self._toggle, 0, Qt.AlignmentFlag.AlignLeft)
        column.addWidget(self._body)
        self.set_expanded(False)

    @property
    def expanded(self) -> bool:
        return not self._body.isHidden()

    @property
    def text(self) -> str:
        """All of the reasoning (what is rendered may be only its start)."""
        return self._full

    @property
    def rendered_text(self) -> str:
        return self._text.text()

    def set_text(self, text: str, *, live: bool) -> None:
        self._live = live
        self._full = text
        shown = excerpt(text)
        if shown != self._shown:  # past the cap, a streamed update lays nothing out again
            self._shown = shown
            self._text.setText(shown)
        self.show_all.set_text(text, shown=len(shown))
        self._update_toggle()

    def set_expanded(self, expanded: bool) -> None:
        self._body.setVisible(expanded)
        self._update_toggle()

    def _on_toggle_clicked(self) -> None:
        self.user_toggled = True
        self.set_expanded(not self.expanded)

    def _update_toggle(self) -> None:
        self._toggle.setText("Thinking…" if self._live else "Thinking")
        chevron = "chevron-down" if self.expanded else "chevron-right"
        self._toggle.setIcon(icon(chevron, role="muted"))
        self._toggle.setToolTip("Hide the reasoning" if self.expanded else "Show the reasoning")

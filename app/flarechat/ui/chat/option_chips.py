"""The active options near the composer: one chip per option that is on in the conversation
(a system prompt, JSON mode, tools, LoRA, a reasoning effort), each turned off by one click.
Hidden when none is on; what a chip says comes from ``core.active_options``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import current_palette

if TYPE_CHECKING:
    from flarechat.core.active_options import ActiveOption

__all__ = ["OptionChips"]

CLOSE_ICON_PX = 10
CHIP_RADIUS_PX = 9
TURN_OFF_TIP = "Click to turn it off for this conversation."


class OptionChips(QWidget):
    """A row of chips, one per active option.

    Signals:
        turn_off_requested(str): a chip was clicked: its option's key (OPTION_*).
    """

    turn_off_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("optionChips")
        self.setAccessibleName("Active options")
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)
        self._row.addStretch(1)
        self._buttons: list[QToolButton] = []
        self._restyle()
        self.hide()

    def buttons(self) -> list[QToolButton]:
        return list(self._buttons)

    def show_options(self, options: Sequence[ActiveOption]) -> None:
        """Show these chips (none: the row takes no room)."""
        for button in self._buttons:
            self._row.removeWidget(button)
            button.deleteLater()
        self._buttons = [self._chip(option) for option in options]
        for index, button in enumerate(self._buttons):
            self._row.insertWidget(index, button)
        self.setVisible(bool(self._buttons))

    def _chip(self, option: ActiveOption) -> QToolButton:
        button = QToolButton(self)
        button.setObjectName("optionChip")
        button.setText(option.label)
        button.setIcon(icon("close", role="muted"))
        button.setIconSize(QSize(CLOSE_ICON_PX, CLOSE_ICON_PX))
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setLayoutDirection(Qt.LayoutDirection.RightToLeft)  # the ✕ after the label
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        name = option.label.split(":", 1)[0]
        button.setAccessibleName(f"Turn off {name}")
        button.setToolTip(f"{option.detail}\n{TURN_OFF_TIP}" if option.detail else TURN_OFF_TIP)
        key = option.key
        button.clicked.connect(lambda *_: self.turn_off_requested.emit(key))
        return button

    def _restyle(self) -> None:
        palette = current_palette()
        self.setStyleSheet(
            f"QToolButton#optionChip {{ background: {palette.alt_base}; color: {palette.text}; "
            f"border: 1px solid {palette.border}; border-radius: {CHIP_RADIUS_PX}px; "
            "padding: 1px 8px; } "
            f"QToolButton#optionChip:hover {{ border-color: {palette.accent}; }}"
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()  # the theme changed
        super().changeEvent(event)

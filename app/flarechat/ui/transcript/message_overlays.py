"""Floating controls over the message column: the "Jump to latest" pill."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QToolButton, QWidget

from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import current_palette, fill_rounded, named

__all__ = ["PillButton", "jump_button"]

PILL_PADDING_PX = 10
PILL_MARGIN_PX = 16
JUMP_ICON_PX = 16


class PillButton(QToolButton):
    """A floating rounded button with a soft border (the "Jump to latest" button)."""

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        fill = palette.alt_base if self.underMouse() else palette.base
        painter = QPainter(self)
        rect = QRectF(self.rect())
        radius = rect.height() / 2
        fill_rounded(painter, rect, fill=fill, border=palette.border, radius=radius)
        size = self.iconSize()
        margin = (self.height() - size.height()) // 2
        pixmap = self.icon().pixmap(size, self.devicePixelRatioF())
        painter.drawPixmap(margin + PILL_PADDING_PX // 2, margin, pixmap)
        text_rect = rect.adjusted(margin + size.width() + PILL_PADDING_PX, 0, -PILL_PADDING_PX, 0)
        painter.setPen(QColor(palette.text))
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter, self.text())
        painter.end()

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        height = max(metrics.height(), self.iconSize().height()) + 2 * PILL_PADDING_PX // 2 + 8
        width = self.iconSize().width() + metrics.horizontalAdvance(self.text())
        return QSize(width + 3 * PILL_PADDING_PX + (height - self.iconSize().height()) // 2, height)

    def place_in_corner(self, viewport: QWidget) -> None:
        """Float at the bottom-right of ``viewport`` (in this button's parent's coordinates)."""
        self.adjustSize()
        parent = self.parentWidget()
        bottom_right = viewport.rect().bottomRight()
        corner = viewport.mapTo(parent, bottom_right) if parent is not None else bottom_right
        self.move(
            corner.x() - self.width() - PILL_MARGIN_PX,
            corner.y() - self.height() - PILL_MARGIN_PX,
        )
        self.raise_()


def jump_button(parent: QWidget, *, shortcut: str) -> PillButton:
    """The hidden "Jump to latest" pill (the owner connects ``clicked`` and shows it)."""
    button = named(PillButton(parent), "jumpButton")
    button.setText("Jump to latest")
    button.setIcon(icon("jump-down"))
    button.setIconSize(QSize(JUMP_ICON_PX, JUMP_ICON_PX))
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    button.setAccessibleName("Jump to latest message")
    button.setToolTip(f"Jump to the latest message ({shortcut})")
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    button.hide()
    return button

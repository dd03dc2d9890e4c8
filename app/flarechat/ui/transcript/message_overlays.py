"""Floating marks over the message column: the "Jump to latest" pill, and the brief tinted
frame that shows where a search hit or a find match landed."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QToolButton, QWidget

from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import RADIUS_PX, current_palette, fill_rounded, named

__all__ = ["FLASH_MS", "FLASH_NAME", "FlashFrame", "PillButton", "jump_button"]

PILL_PADDING_PX = 10
PILL_MARGIN_PX = 16
JUMP_ICON_PX = 16
#: How long a found message stays marked.
FLASH_MS = 1500
#: The mark: an accent border this wide over an accent tint this opaque (0-255).
FLASH_BORDER_PX = 2
FLASH_TINT_ALPHA = 28
FLASH_NAME = "flashFrame"


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


class FlashFrame(QWidget):
    """A tinted, accent-bordered frame laid over one widget for FLASH_MS, then gone.

    A child of the widget it marks, so it scrolls and is deleted with it; it never takes
    clicks or focus, and follows the widget's size while shown.
    """

    def __init__(self, target: QWidget, *, duration_ms: int = FLASH_MS) -> None:
        super().__init__(target)
        self.setObjectName(FLASH_NAME)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._timer = QTimer(self)
        self._timer.setObjectName("flashTimer")
        self._timer.setSingleShot(True)
        self._timer.setInterval(duration_ms)
        self._timer.timeout.connect(self.hide)
        target.installEventFilter(self)
        self.setGeometry(target.rect())

    def flash(self) -> None:
        """Show the mark (again) for the full duration."""
        parent = self.parentWidget()
        if parent is not None:
            self.setGeometry(parent.rect())
        self.raise_()
        self.show()
        self._timer.start()

    def is_flashing(self) -> bool:
        return self._timer.isActive()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        parent = self.parentWidget()
        if parent is not None and watched is parent and event.type() == QEvent.Type.Resize:
            self.setGeometry(parent.rect())
        return super().eventFilter(watched, event)

    def paintEvent(self, event: QPaintEvent) -> None:
        palette = current_palette()
        tint = QColor(palette.accent)
        tint.setAlpha(FLASH_TINT_ALPHA)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor(palette.accent), FLASH_BORDER_PX))
        painter.setBrush(tint)
        inset = FLASH_BORDER_PX / 2
        rect = QRectF(self.rect()).adjusted(inset, inset, -inset, -inset)
        painter.drawRoundedRect(rect, RADIUS_PX, RADIUS_PX)
        painter.end()

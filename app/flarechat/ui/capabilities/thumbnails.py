"""Image thumbnails: the composer's removable ones and a message's clickable ones (the dialog
that shows one larger is ui/capabilities/image_viewer.py, imported when first opened)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QToolButton,
    QWidget,
)

from flarechat.core.conversation import Attachment
from flarechat.ui.capabilities.images import size_text
from flarechat.ui.shared.icons import icon
from flarechat.ui.shared.theme import named

if TYPE_CHECKING:  # a dialog's classes and enums cost start-up time; made when first opened
    from flarechat.ui.capabilities.image_viewer import ImageViewer

__all__ = [
    "COMPOSER_THUMB_PX",
    "MESSAGE_THUMB_PX",
    "MessageImages",
    "RemovableThumbnails",
    "describe",
    "pixmap_of",
]

COMPOSER_THUMB_PX = 56
MESSAGE_THUMB_PX = 120
REMOVE_ICON_PX = 12
_KIND_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP", "image/gif": "GIF"}


def pixmap_of(attachment: Attachment) -> QPixmap:
    """The image decoded (a null pixmap if its bytes are not an image)."""
    return QPixmap.fromImage(QImage.fromData(attachment.data))


def describe(attachment: Attachment) -> str:
    """What the image is: "cat.png · 1024 by 768 · JPEG · 310 KB"."""
    kind = _KIND_NAMES.get(attachment.mime_type, attachment.mime_type)
    size = f"{attachment.width}\N{MULTIPLICATION SIGN}{attachment.height}"
    parts = [attachment.name, size, kind, size_text(len(attachment.data))]
    return " \N{MIDDLE DOT} ".join(p for p in parts if p)


def _thumb_button(attachment: Attachment, *, side: int, tip: str) -> QToolButton:
    button = named(QToolButton(), "imageThumb")
    pixmap = pixmap_of(attachment)
    button.setIcon(pixmap)
    size = pixmap.size()
    if max(size.width(), size.height()) > side:  # small images are not blown up
        size = size.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio)
    button.setIconSize(size)
    button.setAutoRaise(True)
    button.setToolTip(f"{describe(attachment)}\n{tip}")
    button.setAccessibleName(f"Image {attachment.name or ''}".strip())
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    return button


class MessageImages(QWidget):
    """A message's images as thumbnails; a click opens the image larger (``open_viewer``).

    Signals:
        image_opened(int): the index of the image just shown larger.
    """

    image_opened = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageImages")
        self._attachments: tuple[Attachment, ...] = ()
        self.viewer: ImageViewer | None = None
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)

    @property
    def buttons(self) -> list[QToolButton]:
        return self.findChildren(QToolButton, "imageThumb")

    def set_images(self, attachments: Sequence[Attachment]) -> None:
        if tuple(attachments) == self._attachments:
            return
        self._attachments = tuple(attachments)
        _clear(self._row)
        for index, attachment in enumerate(self._attachments):
            button = _thumb_button(attachment, side=MESSAGE_THUMB_PX, tip="Click to view larger")
            button.clicked.connect(partial(self.open_viewer, index))
            self._row.addWidget(button)
        self._row.addStretch(1)

    def open_viewer(self, index: int) -> ImageViewer:
        """Show image ``index`` larger, in a dialog (opened with ``open()``, never ``exec``)."""
        from flarechat.ui.capabilities.image_viewer import ImageViewer

        if self.viewer is not None:
            self.viewer.close()
        self.viewer = ImageViewer(self._attachments[index], self.window())
        self.viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.viewer.destroyed.connect(self._forget_viewer)
        self.viewer.open()
        self.image_opened.emit(index)
        return self.viewer

    def _forget_viewer(self) -> None:
        self.viewer = None


class RemovableThumbnails(QWidget):
    """The composer's attached images, each with a close button (``on_remove(index)``)."""

    def __init__(self, on_remove: Callable[[int], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerImages")
        self._on_remove = on_remove
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)

    @property
    def remove_buttons(self) -> list[QToolButton]:
        return self.findChildren(QToolButton, "removeImage")

    def set_images(self, attachments: Sequence[Attachment]) -> None:
        _clear(self._row)
        for index, attachment in enumerate(attachments):
            self._row.addWidget(self._tile(index, attachment))
        self._row.addStretch(1)

    def _tile(self, index: int, attachment: Attachment) -> QWidget:
        tile = QWidget(self)
        thumb = _thumb_button(attachment, side=COMPOSER_THUMB_PX, tip="Attached to the message")
        remove = named(QToolButton(tile), "removeImage")
        remove.setIcon(icon("close", role="muted"))
        remove.setIconSize(QSize(REMOVE_ICON_PX, REMOVE_ICON_PX))
        remove.setAutoRaise(True)
        label = attachment.name or f"image {index + 1}"
        remove.setAccessibleName(f"Remove {label}")
        remove.setToolTip(f"Remove {label}")
        remove.clicked.connect(partial(self._on_remove, index))
        row = QHBoxLayout(tile)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(thumb)
        row.addWidget(remove, 0, Qt.AlignmentFlag.AlignTop)
        return tile


def _clear(layout: QHBoxLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.hide()
            widget.deleteLater()

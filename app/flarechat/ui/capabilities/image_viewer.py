"""The dialog that shows one image larger: opened by a message's thumbnail (thumbnails.py),
imported then, so its dialog classes and enums are not made before the first paint."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QScrollArea, QVBoxLayout, QWidget

from flarechat.core.conversation import Attachment
from flarechat.ui.capabilities.thumbnails import describe, pixmap_of
from flarechat.ui.shared.theme import mute, named

__all__ = ["VIEWER_SCREEN_SHARE", "ImageViewer"]

#: The viewer opens at most this share of the screen; larger images scroll.
VIEWER_SCREEN_SHARE = 0.85


class ImageViewer(QDialog):
    """One image at full size (or as large as fits the screen), with what it is."""

    def __init__(self, attachment: Attachment, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(attachment.name or "Image")
        self.setAccessibleName("Image viewer")
        self.image = named(QLabel(), "imageViewerPicture")
        self.image.setPixmap(pixmap_of(attachment))
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        scroller = QScrollArea(self)
        scroller.setWidget(self.image)
        scroller.setWidgetResizable(True)
        self.caption = mute(named(QLabel(describe(attachment)), "imageViewerCaption"))
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(scroller, 1)
        column.addWidget(self.caption)
        column.addWidget(buttons)
        self.resize(self._fitting_size(attachment))

    def _fitting_size(self, attachment: Attachment) -> QSize:
        screen = self.screen() or QGuiApplication.primaryScreen()
        room = screen.availableSize() * VIEWER_SCREEN_SHARE if screen else QSize(1024, 768)
        chrome = QSize(40, 90)  # margins, caption and buttons around the picture
        wanted = QSize(attachment.width, attachment.height) + chrome
        return wanted.boundedTo(room)

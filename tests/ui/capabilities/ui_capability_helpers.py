"""Small real images and view data for the capability widget tests."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage

from flarechat.core.conversation import Attachment


def png(width: int = 96, height: int = 64, colour: str = "#e07b39") -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes
    return bytes(data.data())


def attachment(name: str = "sunset.png", width: int = 96, height: int = 64) -> Attachment:
    return Attachment("image/png", png(width, height), width, height, name)

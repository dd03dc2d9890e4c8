"""Images made ready to send: read from a file, a paste or a drop, checked, and scaled down
with Qt so that what goes to a vision model is small enough to arrive and large enough to read.

Limits, and why:

- ``MAX_SIDE_PX`` 2048: Workers AI's vision models resize every image to their own input size
  internally (Llama 3.2 Vision tiles at 560 px, up to 4 tiles; Llama 4 Scout and Gemma 3 read
  896 px crops), so pixels past 2048 on the longest side add bytes but no detail.
- ``MAX_ENCODED_BYTES`` 4 MB: each image travels base64-encoded inside the JSON request (a
  third larger again), and Workers AI answers 3006 "Request is too large" for bodies past its
  limit; five images at 4 MB stay well under it and under AI Gateway's 25 MB cache limit.
- A file larger than ``core.capabilities.MAX_IMAGE_BYTES`` (20 MB) is refused before it is
  decoded: that is a camera RAW or a poster, and decoding it would stall the window.

PNG and JPEG files that are within both limits are sent byte for byte (no loss); anything
else (WEBP, GIF, a pasted bitmap, a scaled image) is encoded as PNG when that fits (lossless:
screenshots of text stay sharp), else as JPEG, the two formats every vision model and route
takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, QSize, Qt
from PySide6.QtGui import QImage, QImageReader, QPainter

from flarechat.core.capabilities import IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_IMAGES, image_kind
from flarechat.core.conversation import Attachment
from flarechat.paths import FileTooLarge, NotRegularFile, read_regular_file

__all__ = [
    "MAX_ENCODED_BYTES",
    "MAX_SIDE_PX",
    "ImageProblem",
    "from_image",
    "from_mime",
    "has_images",
    "load_file",
    "prepare",
    "room_for",
    "size_text",
]

MAX_SIDE_PX = 2048
MAX_ENCODED_BYTES = 4 * 1024 * 1024
#: JPEG qualities tried in turn until the image fits MAX_ENCODED_BYTES (then it is halved).
JPEG_QUALITIES = (90, 80, 70)
#: Sent as they are when within the limits; every other type is re-encoded.
_KEPT_TYPES = frozenset({"image/png", "image/jpeg"})
_PNG, _JPEG = "image/png", "image/jpeg"
_MEGABYTE = 1024 * 1024
_KILOBYTE = 1024
#: Halving stops here: a smaller image would not be worth sending.
_MIN_SIDE_PX = 64


class ImageProblem(ValueError):
    """An image that cannot be attached; the message says why in plain words."""


def size_text(size: int) -> str:
    """Bytes for people: 820 KB, 3.4 MB."""
    if size >= _MEGABYTE:
        return f"{size / _MEGABYTE:.1f} MB"
    return f"{max(1, round(size / _KILOBYTE))} KB"


def _decode(data: bytes, *, label: str) -> QImage:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    reader.setAutoTransform(True)  # a phone photo's EXIF rotation, applied before scaling
    image = reader.read()
    if image.isNull():
        raise ImageProblem(f"{label} could not be read as an image ({reader.errorString()}).")
    return image


def _encode(image: QImage, mime: str, quality: int = -1) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6's stubs type the format as bytes, but the binding only accepts str.
    image.save(buffer, "PNG" if mime == _PNG else "JPEG", quality)  # type: ignore[call-overload]
    return bytes(data.data())


def _scaled(image: QImage, longest: int) -> QImage:
    size = image.size()
    if max(size.width(), size.height()) <= longest:
        return image
    return image.scaled(
        QSize(longest, longest),
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )


def _fitted(image: QImage) -> tuple[bytes, str, QImage]:
    """``image`` encoded within MAX_ENCODED_BYTES: PNG if it fits, else JPEG at falling
    quality, then at half the size, and so on."""
    data = _encode(image, _PNG)
    if len(data) <= MAX_ENCODED_BYTES:
        return data, _PNG, image
    if image.hasAlphaChannel():
        flat = QImage(image.size(), QImage.Format.Format_RGB32)
        flat.fill(Qt.GlobalColor.white)  # JPEG has no transparency: what shows through is white
        painter = QPainter(flat)
        painter.drawImage(0, 0, image)
        painter.end()
        image = flat
    while True:
        for quality in JPEG_QUALITIES:
            data = _encode(image, _JPEG, quality)
            if len(data) <= MAX_ENCODED_BYTES:
                return data, _JPEG, image
        longest = max(image.width(), image.height()) // 2
        if longest < _MIN_SIDE_PX:
            raise ImageProblem("The image cannot be made small enough to send.")
        image = _scaled(image, longest)


def prepare(data: bytes, *, name: str = "", mime: str | None = None) -> Attachment:
    """``data`` (a file's bytes) as an Attachment within MAX_SIDE_PX and MAX_ENCODED_BYTES.

    ImageProblem when it is not an image of a type vision models take, or too large a file.
    """
    label = name or "The pasted image"
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageProblem(
            f"{label} is {size_text(len(data))}; images may be at most "
            f"{size_text(MAX_IMAGE_BYTES)}. Scale it down first."
        )
    kind = mime or image_kind(data)
    if kind is None:
        what = "is empty" if not data else "is not an image of a known type"
        raise ImageProblem(f"{label} {what}; attach {IMAGE_TYPES}.")
    image = _decode(data, label=label)
    scaled = _scaled(image, MAX_SIDE_PX)
    unchanged = scaled is image and kind in _KEPT_TYPES and len(data) <= MAX_ENCODED_BYTES
    if unchanged:
        return Attachment(kind, data, image.width(), image.height(), name)
    encoded, kind, final = _fitted(scaled)
    return Attachment(kind, encoded, final.width(), final.height(), name)


def from_image(image: QImage, *, name: str = "") -> Attachment:
    """A bitmap (pasted or dropped, no file behind it) as an Attachment."""
    if image.isNull():
        raise ImageProblem("The pasted image is empty.")
    encoded, kind, final = _fitted(_scaled(image, MAX_SIDE_PX))
    return Attachment(kind, encoded, final.width(), final.height(), name)


def load_file(path: str | Path) -> Attachment:
    """The image file at ``path``, prepared; ImageProblem says what is wrong with it."""
    file = Path(path)
    try:
        data = read_regular_file(file, limit=MAX_IMAGE_BYTES)
    except IsADirectoryError:
        raise ImageProblem(f"{file.name} is a folder, not an image.") from None
    except NotRegularFile:
        raise ImageProblem(
            f"{file.name} is not a regular file (a pipe, device or socket), not an image."
        ) from None
    except FileTooLarge as error:
        size = f"is {size_text(error.size)}" if error.size else "is too large"
        raise ImageProblem(
            f"{file.name} {size}; images may be at most {size_text(MAX_IMAGE_BYTES)}. "
            "Scale it down first."
        ) from None
    except OSError as error:
        raise ImageProblem(f"{file.name} cannot be read ({error.strerror}).") from None
    return prepare(data, name=file.name)


def _local_files(mime: QMimeData) -> list[str]:
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []


def has_images(mime: QMimeData) -> bool:
    """Whether a paste or drop carries images (bitmaps or local files) rather than text."""
    return mime.hasImage() or bool(_local_files(mime))


def from_mime(mime: QMimeData) -> tuple[list[Attachment], list[str]]:
    """The images a paste or drop carries, and a plain sentence for each that was refused."""
    taken: list[Attachment] = []
    problems: list[str] = []
    for path in _local_files(mime):
        try:
            taken.append(load_file(path))
        except ImageProblem as problem:
            problems.append(str(problem))
    if not taken and not problems and mime.hasImage():
        image = mime.imageData()
        try:
            taken.append(from_image(image if isinstance(image, QImage) else QImage()))
        except ImageProblem as problem:
            problems.append(str(problem))
    return taken, problems


def room_for(current: Sequence[Attachment], adding: int) -> tuple[int, str | None]:
    """How many of ``adding`` new images fit beside ``current``, and why not all (or None)."""
    room = max(0, MAX_IMAGES - len(current))
    if adding <= room:
        return adding, None
    return room, f"A message takes at most {MAX_IMAGES} images."

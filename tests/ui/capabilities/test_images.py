"""Images made ready to send: scaled within the limits, kept byte for byte when they fit,
clear sentences for what cannot be attached."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, QUrl
from PySide6.QtGui import QColor, QImage

from flarechat.core.capabilities import MAX_IMAGE_BYTES, MAX_IMAGES, image_kind
from flarechat.ui.capabilities import images


def encoded(image: QImage, fmt: str = "PNG") -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    assert image.save(buffer, fmt)  # type: ignore[call-overload]  # stubs say bytes
    return bytes(data.data())


def solid(width: int, height: int, colour: str = "#3366cc") -> QImage:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(colour))
    return image


def noise(side: int) -> QImage:
    """Random pixels: PNG cannot compress them, so the file is far over MAX_ENCODED_BYTES."""
    raw = os.urandom(side * side * 4)
    return QImage(raw, side, side, side * 4, QImage.Format.Format_RGB32).copy()


def test_a_small_png_is_sent_byte_for_byte() -> None:
    data = encoded(solid(320, 200))
    attachment = images.prepare(data, name="small.png")
    assert attachment.data == data
    assert (attachment.mime_type, attachment.width, attachment.height) == ("image/png", 320, 200)
    assert attachment.name == "small.png"


def test_a_large_image_is_scaled_to_the_longest_side_limit() -> None:
    data = encoded(solid(4000, 1000))
    attachment = images.prepare(data, name="wide.png")
    assert (attachment.width, attachment.height) == (images.MAX_SIDE_PX, 512)
    assert image_kind(attachment.data) == attachment.mime_type
    assert QImage.fromData(attachment.data).width() == images.MAX_SIDE_PX


def test_an_image_too_heavy_to_send_is_encoded_within_the_byte_limit() -> None:
    data = encoded(noise(1800))
    assert len(data) > images.MAX_ENCODED_BYTES
    attachment = images.prepare(data, name="noise.png")
    assert len(attachment.data) <= images.MAX_ENCODED_BYTES
    assert attachment.mime_type == "image/jpeg"
    assert image_kind(attachment.data) == "image/jpeg"


def test_transparency_is_kept_as_png_when_it_fits() -> None:
    image = QImage(300, 300, QImage.Format.Format_ARGB32)
    image.fill(QColor(0, 0, 0, 0))
    attachment = images.from_image(image)
    assert attachment.mime_type == "image/png"
    assert QImage.fromData(attachment.data).hasAlphaChannel()


def test_an_unsupported_format_is_refused_with_the_types_to_use() -> None:
    with pytest.raises(images.ImageProblem, match=r"bitmap\.bmp is not an image of a known type"):
        images.prepare(encoded(solid(10, 10), "BMP"), name="bitmap.bmp")
    with pytest.raises(images.ImageProblem, match="PNG, JPEG, WEBP or GIF"):
        images.prepare(b"%PDF-1.7 not an image", name="paper.pdf")


def test_an_empty_file_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(images.ImageProblem, match=r"empty\.png is empty"):
        images.load_file(empty)


def test_an_oversize_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "poster.jpg"
    with huge.open("wb") as file:  # sparse: no 20 MB written
        file.truncate(MAX_IMAGE_BYTES + 1)
    with pytest.raises(
        images.ImageProblem, match=r"poster\.jpg is 20\.0 MB; images may be at most 20\.0 MB"
    ):
        images.load_file(huge)


def test_a_missing_file_or_folder_says_which(tmp_path: Path) -> None:
    with pytest.raises(images.ImageProblem, match=r"gone\.png cannot be read"):
        images.load_file(tmp_path / "gone.png")
    with pytest.raises(images.ImageProblem, match="is a folder"):
        images.load_file(tmp_path)


def test_a_drop_of_files_and_a_pasted_bitmap(tmp_path: Path) -> None:
    good = tmp_path / "cat.png"
    good.write_bytes(encoded(solid(64, 48)))
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(good)), QUrl.fromLocalFile(str(bad))])
    assert images.has_images(dropped)
    taken, problems = images.from_mime(dropped)
    assert [a.name for a in taken] == ["cat.png"]
    assert len(problems) == 1
    assert "notes.txt is not an image" in problems[0]
    pasted = QMimeData()
    pasted.setImageData(solid(40, 30))
    taken, problems = images.from_mime(pasted)
    assert (taken[0].width, taken[0].height, problems) == (40, 30, [])
    text = QMimeData()
    text.setText("just words")
    assert not images.has_images(text)


def test_room_for_stops_at_the_per_message_limit() -> None:
    one = images.prepare(encoded(solid(8, 8)))
    assert images.room_for([one] * (MAX_IMAGES - 1), 3) == (
        1,
        f"A message takes at most {MAX_IMAGES} images.",
    )
    assert images.room_for([], 2) == (2, None)

"""Images sent to vision models: data URLs, native byte arrays, and their pixel sizes."""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass
from typing import Any

from flarechat.emulator.wire import ErrorSpec

__all__ = ["Image", "describe", "has_image_parts", "image_parts", "native_image", "sniff"]

_PNG = b"\x89PNG\r\n\x1a\n"
_GIFS = (b"GIF87a", b"GIF89a")
_JPEG_SOI = b"\xff\xd8"
#: JPEG start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) do not.
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD9)})
_BYTE_MAX = 255
_WEBP_14_BITS = 0x3FFF
#: Bytes a WEBP file needs before its size can be read: lossless (VP8L), lossy/extended.
_VP8L_HEADER, _VP8_HEADER = 25, 30


@dataclass(frozen=True, slots=True)
class Image:
    """One image as the model received it; size and type are None when unknown."""

    mime: str | None
    width: int | None = None
    height: int | None = None
    remote: str | None = None  # an http(s) URL the emulator does not fetch


def _png(data: bytes) -> tuple[int, int] | None:
    if data.startswith(_PNG) and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    return None


def _gif(data: bytes) -> tuple[int, int] | None:
    if data[:6] in _GIFS and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    if not (data[:4] == b"RIFF" and data[8:12] == b"WEBP") or len(data) < _VP8L_HEADER:
        return None
    chunk = data[12:16]
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & _WEBP_14_BITS) + 1, ((bits >> 14) & _WEBP_14_BITS) + 1
    if len(data) < _VP8_HEADER:
        return None
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & _WEBP_14_BITS, height & _WEBP_14_BITS
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        return width, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    if not data.startswith(_JPEG_SOI):
        return None
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _STANDALONE:
            at += 2
            continue
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if marker in _SOF and at + 9 <= len(data):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return int(width), int(height)
        at += 2 + length
    return None


_SNIFFERS = (("image/png", _png), ("image/jpeg", _jpeg), ("image/webp", _webp), ("image/gif", _gif))


def sniff(data: bytes) -> Image:
    """The image type and pixel size from its header bytes (PNG, JPEG, WEBP, GIF)."""
    for mime, reader in _SNIFFERS:
        size = reader(data)
        if size is not None:
            return Image(mime, *size)
    return Image(None)


def _invalid(kind: str) -> ErrorSpec:
    return ErrorSpec(400, 5004, f"Invalid data type for base64 input: {kind}")


def _from_base64(text: str, *, kind: str) -> tuple[Image | None, ErrorSpec | None]:
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None, _invalid(kind)
    return sniff(data), None


def _from_url(url: str) -> tuple[Image | None, ErrorSpec | None]:
    if not url.startswith("data:"):
        return Image(None, remote=url), None
    header, comma, payload = url[len("data:") :].partition(",")
    if not comma or not header.endswith(";base64"):
        return None, _invalid(header or "data URL")
    return _from_base64(payload, kind=header.removesuffix(";base64") or "data URL")


def _part_url(part: dict[str, Any]) -> str | None:
    image_url = part.get("image_url")
    url = image_url.get("url") if isinstance(image_url, dict) else image_url
    return url if isinstance(url, str) else None


def _parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    found: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            found += [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]
    return found


def has_image_parts(body: dict[str, Any]) -> bool:
    return bool(_parts(body))


def image_parts(body: dict[str, Any]) -> tuple[list[Image], ErrorSpec | None]:
    """Every ``image_url`` content part of every message, decoded."""
    images: list[Image] = []
    for part in _parts(body):
        url = _part_url(part)
        if url is None:
            return [], ErrorSpec(
                400,
                5006,
                "Bad input: Error: required properties at "
                "'/messages/*/content/*/image_url' are 'url'",
            )
        image, problem = _from_url(url)
        if image is None:
            return [], problem
        images.append(image)
    return images, None


def native_image(value: Any) -> tuple[Image | None, ErrorSpec | None]:
    """The llama-3.2-vision ``image`` input: an array of byte values or a base64 string."""
    if isinstance(value, str):
        return _from_url(value) if value.startswith("data:") else _from_base64(value, kind="string")
    if isinstance(value, list) and all(
        isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= _BYTE_MAX for b in value
    ):
        return sniff(bytes(value)), None
    problem = "Bad input: Error: Type mismatch of '/image', 'object' not in 'array,string'"
    return None, ErrorSpec(400, 5006, problem)


def _one(image: Image) -> str:
    if image.remote is not None:
        return f"a remote image at {image.remote} (not fetched by the emulator)"
    if image.mime is None:
        return "an image in a format I could not read (size unknown)"
    kind = image.mime.split("/")[1].upper()
    return f"a {image.width}\N{MULTIPLICATION SIGN}{image.height} {kind} ({image.mime})"


def describe(images: list[Image]) -> str:
    """One sentence: how many images, and each one's pixel size and MIME type."""
    noun = "image" if len(images) == 1 else "images"
    items = "; ".join(f"{n}. {_one(image)}" for n, image in enumerate(images, 1))
    return f"I received {len(images)} {noun}: {items}."

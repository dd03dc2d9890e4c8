"""``ask --image``: image files read, recognised by their first bytes, and size-checked.

The window scales large images down with Qt before sending; the command line has no Qt, so it
sends each file exactly as it is and refuses what is too big instead of changing it.
"""

from __future__ import annotations

from pathlib import Path

from flarechat.api.config import ImagePart
from flarechat.core.capabilities import IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_IMAGES, image_kind
from flarechat.core.connect import ConfigurationError
from flarechat.paths import FileTooLarge, NotRegularFile, read_regular_file

__all__ = ["IMAGE_TYPES", "MAX_IMAGES", "MAX_IMAGE_BYTES", "image_kind", "read_images"]

_MEGABYTE = 1024 * 1024


def _read_image(path: str) -> ImagePart:
    file = Path(path).expanduser()
    try:
        data = read_regular_file(file, limit=MAX_IMAGE_BYTES)
    except FileNotFoundError:
        raise ConfigurationError([f"--image {path}: no such file."]) from None
    except IsADirectoryError:
        raise ConfigurationError(
            [f"--image {path}: this is a folder, not an image file."]
        ) from None
    except NotRegularFile:
        raise ConfigurationError(
            [f"--image {path}: this is not a regular file (a pipe, device or socket)."]
        ) from None
    except FileTooLarge as error:
        size = f"{error.size / _MEGABYTE:.1f} MB" if error.size else "larger than that"
        raise ConfigurationError(
            [
                f"--image {path}: the file is {size}; images may be at most "
                f"{MAX_IMAGE_BYTES // _MEGABYTE} MB (scale it down first)."
            ]
        ) from None
    except OSError as error:
        raise ConfigurationError([f"--image {path}: cannot be read ({error.strerror})."]) from None
    mime = image_kind(data)
    if mime is None:
        what = "the file is empty" if not data else "the file is not an image of a known type"
        raise ConfigurationError([f"--image {path}: {what}; send {IMAGE_TYPES}."])
    return ImagePart(data=data, mime_type=mime)


def read_images(paths: list[str] | None) -> tuple[ImagePart, ...]:
    """Every ``--image`` file as an ImagePart; ConfigurationError for the first unusable one."""
    paths = paths or []
    if len(paths) > MAX_IMAGES:
        raise ConfigurationError([f"--image: at most {MAX_IMAGES} images, not {len(paths)}."])
    return tuple(_read_image(path) for path in paths)

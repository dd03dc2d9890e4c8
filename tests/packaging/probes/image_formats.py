"""Reads images with nothing but a bundle's Qt plugins: prints, as JSON, the formats Qt can
read and the pixel size of each file given (``null`` when it cannot be read).

    python image_formats.py PLUGIN_DIR FILE...

``QCoreApplication.setLibraryPaths`` before the application exists makes the bundle's
``plugins`` folder the only place Qt looks, so a format the bundle lacks is missing here too.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication, QImage, QImageReader


def main(plugins: str, files: list[str]) -> None:
    QCoreApplication.setLibraryPaths([plugins])
    app = QGuiApplication([sys.argv[0], "-platform", "offscreen"])
    formats = sorted(bytes(name.data()).decode() for name in QImageReader.supportedImageFormats())
    sizes: dict[str, list[int] | None] = {}
    for path in files:
        image = QImage(path)
        sizes[path] = None if image.isNull() else [image.width(), image.height()]
    json.dump(
        {"paths": QCoreApplication.libraryPaths(), "formats": formats, "read": sizes}, sys.stdout
    )
    del app


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

"""Render the app icon SVG into the hicolor PNG sizes (and the Windows .ico) that installers ship.

Run after changing ``resources/icons/flarechat.svg``, then commit the results:

    QT_QPA_PLATFORM=offscreen python packaging/render_icons.py

Writes ``resources/icons/hicolor/<n>x<n>/apps/flarechat.png`` for every size in ``SIZES`` with
QtSvg (offscreen, no display needed), and ``packaging/windows/flarechat.ico`` from the PNGs with
ImageMagick (``/usr/bin/convert``; skipped with a note when it is missing). The macOS ``.icns``
is made on macOS at build time (``packaging/macos/make_icns.sh``, Apple's ``iconutil``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtGui import QImage

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "icons" / "flarechat.svg"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
ICO = ROOT / "packaging" / "windows" / "flarechat.ico"
ICON_NAME = "flarechat"
#: The hicolor theme sizes the .deb installs (freedesktop icon theme spec).
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
#: Sizes packed into the Windows .ico (Explorer, taskbar, Start menu, installer); 256 is the max.
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: The real ImageMagick; a ``convert`` earlier on PATH may be something else.
IMAGEMAGICK = "/usr/bin/convert"


def png_path(size: int) -> Path:
    """Where the hicolor PNG of ``size`` pixels lives."""
    return HICOLOR / f"{size}x{size}" / "apps" / f"{ICON_NAME}.png"


def render(size: int) -> QImage:
    """The app icon SVG rendered at ``size`` x ``size`` pixels (needs a QGuiApplication)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise ValueError(f"not a valid SVG: {SVG}")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def render_pngs() -> list[Path]:
    """Render ``SVG`` at every size in ``SIZES`` into the hicolor tree; returns the paths."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    written = []
    for size in SIZES:
        target = png_path(size)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not render(size).save(str(target)):  # format from the .png suffix
            raise SystemExit(f"could not write {target}")
        written.append(target)
    del app
    return written


def build_ico() -> Path | None:
    """Pack the PNGs into ``ICO`` with ImageMagick; ``None`` when ImageMagick is missing."""
    if not shutil.which(IMAGEMAGICK):
        return None
    ICO.parent.mkdir(parents=True, exist_ok=True)
    sources = [str(png_path(size)) for size in ICO_SIZES]
    subprocess.run([IMAGEMAGICK, *sources, str(ICO)], check=True)
    return ICO


def main() -> int:
    for path in render_pngs():
        sys.stdout.write(f"wrote {path.relative_to(ROOT)}\n")
    ico = build_ico()
    if ico is None:
        sys.stdout.write(f"skipped {ICO.relative_to(ROOT)}: {IMAGEMAGICK} not found\n")
    else:
        sys.stdout.write(f"wrote {ico.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Icons: SVGs from resources/icons, rendered crisp at any DPI and tinted to the current theme."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QIcon, QIconEngine, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from flarechat.paths import resource_path
from flarechat.ui.shared.theme import Palette, current_palette

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["APP_ICON", "IconRole", "icon", "icon_pixmap", "svg_path"]

#: The colourful application icon (never tinted).
APP_ICON = "flarechat"
#: Monochrome SVGs draw with this colour keyword; we substitute the palette colour for it.
_CURRENT_COLOR = b"currentColor"
#: Rendered pixmaps kept per icon (sizes x DPRs x colours seen); plenty for toolbars and menus.
_PIXMAP_CACHE_LIMIT = 32

IconRole = Literal["text", "muted", "accent", "on-accent", "danger"]


@functools.cache
def _icons_dir() -> Path:
    """``resources/icons``, found once: finding it resolves the package's path (two
    realpath walks), ~0.3 ms a time for the window's ~14 icons before the first paint."""
    return resource_path("icons")


def svg_path(name: str) -> str:
    """Filesystem path of ``resources/icons/<name>.svg``."""
    return str(_icons_dir() / f"{name}.svg")


@functools.cache
def _svg_bytes(name: str) -> bytes:
    return (_icons_dir() / f"{name}.svg").read_bytes()


def _role_color(palette: Palette, role: IconRole, *, mode: QIcon.Mode) -> str:
    if mode == QIcon.Mode.Disabled:
        return palette.muted if role != "on-accent" else palette.accent_text
    return {
        "text": palette.text,
        "muted": palette.muted,
        "accent": palette.accent,
        "on-accent": palette.accent_text,
        "danger": palette.danger,
    }[role]


class SvgIconEngine(QIconEngine):
    """Draws one SVG at exactly the requested device pixels; monochrome SVGs follow the theme."""

    def __init__(self, name: str, role: IconRole) -> None:
        super().__init__()
        self._name = name
        self._role: IconRole = role
        self._data = _svg_bytes(name)
        self._tinted = _CURRENT_COLOR in self._data
        self._pixmaps: dict[tuple[int, int, float, str], QPixmap] = {}

    def _color(self, mode: QIcon.Mode) -> str:
        return _role_color(current_palette(), self._role, mode=mode) if self._tinted else ""

    def _renderer(self, color: str) -> QSvgRenderer:
        data = self._data.replace(_CURRENT_COLOR, color.encode()) if color else self._data
        return QSvgRenderer(QByteArray(data))

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        self._renderer(self._color(mode)).render(painter, QRectF(rect))

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        color = self._color(mode)
        key = (size.width(), size.height(), scale, color)
        cached = self._pixmaps.get(key)
        if cached is not None:
            return cached
        pixmap = QPixmap(size * scale)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._renderer(color).render(painter, QRectF(pixmap.rect()))
        painter.end()
        pixmap.setDevicePixelRatio(scale)
        if len(self._pixmaps) >= _PIXMAP_CACHE_LIMIT:
            self._pixmaps.clear()
        self._pixmaps[key] = pixmap
        return pixmap

    def clone(self) -> QIconEngine:
        return SvgIconEngine(self._name, self._role)

    def key(self) -> str:
        return "flarechat-svg"


@functools.cache
def icon(name: str, *, role: IconRole = "text") -> QIcon:
    """The icon ``resources/icons/<name>.svg``; monochrome ones drawn in the palette's ``role``."""
    return QIcon(SvgIconEngine(name, role))


def icon_pixmap(name: str, size: int, *, dpr: float = 1.0, role: IconRole = "text") -> QPixmap:
    """A pixmap of ``size`` logical px at device pixel ratio ``dpr`` (for QLabels)."""
    return icon(name, role=role).pixmap(QSize(size, size), dpr)

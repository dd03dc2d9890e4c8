"""The look: light/dark palettes of named colours, the Fusion palette, small paint helpers."""

from __future__ import annotations

from typing import Literal, NamedTuple, TypeVar

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QWidget

__all__ = [
    "DARK",
    "LIGHT",
    "Palette",
    "Scheme",
    "apply_font_size",
    "apply_theme",
    "current_palette",
    "fill_rounded",
    "follow_system_scheme",
    "monospace_family",
    "mute",
    "named",
    "scaled_font",
    "scaled_font_of",
    "scroll_bar_sheet",
    "system_scheme",
]

Scheme = Literal["light", "dark"]
W = TypeVar("W", bound=QWidget)

#: Qt style every platform gets: consistent metrics, and it honours our palette fully.
STYLE_NAME = "Fusion"
#: QApplication's own command-line option for it, for an application made by Flarechat: the
#: style is then chosen without Python touching QStyle, whose first use makes its eleven
#: enum classes (~8 ms before the first paint, issue #12).
STYLE_ARGUMENTS = ("-style", STYLE_NAME)
#: Window colours darker than this lightness (0-255) count as a dark scheme.
DARK_LIGHTNESS_THRESHOLD = 128
#: Size of small print (metadata lines, hints) relative to the body font.
SMALL_FONT_FACTOR = 0.88
#: Radius of message bubbles, code blocks and banners, in px.
RADIUS_PX = 8
#: The width of a flat scroll bar (scroll_bar_sheet), its handle inset by SCROLL_HANDLE_INSET_PX.
SCROLL_BAR_PX = 12
SCROLL_HANDLE_INSET_PX = 2
SCROLL_HANDLE_MIN_PX = 28


class Palette(NamedTuple):
    """Named colours every Flarechat widget uses instead of hard-coded values.

    A named tuple, not a frozen dataclass: made before the first paint, where the dataclass's
    generated methods for 28 fields cost ~2.5 ms to compile and this ~0.5 ms (issue #12).
    Immutable, compared and hashed by value all the same (render caches key on it).
    """

    name: Scheme
    window: str
    base: str
    alt_base: str
    text: str
    muted: str
    accent: str
    accent_hover: str
    accent_text: str
    link: str
    border: str
    selection: str
    user_bubble: str
    user_border: str
    code_bg: str
    code_header_bg: str
    code_border: str
    inline_code_bg: str
    danger: str
    pygments_style: str
    banner_warning_bg: str
    banner_warning_border: str
    banner_error_bg: str
    banner_error_border: str
    banner_info_bg: str
    banner_info_border: str
    #: Matched words in search results, like a highlighter pen (background, text): not the
    #: accent or selection colours, so they stay readable and visible on a selected row.
    match_bg: str
    match_text: str
    #: A flat scroll bar's handle (scroll_bar_sheet), between the border and the muted text.
    scroll_handle: str

    @property
    def is_dark(self) -> bool:
        return self.name == "dark"

    def banner_colors(self, kind: str) -> tuple[str, str]:
        """(background, border) for a banner kind: warning, error or info."""
        table = {
            "warning": (self.banner_warning_bg, self.banner_warning_border),
            "error": (self.banner_error_bg, self.banner_error_border),
        }
        return table.get(kind, (self.banner_info_bg, self.banner_info_border))


LIGHT = Palette(
    name="light",
    window="#f6f6f7",
    base="#ffffff",
    alt_base="#f3f4f6",
    text="#1f2328",
    muted="#636b76",
    accent="#f38020",
    accent_hover="#d96a0e",
    accent_text="#ffffff",
    link="#0b62c4",
    border="#dcdfe4",
    selection="#fbd5b5",
    user_bubble="#fdf1e7",
    user_border="#f6d9c0",
    code_bg="#f6f8fa",
    code_header_bg="#eceff3",
    code_border="#d8dde3",
    inline_code_bg="#eef0f3",
    danger="#b42318",
    pygments_style="default",
    banner_warning_bg="#fff5e6",
    banner_warning_border="#f2c27d",
    banner_error_bg="#fdeeee",
    banner_error_border="#eea4a4",
    banner_info_bg="#ebf3fd",
    banner_info_border="#a9c7ee",
    match_bg="#ffe28a",
    match_text="#1f2328",
    scroll_handle="#c3c8cf",
)

DARK = Palette(
    name="dark",
    window="#1c1d20",
    base="#232428",
    alt_base="#2a2b30",
    text="#e6e7e9",
    muted="#9ba1a9",
    accent="#f6821f",
    accent_hover="#ff9a45",
    accent_text="#1c1d20",
    link="#6cb6ff",
    border="#3a3c42",
    selection="#6a3d17",
    user_bubble="#302924",
    user_border="#4a3a2c",
    code_bg="#16171a",
    code_header_bg="#2a2c31",
    code_border="#383b41",
    inline_code_bg="#33353b",
    danger="#ff8a80",
    pygments_style="github-dark",
    banner_warning_bg="#3a2e1d",
    banner_warning_border="#8c6223",
    banner_error_bg="#3b2224",
    banner_error_border="#8e3c41",
    banner_info_bg="#1e2b3b",
    banner_info_border="#3d5f88",
    match_bg="#7a6212",
    match_text="#f4f4f5",
    scroll_handle="#4d5058",
)

_PALETTES: dict[Scheme, Palette] = {"light": LIGHT, "dark": DARK}


class _ThemeState:
    """What apply_theme chose last; module-private, one per process (there is one QApplication)."""

    palette: Palette | None = None
    override: Scheme | None = None
    following_system: bool = False


def system_scheme(scheme: Qt.ColorScheme | None = None) -> Scheme:
    """The platform's light/dark preference: ``scheme`` (a value colorSchemeChanged reported)
    or else the current style hint; Unknown falls back to the palette's lightness."""
    value = QGuiApplication.styleHints().colorScheme() if scheme is None else scheme
    if value == Qt.ColorScheme.Dark:
        return "dark"
    if value == Qt.ColorScheme.Light:
        return "light"
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return "dark" if window.lightness() < DARK_LIGHTNESS_THRESHOLD else "light"


def current_palette() -> Palette:
    """The palette apply_theme installed (or the one matching the system when it never ran)."""
    if _ThemeState.palette is not None:
        return _ThemeState.palette
    if QGuiApplication.instance() is None:
        return LIGHT
    return _PALETTES[system_scheme()]


def apply_theme(
    app: QApplication, scheme: Scheme | None = None, *, styled: bool = False
) -> Palette:
    """Install Fusion and the palette; ``scheme=None`` follows the system scheme live.
    ``styled``: ``app`` was made with STYLE_ARGUMENTS, so it has Fusion already."""
    _ThemeState.override = scheme
    if not _ThemeState.following_system:
        app.styleHints().colorSchemeChanged.connect(follow_system_scheme)
        _ThemeState.following_system = True
    if not styled and app.style().name().lower() != STYLE_NAME.lower():
        app.setStyle(STYLE_NAME)
    palette = _PALETTES[scheme or system_scheme()]
    _install(app, palette)
    return palette


def follow_system_scheme(scheme: Qt.ColorScheme) -> Palette | None:
    """The system switched light/dark (QStyleHints.colorSchemeChanged is connected here):
    install the matching palette, unless apply_theme was given a fixed scheme. Returns the
    palette installed, or None when nothing changed. The reported value is used, not the
    hint read back: some platforms update the hint after the signal."""
    app = QApplication.instance()
    if _ThemeState.override is not None or not isinstance(app, QApplication):
        return None
    if scheme == Qt.ColorScheme.Unknown:
        return None  # no preference: keep what is on screen
    palette = _PALETTES[system_scheme(scheme)]
    _install(app, palette)
    return palette


def _install(app: QApplication, palette: Palette) -> None:
    # No application stylesheet: QSS makes every widget (hundreds per transcript) slower to
    # create and polish; our widgets paint their panels from the Palette instead.
    _ThemeState.palette = palette
    _MonoState.family = None
    app.setPalette(qt_palette(palette))


def qt_palette(p: Palette) -> QPalette:
    """The QPalette Fusion paints with for one of our palettes."""
    qp = QPalette()
    roles = QPalette.ColorRole
    pairs = {
        roles.Window: p.window,
        roles.WindowText: p.text,
        roles.Base: p.base,
        roles.AlternateBase: p.alt_base,
        roles.Text: p.text,
        roles.Button: p.alt_base,
        roles.ButtonText: p.text,
        roles.BrightText: p.accent_text,
        roles.Highlight: p.accent,
        roles.HighlightedText: p.accent_text,
        roles.Link: p.link,
        roles.LinkVisited: p.link,
        roles.ToolTipBase: p.base,
        roles.ToolTipText: p.text,
        roles.PlaceholderText: p.muted,
        roles.Mid: p.border,
        roles.Midlight: p.alt_base,
        roles.Accent: p.accent,
    }
    for role, color in pairs.items():
        qp.setColor(role, QColor(color))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        qp.setColor(disabled, role, QColor(p.muted))
    # A disabled field sits on the window colour, so it reads as "not for now" at a glance.
    for role in (roles.Base, roles.Button):
        qp.setColor(disabled, role, QColor(p.window))
    return qp


class _FontState:
    """The application font before any size was chosen (what "System size" goes back to)."""

    system: QFont | None = None


def apply_font_size(app: QApplication, points: int) -> QFont:
    """Use ``points`` for all text; 0 (or less) goes back to the system's size."""
    if _FontState.system is None:
        _FontState.system = QFont(app.font())
    font = QFont(_FontState.system)
    if points > 0:
        font.setPointSize(points)
    app.setFont(font)
    _MonoState.family = None
    return font


def fill_rounded(
    painter: QPainter,
    rect: QRectF,
    *,
    fill: str,
    border: str | None = None,
    radius: float = RADIUS_PX,
) -> None:
    """Paint a rounded panel (bubbles, code blocks, banners): Qt paints no QSS for these,
    which keeps message widgets cheap to create."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor(border), 1) if border else Qt.PenStyle.NoPen)
    painter.setBrush(QColor(fill))
    painter.drawRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), radius, radius)
    painter.restore()


def mute(widget: W) -> W:
    """Draw ``widget``'s text in the palette's muted colour (follows theme changes)."""
    widget.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return widget


class _MonoState:
    """The fixed-pitch family, asked of Qt once: a streamed reply asks ~470 times (~0.1 ms
    each, on the GUI thread); forgotten when the theme or the font size is applied."""

    family: str | None = None


def monospace_family() -> str:
    """The system's fixed-pitch font family (for code), e.g. "DejaVu Sans Mono"."""
    if _MonoState.family is None:
        family = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
        _MonoState.family = family or "monospace"
    return _MonoState.family


def named(widget: W, name: str) -> W:
    """``widget`` with its objectName set (the QSS selects transcript parts by name)."""
    widget.setObjectName(name)
    return widget


def scaled_font(widget: QWidget, factor: float) -> QFont:
    """The widget's font scaled by ``factor`` (small print, headings)."""
    return scaled_font_of(widget.font(), factor)


def scaled_font_of(font: QFont, factor: float) -> QFont:
    """``font`` scaled by ``factor``."""
    scaled = QFont(font)
    if scaled.pointSizeF() > 0:
        scaled.setPointSizeF(max(1.0, scaled.pointSizeF() * factor))
    else:  # a pixel-sized font
        scaled.setPixelSize(max(1, round(scaled.pixelSize() * factor)))
    return scaled


def scroll_bar_sheet(p: Palette, *, groove: str) -> str:
    """Style-sheet rules for flat scroll bars: a rounded handle on ``groove``, no arrows.

    For the scroll bars of the chat's panes (transcript, conversation list). Fusion's bar
    paints a gradient groove, arrows and a bevelled handle, ~2 ms a paint for a window-high bar
    (measured offscreen); these rules paint in ~0.03 ms. The transcript's bar repaints with
    every frame while a reply streams (its range grows), so the difference is ~2 ms a frame.
    """
    radius = (SCROLL_BAR_PX - 2 * SCROLL_HANDLE_INSET_PX) // 2
    return (
        f"QScrollBar:vertical {{ background: {groove}; width: {SCROLL_BAR_PX}px; margin: 0; }}"
        f"QScrollBar:horizontal {{ background: {groove}; height: {SCROLL_BAR_PX}px; margin: 0; }}"
        f"QScrollBar::handle {{ background: {p.scroll_handle}; border-radius: {radius}px;"
        f" margin: {SCROLL_HANDLE_INSET_PX}px; }}"
        f"QScrollBar::handle:vertical {{ min-height: {SCROLL_HANDLE_MIN_PX}px; }}"
        f"QScrollBar::handle:horizontal {{ min-width: {SCROLL_HANDLE_MIN_PX}px; }}"
        f"QScrollBar::handle:hover, QScrollBar::handle:pressed {{ background: {p.muted}; }}"
        "QScrollBar::add-line, QScrollBar::sub-line { width: 0; height: 0; border: none; }"
        "QScrollBar::add-page, QScrollBar::sub-page { background: none; }"
    )

"""``flarechat --self-check``: can this installation run? One line per check, exit 0 or 1.

Checks, in order: the modules the app imports load; the bundled resources exist (icons and the
.desktop file); the keyring machinery loads and names its backend; the Qt platform plugin
loads and can render the app icon.

Exit code rule: 1 if any line says ``FAIL``, else 0. A machine with no usable keychain right
now (no D-Bus session, ``PYTHON_KEYRING_BACKEND`` forcing the fail backend…) is reported as
``WARN`` and does not fail the check — the app still works, keeping tokens for the session only
— unless ``FLARECHAT_REQUIRE_KEYRING=1`` is set (CI with a real Secret Service), where it fails.
The Qt check uses ``QT_QPA_PLATFORM`` when set, else ``offscreen`` when there is no display.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from flarechat.paths import resource_path

__all__ = ["ICON_NAMES", "Check", "run"]

#: Modules whose absence would break the app at some point after start.
MODULES = (
    "flarechat.api.client",
    "flarechat.api.retry",
    "flarechat.core.turn",
    "flarechat.core.store",
    "flarechat.core.catalogue",
    "flarechat.settings.store",
    "flarechat.settings.secrets",
    "flarechat.ui.window.main_window",
    "flarechat.ui.control.chat",
    "flarechat.cli",
    "httpx",
    "httpx_sse",
    "qasync",
    "truststore",
    "pygments",
    "markdown_it",
    "starlette",
    "uvicorn",
    "PySide6.QtSvg",
)
#: Every icon the window uses (resources/icons/<name>.svg).
ICON_NAMES = (
    "flarechat",
    "send",
    "stop",
    "copy",
    "regenerate",
    "edit",
    "continue",
    "settings",
    "refresh",
    "search",
    "new-chat",
    "chevron-left",
    "chevron-right",
    "thinking",
    "jump-down",
    "warning",
    "info",
    "error",
)
DESKTOP_FILE = "flarechat.desktop"
REQUIRE_KEYRING_ENV = "FLARECHAT_REQUIRE_KEYRING"
#: Pixel size the app icon is rendered at to prove QtSvg and the platform plugin work.
ICON_PROBE_SIZE = 64


@dataclass(frozen=True, slots=True)
class Check:
    """The outcome of one check: ``status`` is ``ok``, ``WARN`` or ``FAIL``."""

    name: str
    status: str
    detail: str


def check_imports() -> Check:
    failed: list[str] = []
    for module in MODULES:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any import failure is the finding itself
            failed.append(f"{module} ({type(exc).__name__}: {exc})")
    if failed:
        return Check("imports", "FAIL", "; ".join(failed))
    return Check("imports", "ok", f"{len(MODULES)} modules")


def check_resources() -> Check:
    wanted = [("icons", f"{name}.svg") for name in ICON_NAMES] + [(DESKTOP_FILE,)]
    missing = ["/".join(parts) for parts in wanted if not resource_path(*parts).is_file()]
    if missing:
        return Check("resources", "FAIL", f"missing under {resource_path()}: {', '.join(missing)}")
    return Check("resources", "ok", f"{len(wanted)} files under {resource_path()}")


def check_keyring() -> Check:
    try:
        from flarechat.settings.secrets import describe_backend

        backend = describe_backend()
    except Exception as exc:  # noqa: BLE001 - a broken keyring install is what we report
        return Check("keyring backend", "FAIL", f"{type(exc).__name__}: {exc}")
    if not backend.lower().startswith("none"):
        return Check("keyring backend", "ok", backend)
    required = os.environ.get(REQUIRE_KEYRING_ENV) == "1"
    note = f"{backend} — tokens would be kept for the session only"
    return Check("keyring backend", "FAIL" if required else "WARN", note)


def _platform_name() -> str:
    chosen = os.environ.get("QT_QPA_PLATFORM")
    if chosen:
        return chosen
    has_display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if sys.platform.startswith("linux") and not has_display:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        return "offscreen"
    return "default"


def _icon_renders() -> bool:
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(resource_path("icons", "flarechat.svg")))
    if not renderer.isValid():
        return False
    image = QImage(ICON_PROBE_SIZE, ICON_PROBE_SIZE, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    centre = ICON_PROBE_SIZE // 2
    return image.pixelColor(centre, centre).alpha() > 0


def check_qt_platform() -> Check:
    """Load the platform plugin and render the app icon (a missing plugin makes Qt abort)."""
    name = _platform_name()
    try:
        from PySide6.QtGui import QGuiApplication

        app = QGuiApplication.instance() or QGuiApplication([sys.argv[0] if sys.argv else "x"])
        rendered = _icon_renders()
        platform = QGuiApplication.platformName()
    except Exception as exc:  # noqa: BLE001 - report any Qt start-up failure as FAIL
        return Check("Qt platform plugin", "FAIL", f"{name}: {type(exc).__name__}: {exc}")
    del app
    if not rendered:
        return Check("Qt platform plugin", "FAIL", f"{platform}: the app icon does not render")
    return Check("Qt platform plugin", "ok", f"{platform} (app icon renders)")


CHECKS: tuple[Callable[[], Check], ...] = (
    check_imports,
    check_resources,
    check_keyring,
    check_qt_platform,
)


def run(out: TextIO | None = None) -> int:
    """Run every check, print one line each, return 0 (all ok or WARN) or 1 (any FAIL)."""
    stream = out if out is not None else sys.stdout
    failed = False
    for check in CHECKS:
        result = check()
        stream.write(f"{result.status:<5} {result.name}: {result.detail}\n")
        stream.flush()  # a Qt abort in the next check must not swallow this line
        failed = failed or result.status == "FAIL"
    return 1 if failed else 0

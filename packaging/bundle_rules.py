"""What goes into the PyInstaller bundle: hidden imports, excludes and the Qt file filter.

Plain data and pure functions, imported by ``flarechat.spec`` and by ``tests/packaging`` (so
the rules are tested without running a build). Paths in the filter are bundle destinations as
PyInstaller lists them, e.g. ``PySide6/Qt/plugins/platforms/libqxcb.so`` (Linux, macOS) or
``PySide6/plugins/platforms/qwindows.dll`` (Windows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "BUNDLE_ID",
    "EXCLUDES",
    "HIDDEN_IMPORTS",
    "HIGHLIGHTED_LANGUAGES",
    "KEYRING_BACKENDS",
    "PYGMENTS_LEXER_MAPPING",
    "keep_in_bundle",
    "macos_info_plist",
    "platform_hidden_imports",
    "prune_binaries",
    "prune_datas",
    "pygments_lexer_mapping",
    "pygments_lexer_modules",
    "read_version",
    "replace_source",
]

APP_NAME = "Flarechat"
BUNDLE_ID = "dev.flarechat.Flarechat"
#: Qt 6.11 supports macOS 13 (Ventura) and later.
MACOS_MINIMUM = "13.0"

#: keyring finds backends through entry points and imports them lazily; name every one so the
#: bundle has the OS keychain on each system (SecretService/libsecret/KWallet, Windows, macOS).
KEYRING_BACKENDS = (
    "keyring.backends.SecretService",
    "keyring.backends.libsecret",
    "keyring.backends.kwallet",
    "keyring.backends.Windows",
    "keyring.backends.macOS",
    "keyring.backends.macOS.api",
    "keyring.backends.chainer",
    "keyring.backends.fail",
    "keyring.backends.null",
)
#: uvicorn (the demo emulator's server) picks its loop/protocol/lifespan modules by string.
UVICORN_DYNAMIC = (
    "uvicorn.logging",
    "uvicorn.loops.auto",
    "uvicorn.loops.asyncio",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.lifespan.on",
    "uvicorn.lifespan.off",
    "h11",
)
HIDDEN_IMPORTS = (
    *KEYRING_BACKENDS,
    *UVICORN_DYNAMIC,
    "jaraco.classes",
    "jaraco.context",
    "jaraco.functools",
    "truststore",
)
#: Per-system extras: the libraries each keychain backend talks through.
_PLATFORM_HIDDEN_IMPORTS = {
    "linux": ("secretstorage", "jeepney", "jeepney.io.blocking"),
    "win32": ("win32ctypes.core", "win32ctypes.pywin32.win32cred"),
    "darwin": (),
}

#: Code-block languages the bundle highlights (pygments aliases): the common ones in chat
#: replies. A fence in any other language is shown plain: the bundle's lexer mapping lists
#: only the lexers it carries, so ``get_lexer_by_name`` raises ``ClassNotFound`` for the rest
#: and the transcript falls back to ``TextLexer``. pygments' 250 lexer modules are 4 MB of
#: source; these (with what they import) are about a third.
HIGHLIGHTED_LANGUAGES = (
    *("python", "pycon", "pytb", "javascript", "typescript", "jsx", "tsx", "json", "yaml"),
    *("toml", "ini", "xml", "html", "css", "scss", "markdown", "tex", "bash", "console"),
    *("powershell", "batch", "sql", "c", "cpp", "csharp", "fsharp", "java", "kotlin"),
    *("scala", "groovy", "clojure", "go", "rust", "ruby", "php", "swift", "objective-c"),
    *("perl", "lua", "r", "matlab", "julia", "haskell", "ocaml", "elixir", "erlang", "dart"),
    *("scheme", "diff", "docker", "make", "cmake", "nginx", "terraform", "graphql"),
    *("protobuf", "fortran", "zig", "nix", "nasm", "text"),
)
#: The pygments module whose ``LEXERS`` table ``get_lexer_by_name`` searches.
PYGMENTS_LEXER_MAPPING = "pygments.lexers._mapping"


def pygments_lexer_modules(
    lexers: Mapping[str, tuple[Any, ...]], languages: Iterable[str] = HIGHLIGHTED_LANGUAGES
) -> list[str]:
    """The lexer modules (from pygments' ``LEXERS`` table) that define ``languages``."""
    wanted = set(languages)
    modules = {entry[0] for entry in lexers.values() if wanted & set(entry[2])}
    found = {alias for entry in lexers.values() if entry[0] in modules for alias in entry[2]}
    if missing := wanted - found:
        raise ValueError(f"no pygments lexer for {sorted(missing)}")
    return sorted(modules)


def pygments_lexer_mapping(lexers: Mapping[str, tuple[Any, ...]], bundled: Iterable[str]) -> str:
    """Source of a ``pygments.lexers._mapping`` listing only the lexers in ``bundled`` modules
    (so a dropped language is "not found" rather than an ``ImportError``)."""
    modules = set(bundled)
    kept = {name: entry for name, entry in lexers.items() if entry[0] in modules}
    return (
        '"""pygments\' lexer table cut down to the bundled lexers (packaging/bundle_rules.py)."""\n'
        f"LEXERS = {kept!r}\n"
    )


#: Python modules never needed at run time. Unused Qt modules are the big win; the rest keeps
#: test/dev tooling and other Qt bindings (qasync probes for them) out of the bundle.
_UNUSED_QT = (
    "Qt3DAnimation",
    "Qt3DCore",
    "Qt3DExtras",
    "Qt3DInput",
    "Qt3DLogic",
    "Qt3DRender",
    "QtAxContainer",
    "QtBluetooth",
    "QtCanvasPainter",
    "QtCharts",
    "QtConcurrent",
    "QtDataVisualization",
    "QtDBus",
    "QtDesigner",
    "QtGraphs",
    "QtGraphsWidgets",
    "QtHelp",
    "QtHttpServer",
    "QtLocation",
    "QtMultimedia",
    "QtMultimediaWidgets",
    "QtNetwork",
    "QtNetworkAuth",
    "QtNfc",
    "QtOpenGL",
    "QtOpenGLWidgets",
    "QtPdf",
    "QtPdfWidgets",
    "QtPositioning",
    "QtPrintSupport",
    "QtQml",
    "QtQuick",
    "QtQuick3D",
    "QtQuickControls2",
    "QtQuickTest",
    "QtQuickWidgets",
    "QtRemoteObjects",
    "QtScxml",
    "QtSensors",
    "QtSerialBus",
    "QtSerialPort",
    "QtSpatialAudio",
    "QtSql",
    "QtStateMachine",
    "QtTest",
    "QtTextToSpeech",
    "QtUiTools",
    "QtWebChannel",
    "QtWebEngineCore",
    "QtWebEngineQuick",
    "QtWebEngineWidgets",
    "QtWebSockets",
    "QtWebView",
    "QtXml",
)
EXCLUDES = (
    *(f"PySide6.{name}" for name in _UNUSED_QT),
    "PyQt5",
    "PyQt6",
    "PySide2",
    "shiboken2",
    "tkinter",
    "_tkinter",
    "turtle",
    "turtledemo",
    "idlelib",
    "lib2to3",
    "pydoc_data",
    "test",
    "ensurepip",
    "pip",
    "setuptools",
    "pkg_resources",
    "pytest",
    "_pytest",
    "pytestqt",
    "pytest_asyncio",
    "mypy",
    "IPython",
    # httpx's optional command-line client; httpx runs fine without it.
    "rich",
)

#: Plugin folders whose every plugin is unused: other platforms' input, printing, SQL, QML,
#: networking (QtNetwork is excluded), Designer, compositor-side Wayland, Lottie (pulls Quick).
_DROP_PLUGIN_DIRS = frozenset(
    {
        "designer",
        "egldeviceintegrations",
        "generic",
        "networkinformation",
        "position",
        "printsupport",
        "qmllint",
        "qmltooling",
        "sqldrivers",
        "tls",
        "vectorimageformats",
        "wayland-graphics-integration-server",
    }
)
#: Single plugins to drop: gtk3 theme (pulls the whole of GTK 3), embedded/VNC platforms,
#: the virtual keyboard (pulls QtQuick), Wayland shells other than xdg-shell, and the Wayland
#: "server buffer" clients (they only talk to Qt-based compositors' OpenGL buffer sharing).
_DROP_PLUGIN_NAME = re.compile(
    r"gtk3|eglfs|linuxfb|vnc|vkkhrdisplay|minimalegl|virtualkeyboard"
    r"|fullscreen-shell|ivi-shell|wl-shell|qt-shell|-server\."
)
#: Image formats the app reads: its SVG icons, and the JPEG, WEBP and GIF images a user
#: attaches for vision models (``core.capabilities.IMAGE_TYPES``; PNG is built into QtGui,
#: JPEG is also written). Markdown images are shown as links, never loaded. Everything else
#: (pdf pulls QtPdf; tiff, tga, wbmp, icns, ico are not attachable) stays out.
_KEEP_IMAGE_FORMAT = re.compile(r"^(lib)?q(svg|jpeg|webp|gif)d?\.")
_QT_ROOT = re.compile(r"^PySide6/(Qt/)?")
#: Linux libraries taken from the host, never bundled: the C++ runtime and the X11/xcb/xkb,
#: fontconfig/freetype, GLib and D-Bus stacks. They are on every desktop that can show a Qt
#: window (the .deb's Depends names them), and a bundled copy older than the host's graphics
#: drivers need breaks them (libstdc++ is the classic). AppImage's excludelist holds the same
#: libraries for the same reason. Python's own libraries (ssl, ffi, sqlite, bz2, lzma) stay.
HOST_LIBRARIES = re.compile(
    r"^(libstdc\+\+|libgcc_s|libX11|libX11-xcb|libXau|libXdmcp|libxcb(-[a-z0-9-]+)?"
    r"|libxkbcommon(-x11)?|libfontconfig|libfreetype|libexpat|libpng16|libbrotli(common|dec)"
    r"|libz|libglib-2\.0|libgthread-2\.0|libpcre2-8|libdbus-1|libsystemd|libgcrypt"
    r"|libgpg-error|liblz4|libzstd|libcap|libbsd|libmd)\.so(\.[0-9]+)*$"
)


def keep_in_bundle(dest: str) -> bool:
    """False for files the bundle must not carry: unused Qt plugins, Qt's translations, and
    the host libraries in ``HOST_LIBRARIES``."""
    path = PurePosixPath(dest.replace("\\", "/"))
    if HOST_LIBRARIES.match(path.name):
        return False
    relative = _QT_ROOT.sub("", str(path))
    if relative == str(path):  # not a Qt file
        return True
    parts = PurePosixPath(relative).parts
    if parts[0] == "translations":  # the UI is English-only; Qt's .qm files are ~14 MB
        return False
    if parts[0] != "plugins" or len(parts) < 3:
        return True
    folder, name = parts[1], parts[-1]
    if folder in _DROP_PLUGIN_DIRS or _DROP_PLUGIN_NAME.search(name):
        return False
    if folder == "imageformats":
        return bool(_KEEP_IMAGE_FORMAT.search(name))
    return True


#: A PyInstaller TOC entry: (destination name, source path, type code).
Entry = tuple[str, str, str]
#: PyInstaller's type code for a symbolic link entry (its source is the link's target dest).
SYMLINK = "SYMLINK"
#: ``linked(src)``: the names of the shared libraries the binary at ``src`` imports.
LinkedNames = Callable[[str], Iterable[str]]


def _base(name: str) -> str:
    """A library's file name, case-folded (Windows names DLLs case-insensitively)."""
    return PurePosixPath(name.replace("\\", "/")).name.casefold()


def _closure(roots: Iterable[Entry], *, known: dict[str, Entry], linked: LinkedNames) -> set[str]:
    """Base names of every bundled library reachable from ``roots`` by link-time imports."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        _dest, src, _kind = stack.pop()
        for name in linked(src):
            base = _base(name)
            if base in known and base not in seen:
                seen.add(base)
                stack.append(known[base])
    return seen


def _link_target(entry: Entry) -> str:
    """The bundle destination a ``SYMLINK`` entry points at (its source is a relative path)."""
    dest = PurePosixPath(entry[0].replace("\\", "/"))
    parts: list[str] = []
    for part in (*dest.parent.parts, *PurePosixPath(entry[1].replace("\\", "/")).parts):
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def prune_binaries(binaries: Sequence[Entry], *, linked: LinkedNames) -> list[Entry]:
    """Drop what ``keep_in_bundle`` rejects, and the libraries only those files link to.

    PyInstaller has already added every dependency of every Qt plugin (gtk3's whole stack for
    the gtk3 theme, QtQuick for the virtual keyboard, QtPdf for the PDF image plugin). A library
    reachable from a dropped file is dropped too unless a kept file also links to it.
    ``linked(src)`` names the libraries ``src`` imports (PyInstaller's ``get_imports``).
    """
    known = {_base(entry[0]): entry for entry in binaries}
    dropped = [entry for entry in binaries if not keep_in_bundle(entry[0])]
    orphans = _closure(dropped, known=known, linked=linked)
    kept = [entry for entry in binaries if keep_in_bundle(entry[0])]
    roots = [entry for entry in kept if _base(entry[0]) not in orphans]
    needed = _closure(roots, known=known, linked=linked)
    return [entry for entry in kept if _base(entry[0]) not in orphans - needed]


def _framework_dir(dest: str) -> str | None:
    """``.../QtPdf.framework`` for a file inside a macOS framework, else ``None``."""
    match = re.match(r"^(.*?[^/]+\.framework)/", dest.replace("\\", "/"))
    return match.group(1) if match else None


def prune_datas(datas: Sequence[Entry], *, removed: Sequence[Entry]) -> list[Entry]:
    """Drop rejected data files and whatever belonged to the ``removed`` binaries.

    PyInstaller lists its symbolic links with the data files (``libQt6Pdf.so.6`` at the top
    level pointing into ``PySide6/Qt/lib``; a macOS framework's ``Versions/Current`` links and
    ``Info.plist``): a link to a removed library, and a removed library's framework folder, go.
    """
    gone = {_base(entry[0]) for entry in removed}
    gone_frameworks = {_framework_dir(entry[0]) for entry in removed} - {None}

    def keep(entry: Entry) -> bool:
        if not keep_in_bundle(entry[0]) or _framework_dir(entry[0]) in gone_frameworks:
            return False
        return entry[2] != SYMLINK or _base(_link_target(entry)) not in gone

    return [entry for entry in datas if keep(entry)]


def replace_source(entries: Sequence[Entry], *, name: str, source: str) -> list[Entry]:
    """``entries`` with the source path of the one whose destination is ``name`` replaced
    (a cut-down pygments table, a trimmed libicudata). Fails if ``name`` is not there."""
    if not any(entry[0] == name for entry in entries):
        raise ValueError(f"{name} is not in the bundle")
    return [
        (dest, source, kind) if dest == name else (dest, src, kind) for dest, src, kind in entries
    ]


def platform_hidden_imports(platform: str) -> tuple[str, ...]:
    """``HIDDEN_IMPORTS`` plus the extras for ``platform`` (a ``sys.platform`` value)."""
    key = "linux" if platform.startswith("linux") else platform
    return (*HIDDEN_IMPORTS, *_PLATFORM_HIDDEN_IMPORTS.get(key, ()))


def read_version(root: Path) -> str:
    """``flarechat.__version__`` read from source (the spec must not depend on an install)."""
    text = (root / "app" / "flarechat" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, flags=re.M)
    if match is None:
        raise ValueError("no __version__ in app/flarechat/__init__.py")
    return match.group(1)


def macos_info_plist(version: str) -> dict[str, object]:
    """Info.plist keys for the .app (PyInstaller adds CFBundleExecutable, CFBundleIdentifier)."""
    return {
        "CFBundleName": APP_NAME,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleShortVersionString": version,
        "CFBundleVersion": version,
        "LSMinimumSystemVersion": MACOS_MINIMUM,
        "LSApplicationCategoryType": "public.app-category.productivity",
        "NSHighResolutionCapable": True,
        # Follow the system's light/dark appearance instead of forcing light mode.
        "NSRequiresAquaSystemAppearance": False,
        "NSHumanReadableCopyright": "MIT licence. The Flarechat team.",
    }

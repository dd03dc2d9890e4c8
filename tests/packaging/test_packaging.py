"""Installers: the spec and its bundle rules, the .desktop file, icons, the NSIS script, the bundle.

Fast tests check the packaging sources; the slow test builds the real onedir bundle with
PyInstaller (into a temporary directory) and runs ``--self-check`` and ``ask --demo`` from it.
The .deb/.run install round trip lives in packaging/linux/ci_deb_roundtrip.sh (CI runs both).
"""

from __future__ import annotations

import ast
import configparser
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import flarechat
from support.packaging import PACKAGING, ROOT, load_script

SPEC = PACKAGING / "flarechat.spec"
DESKTOP_FILE = ROOT / "resources" / "flarechat.desktop"
NSIS_SCRIPT = PACKAGING / "windows" / "flarechat.nsi"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_RGBA = 6  # IHDR colour type: truecolour with alpha
ICO_TYPE = 1


rules = load_script("bundle_rules", PACKAGING / "bundle_rules.py")
icons = load_script("render_icons", PACKAGING / "render_icons.py")
host_libs = load_script("host_libs", PACKAGING / "linux" / "host_libs.py")
sizes = load_script("bundle_size", PACKAGING / "bundle_size.py")
icu = load_script("icu_data", PACKAGING / "icu_data.py")
PROBES = Path(__file__).resolve().parent / "probes"


def _calls(tree: ast.AST) -> dict[str, ast.Call]:
    return {
        node.func.id: node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def test_spec_parses_and_builds_a_onedir_with_resources_and_an_app_bundle() -> None:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"), filename=str(SPEC))
    calls = _calls(tree)
    assert {"Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE"} <= calls.keys()
    analysis = {kw.arg: ast.unparse(kw.value) for kw in calls["Analysis"].keywords}
    # The whole resources/ folder, under "resources" (what paths.resource_path() expects).
    assert analysis["datas"] == "[(str(ROOT / 'resources'), 'resources')]"
    assert analysis["excludes"] == "list(bundle_rules.EXCLUDES)"
    assert "launcher.py" in ast.unparse(calls["Analysis"].args[0])
    bundle = {kw.arg: ast.unparse(kw.value) for kw in calls["BUNDLE"].keywords}
    assert bundle["bundle_identifier"] == "bundle_rules.BUNDLE_ID"
    assert bundle["name"] == "'Flarechat.app'"
    assert "exclude_binaries=True" in ast.unparse(calls["EXE"])  # onedir, not onefile


def test_launcher_calls_flarechat_main() -> None:
    tree = ast.parse((PACKAGING / "launcher.py").read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert any(node.module == "flarechat.main" for node in imports)
    assert "sys.exit(main())" in ast.unparse(tree)


def test_hidden_imports_cover_every_keyring_backend_keyring_registers() -> None:
    from importlib.metadata import entry_points

    registered = {entry.value for entry in entry_points(group="keyring.backends")}
    assert registered, "keyring's backend entry points are missing"
    assert registered <= set(rules.HIDDEN_IMPORTS)
    assert {"secretstorage", "jeepney.io.blocking"} <= set(rules.platform_hidden_imports("linux"))
    assert "win32ctypes.core" in rules.platform_hidden_imports("win32")


@pytest.mark.parametrize("module", [*rules.KEYRING_BACKENDS, *rules.UVICORN_DYNAMIC, "truststore"])
def test_every_named_hidden_import_exists(module: str) -> None:
    assert importlib.util.find_spec(module) is not None


def test_excludes_keep_every_qt_module_the_app_uses() -> None:
    used = {"PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets", "PySide6.QtSvg"}
    assert not used & set(rules.EXCLUDES)
    assert {"PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtNetwork", "tkinter"} <= set(
        rules.EXCLUDES
    )


@pytest.mark.parametrize(
    ("dest", "kept"),
    [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", True),
        ("PySide6/Qt/plugins/platforms/libqwayland.so", True),
        ("PySide6/Qt/plugins/platforms/libqoffscreen.so", True),
        ("PySide6/Qt/plugins/platforms/libqcocoa.dylib", True),
        ("PySide6/plugins/platforms/qwindows.dll", True),
        ("PySide6/plugins/styles/qmodernwindowsstyle.dll", True),
        ("PySide6/Qt/plugins/iconengines/libqsvgicon.so", True),
        ("PySide6/Qt/plugins/imageformats/libqsvg.so", True),
        ("PySide6/plugins/imageformats/qsvg.dll", True),
        # Attached images: JPEG, WEBP and GIF (PNG is built in); nothing else is attachable.
        ("PySide6/Qt/plugins/imageformats/libqjpeg.so", True),
        ("PySide6/Qt/plugins/imageformats/libqwebp.so", True),
        ("PySide6/Qt/plugins/imageformats/libqgif.so", True),
        ("PySide6/plugins/imageformats/qjpeg.dll", True),
        ("PySide6/Qt/plugins/imageformats/libqtiff.so", False),
        ("PySide6/Qt/plugins/imageformats/libqico.so", False),
        ("PySide6/Qt/plugins/imageformats/libqicns.so", False),
        ("PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so", True),
        ("PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so", True),
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", False),
        ("PySide6/Qt/plugins/platforms/libqeglfs.so", False),
        ("PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so", False),
        ("PySide6/Qt/plugins/imageformats/libqpdf.so", False),
        ("PySide6/plugins/imageformats/qtiff.dll", False),
        ("PySide6/Qt/plugins/sqldrivers/libqsqlite.so", False),
        ("PySide6/Qt/plugins/vectorimageformats/libqlottievectorimage.so", False),
        ("PySide6/Qt/translations/qtbase_de.qm", False),
        ("PySide6/translations/qtbase_fr.qm", False),
        ("libstdc++.so.6", False),
        ("libxcb-icccm.so.4", False),
        ("libssl.so.3", True),
        ("libpython3.11.so.1.0", True),
        ("resources/icons/flarechat.svg", True),
    ],
)
def test_keep_in_bundle(dest: str, kept: bool) -> None:
    assert rules.keep_in_bundle(dest) is kept


def test_prune_drops_what_only_dropped_plugins_link_to() -> None:
    qt = "PySide6/Qt/"
    binaries = [
        (f"{qt}plugins/imageformats/libqpdf.so", "/src/libqpdf.so", "BINARY"),
        (f"{qt}plugins/platforms/libqxcb.so", "/src/libqxcb.so", "BINARY"),
        (f"{qt}lib/libQt6Pdf.so.6", "/src/libQt6Pdf.so.6", "BINARY"),
        (f"{qt}lib/libQt6Core.so.6", "/src/libQt6Core.so.6", "BINARY"),
    ]
    links = {
        "/src/libqpdf.so": ["libQt6Pdf.so.6", "libQt6Core.so.6", "libc.so.6"],
        "/src/libqxcb.so": ["libQt6Core.so.6"],
        "/src/libQt6Pdf.so.6": ["libQt6Core.so.6"],
    }
    kept = rules.prune_binaries(binaries, linked=lambda src: links.get(src, []))
    assert [Path(dest).name for dest, _src, _kind in kept] == ["libqxcb.so", "libQt6Core.so.6"]
    removed = [entry for entry in binaries if entry not in kept]
    datas = [
        ("libQt6Pdf.so.6", f"{qt}lib/libQt6Pdf.so.6", "SYMLINK"),
        ("libQt6Core.so.6", f"{qt}lib/libQt6Core.so.6", "SYMLINK"),
        ("resources/flarechat.desktop", "/src/flarechat.desktop", "DATA"),
        (f"{qt}translations/qtbase_de.qm", "/src/qtbase_de.qm", "DATA"),
    ]
    assert [entry[0] for entry in rules.prune_datas(datas, removed=removed)] == [
        "libQt6Core.so.6",
        "resources/flarechat.desktop",
    ]


def test_prune_removes_a_dropped_macos_framework_whole() -> None:
    lib = "PySide6/Qt/lib/"
    removed = [(f"{lib}QtPdf.framework/Versions/A/QtPdf", "/src/QtPdf", "BINARY")]
    datas = [
        (f"{lib}QtPdf.framework/Resources/Info.plist", "/src/Info.plist", "DATA"),
        (f"{lib}QtPdf.framework/QtPdf", "Versions/Current/QtPdf", "SYMLINK"),
        (f"{lib}QtCore.framework/QtCore", "Versions/Current/QtCore", "SYMLINK"),
        (f"{lib}QtCore.framework/Versions/Current", "A", "SYMLINK"),
    ]
    kept = [entry[0] for entry in rules.prune_datas(datas, removed=removed)]
    assert kept == [f"{lib}QtCore.framework/QtCore", f"{lib}QtCore.framework/Versions/Current"]


def test_replace_source_swaps_one_entry_and_refuses_a_missing_one() -> None:
    entries = [("a.so", "/src/a.so", "BINARY"), ("b.so", "/src/b.so", "BINARY")]
    swapped = rules.replace_source(entries, name="b.so", source="/trimmed/b.so")
    assert swapped == [("a.so", "/src/a.so", "BINARY"), ("b.so", "/trimmed/b.so", "BINARY")]
    with pytest.raises(ValueError, match=r"c\.so"):
        rules.replace_source(entries, name="c.so", source="/x")


def test_size_report_names_the_largest_files(tmp_path: Path) -> None:
    (tmp_path / "_internal").mkdir()
    for name, size in (("flarechat", 300), ("_internal/libbig.so", 1000), ("_internal/s", 5)):
        (tmp_path / name).write_bytes(b"x" * size)
    (tmp_path / "libbig.so").symlink_to("_internal/libbig.so")  # links count nothing
    measured = sizes.measure(tmp_path, count=2)
    assert measured.total == 1305
    assert measured.largest == (("_internal/libbig.so", 1000), ("flarechat", 300))
    assert "_internal/libbig.so" in measured.report()


def test_version_and_macos_info_plist() -> None:
    assert rules.read_version(ROOT) == flarechat.__version__
    plist = rules.macos_info_plist(flarechat.__version__)
    assert plist["NSHighResolutionCapable"] is True
    assert plist["NSRequiresAquaSystemAppearance"] is False
    assert plist["LSMinimumSystemVersion"] == rules.MACOS_MINIMUM
    assert plist["CFBundleShortVersionString"] == flarechat.__version__
    assert rules.BUNDLE_ID == "dev.flarechat.Flarechat"


def test_desktop_file_launches_the_installed_command_with_the_hicolor_icon() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DESKTOP_FILE, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"].split()[0] == "flarechat"
    assert entry["Icon"] == "flarechat"
    assert entry["Terminal"] == "false"
    validator = shutil.which("desktop-file-validate")
    if validator is None:
        pytest.skip("desktop-file-validate not installed (apt-get install desktop-file-utils)")
    result = subprocess.run([validator, str(DESKTOP_FILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""  # not even a hint


def _png_header(path: Path) -> tuple[int, int, int]:
    data = path.read_bytes()[:26]
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height, data[25]


@pytest.mark.parametrize("size", icons.SIZES)
def test_hicolor_png_has_its_pixel_size(size: int) -> None:
    assert _png_header(icons.png_path(size)) == (size, size, PNG_RGBA)


def test_hicolor_covers_the_sizes_installers_ship() -> None:
    assert set(icons.SIZES) == {16, 24, 32, 48, 64, 128, 256, 512}


@pytest.mark.parametrize("size", [16, 48, 256])
def test_committed_pngs_match_the_current_svg(qapp: object, size: int) -> None:
    from PySide6.QtGui import QImage

    fresh = icons.render(size)
    committed = QImage(str(icons.png_path(size))).convertToFormat(fresh.format())
    diffs = [
        abs(
            getattr(fresh.pixelColor(x, y), channel)()
            - getattr(committed.pixelColor(x, y), channel)()
        )
        for y in range(size)
        for x in range(size)
        for channel in ("red", "green", "blue", "alpha")
    ]
    # Tolerance for anti-aliasing differences between Qt versions; a changed SVG is far off.
    assert sum(diffs) / len(diffs) < 1, "icon PNGs are stale: run packaging/render_icons.py"


def test_windows_ico_holds_every_size_up_to_256() -> None:
    data = (PACKAGING / "windows" / "flarechat.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, ICO_TYPE)
    sizes = {data[6 + 16 * index] or 256 for index in range(count)}  # 0 means 256
    assert sizes == set(icons.ICO_SIZES)


def test_nsis_script_compiles(tmp_path: Path) -> None:
    makensis = shutil.which("makensis")
    if makensis is None:
        pytest.skip("makensis not installed (apt-get install nsis)")
    dist = tmp_path / "dist" / "flarechat"
    (dist / "_internal").mkdir(parents=True)
    for name in ("flarechat.exe", "flarechat-cli.exe", "_internal/base_library.zip"):
        (dist / name).write_bytes(b"placeholder")
    setup = tmp_path / f"flarechat-{flarechat.__version__}-setup.exe"
    result = subprocess.run(
        [
            makensis,
            "-V2",
            "-WX",
            f"-DVERSION={flarechat.__version__}",
            f"-DDIST_DIR={dist}",
            f"-DOUTFILE={setup}",
            str(NSIS_SCRIPT),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert setup.read_bytes()[:2] == b"MZ"


def test_depends_parsing_and_coverage() -> None:
    depends = "libc6 (>= 2.36), libgl1, fonts-dejavu-core | fonts-liberation2, libfoo:any"
    assert host_libs.depends_names(depends) == {
        "libc6",
        "libgl1",
        "fonts-dejavu-core",
        "fonts-liberation2",
        "libfoo",
    }
    problems, unowned = host_libs.uncovered(
        {"libGL.so.1": "libgl1", "libX11.so.6": "libx11-6", "libnope.so.1": None}, depends
    )
    assert problems == ["libX11.so.6: package libx11-6 is not in Depends"]
    assert unowned == ["libnope.so.1: no installed package provides it"]


@pytest.mark.parametrize(
    "script",
    [
        "linux/build_deb.sh",
        "linux/build_run.sh",
        "linux/ci_deb_roundtrip.sh",
        "linux/postinst",
        "linux/postrm",
        "macos/make_dmg.sh",
        "macos/make_icns.sh",
    ],
)
def test_scripts_are_executable(script: str) -> None:
    # .ci/run only calls ci_deb_roundtrip.sh when it is executable: a lost mode bit would
    # silently turn the installer check off.
    assert os.access(PACKAGING / script, os.X_OK)


# --- The real bundle (slow: PyInstaller builds it once for the tests below) -------------------

BUILD_TIMEOUT = 900  # seconds; ~20-40 s on 2 cores, more when the machine is busy
RUN_TIMEOUT = 120
DEB_TIMEOUT = 600
MIB = sizes.MIB
#: The image types a user can attach (core.capabilities.IMAGE_TYPES) as Qt format names.
ATTACHABLE_FORMATS = {"png", "jpeg", "webp", "gif"}
#: A 1x1 GIF: Qt reads GIF but cannot write one to make a sample.
GIF_1X1 = bytes.fromhex(
    "47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b"
)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The onedir bundle, built from flarechat.spec into a temporary directory."""
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (pip install -e '.[packaging]')")
    out = tmp_path_factory.mktemp("pyinstaller")
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean"]
    command += ["--log-level", "WARN", "--distpath", str(out / "dist")]
    command += ["--workpath", str(out / "build"), str(SPEC)]
    build = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert build.returncode == 0, build.stderr[-4000:]
    name = "Flarechat.app/Contents/MacOS" if sys.platform == "darwin" else "flarechat"
    return out / "dist" / name


def _run(
    *args: str | Path, env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, env=env, timeout=timeout
    )


def _env(*, real_keyring: bool) -> dict[str, str]:
    """The bundle's environment: offscreen Qt; keyring's fail backend unless ``real_keyring``
    (then the keychain must be found: FLARECHAT_REQUIRE_KEYRING=1)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    if real_keyring:
        env["FLARECHAT_REQUIRE_KEYRING"] = "1"
    else:
        env["FLARECHAT_REQUIRE_KEYRING"] = "0"
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    return env


def _executable(bundle: Path) -> Path:
    return bundle / ("flarechat-cli.exe" if sys.platform == "win32" else "flarechat")


@pytest.mark.slow
@pytest.mark.keyring_real
def test_bundle_passes_self_check_and_answers_a_demo_ask(bundle: Path, tmp_path: Path) -> None:
    exe = _executable(bundle)
    env = _env(real_keyring=False)
    check = _run(exe, "--self-check", env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    for name in ("imports", "resources", "Qt platform plugin"):
        assert f"ok    {name}:" in check.stdout
    assert str(bundle) in check.stdout  # resources come from the bundle, not the checkout

    ask = _run(exe, "ask", "--demo", "hello", env=env)
    assert ask.returncode == 0, ask.stderr
    from_source = _run(sys.executable, "-m", "flarechat", "ask", "--demo", "hello", env=env)
    assert ask.stdout.strip()
    assert ask.stdout == from_source.stdout  # the bundle answers exactly like the source

    # The bundled keyring backends must find the OS keychain (here: a private Secret Service).
    from keyring_support import real_secret_service

    with real_secret_service(tmp_path / "keyring"):
        with_keychain = _run(exe, "--self-check", env=_env(real_keyring=True))
    assert with_keychain.returncode == 0, with_keychain.stdout + with_keychain.stderr
    assert "ok    keyring backend: SecretService" in with_keychain.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("schema", "exit_code"),
    [
        ({"type": "object", "properties": {"answer": {"type": "string"}}}, 0),
        ({"type": "object", "properties": {"answer": {"type": "strin"}}}, 2),  # jsonschema's catch
    ],
)
def test_bundle_checks_json_schemas_like_the_source(
    bundle: Path, tmp_path: Path, schema: dict[str, object], exit_code: int
) -> None:
    # jsonschema is imported lazily and reads its meta-schemas from package data files.
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    args = ("ask", "--demo", "--json-schema", str(path), "hello")
    env = _env(real_keyring=False)
    bundled = _run(_executable(bundle), *args, env=env)
    from_source = _run(sys.executable, "-m", "flarechat", *args, env=env)
    assert bundled.returncode == from_source.returncode == exit_code, bundled.stderr
    assert bundled.stdout == from_source.stdout
    verdicts = [  # the schema verdicts, not the timing line
        [line for line in run.stderr.splitlines() if line.startswith("flarechat: ")]
        for run in (bundled, from_source)
    ]
    assert verdicts[0] == verdicts[1]


@pytest.mark.slow
def test_bundle_reads_every_attachable_image_format(
    bundle: Path, tmp_path: Path, qapp: object
) -> None:
    from PySide6.QtGui import QColor, QImage

    from flarechat.core.capabilities import IMAGE_TYPES

    assert {kind.lower() for kind in re.findall(r"[A-Z]+", IMAGE_TYPES)} == ATTACHABLE_FORMATS
    sample = QImage(3, 2, QImage.Format.Format_RGB32)
    sample.fill(QColor("teal"))
    files = {}
    for kind in ("png", "jpeg", "webp"):
        files[kind] = tmp_path / f"sample.{kind}"
        assert sample.save(str(files[kind])), kind  # the format from the suffix
    files["gif"] = tmp_path / "sample.gif"
    files["gif"].write_bytes(GIF_1X1)
    plugins = next(bundle.rglob("imageformats")).parent
    probe = _run(sys.executable, PROBES / "image_formats.py", plugins, *files.values())
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["paths"][0] == str(plugins)
    assert ATTACHABLE_FORMATS | {"svg"} <= set(found["formats"])
    assert {"tiff", "ico", "pdf"}.isdisjoint(found["formats"])
    assert found["read"] == {
        str(path): [1, 1] if kind == "gif" else [3, 2] for kind, path in files.items()
    }


def _executable_archive(bundle: Path) -> Any:
    """The archive PyInstaller appends to the bundle's executable (bootstrap modules, PYZ)."""
    from PyInstaller.archive.readers import CArchiveReader  # type: ignore[import-untyped]

    return CArchiveReader(str(_executable(bundle)))


def _bundled_pyz(bundle: Path) -> Any:
    """The PYZ archive of pure-Python modules inside the bundle's executable."""
    return _executable_archive(bundle).open_embedded_archive("PYZ.pyz")


#: Modules only other systems have; an import of one is guarded by a platform check.
OTHER_PLATFORMS_ONLY = frozenset({"winreg", "msvcrt", "_winapi", "winsound", "_overlapped"})


def _imported_modules(package: Path) -> set[str]:
    """Every absolute module name the package's sources import, at top level or in functions
    (lazy imports such as jsonschema included)."""
    found: set[str] = set()
    for source in package.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
    return found - OTHER_PLATFORMS_ONLY


def _bundled_modules(bundle: Path) -> set[str]:
    """Module names the bundle can import: its PYZ, base_library.zip, bootstrap modules and
    extension modules (``name.cpython-311-….so``, ``name.abi3.so``, ``.pyd``)."""
    internal = next(path.parent for path in bundle.rglob("base_library.zip"))
    names = set(_bundled_pyz(bundle).toc) | set(sys.builtin_module_names)
    with zipfile.ZipFile(internal / "base_library.zip") as base:
        names |= {
            name.removesuffix(".pyc").replace("/", ".").removesuffix(".__init__")
            for name in base.namelist()
        }
    names |= set(_executable_archive(bundle).toc)  # struct and PyInstaller's importers
    for extension in internal.rglob("*"):
        if extension.suffix in {".so", ".pyd"} and extension.name.count(".") >= 2:
            parent = extension.parent.relative_to(internal)
            package = [] if parent.parts[-1:] == ("lib-dynload",) else parent.parts
            names.add(".".join([*package, extension.name.split(".")[0]]))
    return names


@pytest.mark.slow
def test_bundle_holds_every_module_the_app_imports(bundle: Path) -> None:
    # collect_submodules("flarechat") and PyInstaller's import scan must together leave
    # nothing out: new packages (core.session, ui.lab…) and imports inside functions.
    app = ROOT / "app" / "flarechat"
    missing = sorted(_imported_modules(app) - _bundled_modules(bundle))
    assert not missing, f"imported by app/flarechat but not in the bundle: {missing}"


@pytest.mark.slow
def test_bundle_lexer_table_names_only_bundled_lexers(bundle: Path) -> None:
    pyz = _bundled_pyz(bundle)
    names = set(pyz.toc)
    namespace: dict[str, dict[str, tuple[str, str, tuple[str, ...], object, object]]] = {}
    exec(pyz.extract(rules.PYGMENTS_LEXER_MAPPING), namespace)
    table = namespace["LEXERS"]
    assert {entry[0] for entry in table.values()} <= names
    assert set(rules.HIGHLIGHTED_LANGUAGES) <= {
        alias for entry in table.values() for alias in entry[2]
    }
    assert "pygments.lexers.business" not in names  # COBOL and the like stay out


@pytest.mark.slow
def test_bundle_carries_the_trimmed_icu_data(bundle: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PySide6 links its own ICU only on Linux")
    (library,) = [path for path in bundle.rglob("libicudata.so.*") if not path.is_symlink()]
    _symbol, package = icu.read_common_data(library)
    trees = {name.split("/")[1] for name, _data in package.items if name.count("/") > 1}
    assert trees.isdisjoint(icu.DROPPED_TREES)
    assert {"zone", "coll"} <= trees


@pytest.mark.slow
def test_bundle_fits_the_size_budget_without_unused_qt(bundle: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the size budget is for the Linux bundle")
    measured = sizes.measure(bundle)
    print(measured.report())  # shown with -s or -rA: where the bytes go
    assert measured.total <= sizes.BUNDLE_BUDGET_MIB * MIB, measured.report()
    files = [path for path in bundle.rglob("*") if path.is_file() and not path.is_symlink()]
    names = {path.name for path in files}
    assert not {name for name in names if "Qt6Qml" in name or "Qt6Quick" in name or "gtk" in name}
    assert not [name for name in names if name.endswith(".qm")]  # Qt translations stripped
    assert not [link for link in bundle.rglob("*") if link.is_symlink() and not link.exists()]


@pytest.mark.slow
def test_deb_fits_the_size_budget(bundle: Path, tmp_path: Path) -> None:
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is only on Debian-based systems")
    build = _run(
        PACKAGING / "linux" / "build_deb.sh",
        "--bundle",
        bundle,
        "--out",
        tmp_path,
        timeout=DEB_TIMEOUT,
    )
    assert build.returncode == 0, build.stderr
    deb = Path(build.stdout.strip().splitlines()[-1])
    size = deb.stat().st_size
    print(f"{deb.name}: {size / MIB:.1f} MiB")
    assert size <= sizes.DEB_BUDGET_MIB * MIB, f"{deb.name} is {size / MIB:.1f} MiB"

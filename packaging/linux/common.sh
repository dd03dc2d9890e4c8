# shellcheck shell=bash
# Shared by build_deb.sh and build_run.sh (sourced, not run): paths, version, the onedir build.
#
# Options both scripts accept:
#   --out DIR      where everything goes (default packaging/out; never the repo root)
#   --bundle DIR   package this existing onedir (dist/flarechat) instead of building one
# Environment: PYTHON — the interpreter with PyInstaller and Flarechat installed
#   (default: .venv/bin/python if present, else python3).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/packaging/out"
BUNDLE=""
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
APP=flarechat

parse_common_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --out) OUT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
            --bundle) BUNDLE="$(cd "$2" && pwd)"; shift 2 ;;
            -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
            *) echo "unknown option: $1" >&2; exit 2 ;;
        esac
    done
    mkdir -p "$OUT"
}

# The one place the version lives: app/flarechat/__init__.py.
app_version() {
    sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/app/flarechat/__init__.py"
}

log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# Build the onedir with PyInstaller into $OUT/dist/flarechat (unless --bundle was given).
ensure_bundle() {
    if [ -n "$BUNDLE" ]; then return; fi
    log "building the onedir bundle with $PYTHON (PyInstaller)"
    "$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
        --distpath "$OUT/dist" --workpath "$OUT/build" "$ROOT/packaging/flarechat.spec"
    BUNDLE="$OUT/dist/$APP"
}

# Install the hicolor PNGs and the scalable SVG under $1 (an icons/hicolor directory).
install_icons() {
    local target="$1" size_dir
    for size_dir in "$ROOT"/resources/icons/hicolor/*x*; do
        install -D -m 0644 "$size_dir/apps/$APP.png" "$target/$(basename "$size_dir")/apps/$APP.png"
    done
    install -D -m 0644 "$ROOT/resources/icons/$APP.svg" "$target/scalable/apps/$APP.svg"
}

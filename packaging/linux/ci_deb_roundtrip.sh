#!/usr/bin/env bash
# CI's installer check (called by .ci/run): package tests, then the .deb and the .run for real.
#
#   1. PyInstaller into the CI venv (.venv) if missing; nsis/makeself/desktop-file-utils/binutils
#      from apt if missing
#   2. tests/packaging (incl. the slow bundle build + self-check and the NSIS compile check)
#   3. build the .deb, `apt-get install -y` it, check the installed files, run
#      `flarechat --self-check` (inside a private Secret Service, so the bundled keyring
#      backends must find it) and `flarechat ask --demo "hello"`, re-check Depends against
#      the installed system, `apt-get purge -y flarechat`, assert nothing is left
#   4. build the .run, install it into a temporary HOME, self-check, uninstall, assert clean
# Runs as root or with sudo. Output goes to packaging/out/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$(pwd)"
export LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen DEBIAN_FRONTEND=noninteractive
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
export PYTHON
OUT="$ROOT/packaging/out"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
KEYRING_PASSWORD="flarechat-ci"
# Wait for another apt/dpkg run (unattended upgrades, a parallel job) instead of failing on
# its lock; a purge that fails this way would leave the package installed.
APT=(apt-get -o DPkg::Lock::Timeout=300)

step() { printf '\n--> %s\n' "$*"; }
fail() { echo "ci_deb_roundtrip: FAIL: $*" >&2; exit 1; }

ensure_tools() {
    if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
        local spec
        spec="$("$PYTHON" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["packaging"][0])')"
        step "installing $spec into $(dirname "$(dirname "$PYTHON")")"
        "$PYTHON" -m pip install -q "$spec"
    fi
    local missing=()
    command -v makensis >/dev/null || missing+=(nsis)
    command -v makeself >/dev/null || missing+=(makeself)
    command -v desktop-file-validate >/dev/null || missing+=(desktop-file-utils)
    command -v readelf >/dev/null || missing+=(binutils)
    if [ ${#missing[@]} -gt 0 ]; then
        step "apt: ${missing[*]}"
        $SUDO "${APT[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

# Run "$@" with a private D-Bus session and an unlocked gnome-keyring (the Secret Service).
with_secret_service() {
    local home
    home="$(mktemp -d)"
    chmod 0700 "$home"
    # shellcheck disable=SC2016 # expanded by the inner sh, inside the D-Bus session
    HOME="$home" XDG_RUNTIME_DIR="$home" KEYRING_PASSWORD="$KEYRING_PASSWORD" \
        dbus-run-session -- sh -c \
        'printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' \
        sh "$@"
    rm -rf "$home"
}

self_check() {
    if command -v gnome-keyring-daemon >/dev/null && command -v dbus-run-session >/dev/null; then
        with_secret_service env FLARECHAT_REQUIRE_KEYRING=1 "$1" --self-check
    elif [ "${FLARECHAT_REQUIRE_KEYRING:-}" = "1" ]; then
        fail "FLARECHAT_REQUIRE_KEYRING=1 but gnome-keyring-daemon/dbus-run-session are missing"
    else
        "$1" --self-check
    fi
}

demo_ask() {
    local reply
    reply="$("$1" ask --demo "hello")"
    [ -n "$reply" ] || fail "'$1 ask --demo hello' printed nothing"
    printf '%s\n' "$reply" | head -n 3
}

purge_if_installed() {
    if dpkg-query -W -f='${Status}' flarechat 2>/dev/null | grep -q "install ok"; then
        $SUDO "${APT[@]}" purge -y -qq flarechat >/dev/null
    fi
}

deb_roundtrip() {
    step "build the .deb"
    rm -f "$OUT"/flarechat_*.deb
    packaging/linux/build_deb.sh --out "$OUT" >/dev/null
    local debs=("$OUT"/flarechat_*.deb)
    step "sizes (budgets: onedir 110 MiB, .deb 45 MiB; checked by tests/packaging)"
    "$PYTHON" packaging/bundle_size.py "$OUT/dist/flarechat"
    stat -c '%s %n' "${debs[0]}" | awk '{ printf "%.1f MiB  %s\n", $1 / 1048576, $2 }'
    purge_if_installed
    trap purge_if_installed EXIT
    step "apt-get install -y ${debs[0]#"$ROOT"/}"
    $SUDO "${APT[@]}" install -y -qq "${debs[0]}" >/dev/null
    [ "$(readlink /usr/bin/flarechat)" = /opt/flarechat/flarechat ] || fail "/usr/bin/flarechat"
    [ -f /usr/share/applications/flarechat.desktop ] || fail "no .desktop file installed"
    [ -f /usr/share/icons/hicolor/256x256/apps/flarechat.png ] || fail "no hicolor icon"
    step "installed: flarechat --self-check"
    (cd "$(mktemp -d)" && FLARECHAT_HOME="$(mktemp -d)" self_check flarechat)
    step "installed: flarechat ask --demo hello"
    (cd "$(mktemp -d)" && FLARECHAT_HOME="$(mktemp -d)" demo_ask flarechat)
    step "every library the bundle needs is installed and named in Depends"
    "$PYTHON" packaging/linux/host_libs.py /opt/flarechat \
        --depends "$(dpkg-query -W -f='${Depends}' flarechat)"
    step "apt-get purge -y flarechat"
    $SUDO "${APT[@]}" purge -y -qq flarechat >/dev/null
    trap - EXIT
    for path in /opt/flarechat /usr/bin/flarechat /usr/share/applications/flarechat.desktop \
        /usr/share/icons/hicolor/256x256/apps/flarechat.png; do
        if [ -e "$path" ] || [ -L "$path" ]; then fail "$path is still there after purge"; fi
    done
    echo "purged cleanly"
}

run_roundtrip() {
    step "build the .run and install it for a throw-away user"
    local run home
    run="$(packaging/linux/build_run.sh --out "$OUT" --bundle "$OUT/dist/flarechat")"
    home="$(mktemp -d)"
    (unset XDG_DATA_HOME; HOME="$home" "$run" --quiet >/dev/null)
    [ -L "$home/.local/bin/flarechat" ] || fail ".run did not create ~/.local/bin/flarechat"
    FLARECHAT_HOME="$(mktemp -d)" self_check "$home/.local/bin/flarechat"
    (unset XDG_DATA_HOME; HOME="$home" "$home/.local/share/flarechat/uninstall.sh" >/dev/null)
    if [ -e "$home/.local/share/flarechat" ] || [ -L "$home/.local/bin/flarechat" ]; then
        fail ".run uninstall left files behind"
    fi
    rm -rf "$home"
    echo ".run installed, checked and removed cleanly"
}

main() {
    ensure_tools
    step "tests/packaging (slow bundle build included)"
    "$PYTHON" -m pytest tests/packaging -q -p no:cacheprovider
    deb_roundtrip
    run_roundtrip
}

main

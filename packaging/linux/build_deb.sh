#!/usr/bin/env bash
# Build packaging/out/flarechat_<version>_<arch>.deb from the PyInstaller onedir.
#
#   packaging/linux/build_deb.sh [--out DIR] [--bundle DIR]
#
# Layout: /opt/flarechat/ (the onedir), /usr/bin/flarechat -> /opt/flarechat/flarechat,
# /usr/share/applications/flarechat.desktop, /usr/share/icons/hicolor/*/apps/flarechat.*.
# Depends names every system library the bundle links to and does not carry (checked against
# the bundle by host_libs.py on every build). Needs dpkg-deb and readelf (binutils);
# desktop-file-validate (desktop-file-utils) when installed. Prints the .deb's path.
set -euo pipefail
# shellcheck source=packaging/linux/common.sh
source "$(dirname "$0")/common.sh"
parse_common_args "$@"

# Sorted by package. The X11/xcb/xkb, fontconfig/freetype, GLib and D-Bus stacks and the C++
# runtime come from the host (see HOST_LIBRARIES in packaging/bundle_rules.py); libGL/libEGL
# and glibc never ship in a PyInstaller bundle. A font is needed or every glyph is a box.
DEPENDS=(
    "libc6 (>= 2.36)"
    libdbus-1-3
    libegl1
    libfontconfig1
    libfreetype6
    libgcc-s1
    libgl1
    libglib2.0-0
    libstdc++6
    libwayland-client0
    libwayland-cursor0
    libwayland-egl1
    libx11-6
    libx11-xcb1
    libxcb-cursor0
    libxcb-glx0
    libxcb-icccm4
    libxcb-image0
    libxcb-keysyms1
    libxcb-randr0
    libxcb-render-util0
    libxcb-render0
    libxcb-shape0
    libxcb-shm0
    libxcb-sync1
    libxcb-util1
    libxcb-xfixes0
    libxcb-xkb1
    libxcb1
    libxkbcommon-x11-0
    libxkbcommon0
    libzstd1
    zlib1g
    "fonts-dejavu-core | fonts-liberation2"
)
# A Secret Service provider keeps the API token in the desktop keychain (desktops ship one;
# without it the app still works and keeps tokens for the session only).
SUGGESTS="gnome-keyring | keepassxc"
DEB_ZSTD_LEVEL=9

join_by_comma() {
    local out="" item
    for item in "$@"; do out+="${out:+, }$item"; done
    echo "$out"
}

check_host_libraries() {
    local depends="$1"
    log "checking Depends against the libraries the bundle needs from the host"
    "$PYTHON" "$ROOT/packaging/linux/host_libs.py" "$BUNDLE" --depends "$depends" \
        --allow-unowned
}

write_control() {
    local stage="$1" version="$2" arch="$3" depends="$4" size
    size="$(du -sk --apparent-size "$stage" | cut -f1)"
    install -d -m 0755 "$stage/DEBIAN"
    cat >"$stage/DEBIAN/control" <<EOF
Package: $APP
Version: $version
Architecture: $arch
Maintainer: The Flarechat team <flarechat@users.noreply.github.com>
Installed-Size: $size
Depends: $depends
Suggests: $SUGGESTS
Section: net
Priority: optional
Description: desktop chat client for Cloudflare Workers AI and AI Gateway
 Flarechat streams replies from Workers AI models, directly or through
 AI Gateway, keeps the API token in the desktop keychain, handles capacity
 errors with a visible retry, and stores conversations in SQLite.
 .
 This package ships a self-contained build under /opt/flarechat.
EOF
    install -m 0755 "$ROOT/packaging/linux/postinst" "$stage/DEBIAN/postinst"
    install -m 0755 "$ROOT/packaging/linux/postrm" "$stage/DEBIAN/postrm"
}

stage_files() {
    local stage="$1"
    install -d -m 0755 "$stage/opt" "$stage/usr/bin" "$stage/usr/share/applications" \
        "$stage/usr/share/doc/$APP"
    cp -a "$BUNDLE" "$stage/opt/$APP"
    ln -s "/opt/$APP/$APP" "$stage/usr/bin/$APP"
    install -m 0644 "$ROOT/resources/$APP.desktop" "$stage/usr/share/applications/$APP.desktop"
    install_icons "$stage/usr/share/icons/hicolor"
    install -m 0644 "$ROOT/packaging/linux/copyright" "$stage/usr/share/doc/$APP/copyright"
    # Whatever the build umask was: directories 0755, files 0644, executables 0755.
    chmod -R u=rwX,go=rX "$stage"
}

validate_desktop_file() {
    if command -v desktop-file-validate >/dev/null; then
        desktop-file-validate "$1/usr/share/applications/$APP.desktop"
    else
        log "desktop-file-validate not found (apt-get install desktop-file-utils); not validated"
    fi
}

main() {
    local version arch depends stage deb
    version="$(app_version)"
    arch="$(dpkg --print-architecture)"
    depends="$(join_by_comma "${DEPENDS[@]}")"
    ensure_bundle
    check_host_libraries "$depends"
    stage="$OUT/deb/${APP}_${version}_${arch}"
    rm -rf "$stage"
    stage_files "$stage"
    validate_desktop_file "$stage"
    write_control "$stage" "$version" "$arch" "$depends"
    deb="$OUT/${APP}_${version}_${arch}.deb"
    rm -f "$deb"
    # zstd level 9: 38.5 MiB in ~10 s here, against 41.8 MiB in 2 s at the default level 3;
    # level 19 (34 MiB) and xz -6 (31.4 MiB) take 2.5-3 minutes on 2 cores and xz unpacks
    # 8x slower at install. Debian 12's dpkg reads zstd and xz alike.
    dpkg-deb --root-owner-group -Zzstd -z"$DEB_ZSTD_LEVEL" --build "$stage" "$deb" >/dev/null
    log "built $deb ($(du -h --apparent-size "$deb" | cut -f1))"
    echo "$deb"
}

main

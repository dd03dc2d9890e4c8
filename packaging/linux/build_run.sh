#!/usr/bin/env bash
# Build packaging/out/flarechat-<version>-<arch>.run: a makeself self-extracting, per-user
# installer (no root). It is the offline stand-in for an AppImage, which cannot be built from
# the package registries this project reaches (see packaging/README.md).
#
#   packaging/linux/build_run.sh [--out DIR] [--bundle DIR]
#
# Needs makeself (Debian package). Prints the .run's path.
set -euo pipefail
# shellcheck source=packaging/linux/common.sh
source "$(dirname "$0")/common.sh"
parse_common_args "$@"

main() {
    local version arch stage run
    version="$(app_version)"
    arch="$(uname -m)"
    ensure_bundle
    stage="$OUT/run/${APP}-${version}"
    rm -rf "$stage"
    install -d -m 0755 "$stage"
    cp -a "$BUNDLE" "$stage/app"
    install -m 0644 "$ROOT/resources/$APP.desktop" "$stage/$APP.desktop"
    install_icons "$stage/icons/hicolor"
    install -m 0755 "$ROOT/packaging/linux/run_install.sh" "$stage/install.sh"
    install -m 0755 "$ROOT/packaging/linux/run_uninstall.sh" "$stage/uninstall.sh"
    chmod -R u=rwX,go=rX "$stage"
    run="$OUT/${APP}-${version}-${arch}.run"
    rm -f "$run"
    # gzip: every Linux can unpack it (zstd or xz would need the tool on the user's machine).
    makeself --quiet --tar-quietly --nox11 --sha256 --gzip \
        "$stage" "$run" "Flarechat $version" ./install.sh
    log "built $run ($(du -h --apparent-size "$run" | cut -f1))"
    echo "$run"
}

main

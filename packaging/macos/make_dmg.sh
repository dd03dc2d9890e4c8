#!/usr/bin/env bash
# macOS only: wrap packaging/out/dist/Flarechat.app in a compressed disk image (UDZO) with an
# /Applications link, then optionally sign, notarise and staple it.
#
#   packaging/macos/make_dmg.sh [path/to/Flarechat.app]
#
# Environment (all optional; unsigned when unset):
#   FLARECHAT_CODESIGN_IDENTITY  "Developer ID Application: …" — also read by flarechat.spec,
#                                which signs every binary with the hardened runtime
#   FLARECHAT_NOTARY_PROFILE     a `xcrun notarytool store-credentials` keychain profile
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
APP="${1:-$ROOT/packaging/out/dist/Flarechat.app}"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/app/flarechat/__init__.py")"
DMG="$ROOT/packaging/out/Flarechat-$VERSION-macos-$(uname -m).dmg"

[ -d "$APP" ] || { echo "no app bundle at $APP (run PyInstaller first)" >&2; exit 1; }
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
cp -R "$APP" "$staging/"
ln -s /Applications "$staging/Applications"
rm -f "$DMG"
hdiutil create -volname "Flarechat $VERSION" -srcfolder "$staging" -fs HFS+ \
    -format UDZO -ov "$DMG"

if [ -n "${FLARECHAT_CODESIGN_IDENTITY:-}" ]; then
    codesign --force --timestamp --sign "$FLARECHAT_CODESIGN_IDENTITY" "$DMG"
fi
if [ -n "${FLARECHAT_NOTARY_PROFILE:-}" ]; then
    xcrun notarytool submit "$DMG" --keychain-profile "$FLARECHAT_NOTARY_PROFILE" --wait
    xcrun stapler staple "$DMG"
fi
echo "$DMG"

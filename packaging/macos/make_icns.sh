#!/usr/bin/env bash
# macOS only: build packaging/out/flarechat.icns from the committed hicolor PNGs with Apple's
# iconutil. Run before PyInstaller; flarechat.spec picks the .icns up for Flarechat.app.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PNG="$ROOT/resources/icons/hicolor"
ICONSET="$ROOT/packaging/out/flarechat.iconset"
rm -rf "$ICONSET"
mkdir -p "$ICONSET"
# iconutil's names: icon_<points>x<points>[@2x].png; @2x holds twice the pixels.
for points in 16 32 128 256 512; do
    cp "$PNG/${points}x${points}/apps/flarechat.png" "$ICONSET/icon_${points}x${points}.png"
    double=$((points * 2))
    if [ -f "$PNG/${double}x${double}/apps/flarechat.png" ]; then
        cp "$PNG/${double}x${double}/apps/flarechat.png" "$ICONSET/icon_${points}x${points}@2x.png"
    fi
done
iconutil --convert icns --output "$ROOT/packaging/out/flarechat.icns" "$ICONSET"
echo "$ROOT/packaging/out/flarechat.icns"

#!/bin/sh
# Removes a per-user Flarechat installed by the .run installer (copied next to the app as
# uninstall.sh). Settings and conversations in the profile directory are kept.
set -eu
APP=flarechat
APP_DIR="$(cd "$(dirname "$0")" && pwd)"
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
BIN_LINK="$HOME/.local/bin/$APP"

if [ -L "$BIN_LINK" ] && [ "$(readlink "$BIN_LINK")" = "$APP_DIR/$APP" ]; then
    rm -f "$BIN_LINK"
fi
rm -f "$DATA_HOME/applications/$APP.desktop"
find "$DATA_HOME/icons/hicolor" -path "*/apps/$APP.*" -type f -delete 2>/dev/null || true
update-desktop-database -q "$DATA_HOME/applications" >/dev/null 2>&1 || true
gtk-update-icon-cache -q -t -f "$DATA_HOME/icons/hicolor" >/dev/null 2>&1 || true
rm -rf "$APP_DIR"
echo "Flarechat removed from $APP_DIR"

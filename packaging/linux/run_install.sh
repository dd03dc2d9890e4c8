#!/bin/sh
# Per-user installer run by the makeself .run archive (from the extracted folder).
#
#   ./flarechat-<version>-<arch>.run                 install for the current user
#   ./flarechat-<version>-<arch>.run -- --prefix DIR  install the app under DIR instead
#
# Installs the app to ${XDG_DATA_HOME:-~/.local/share}/flarechat, a launcher at
# ~/.local/bin/flarechat, a menu entry and hicolor icons; no root needed. To remove it:
# ~/.local/share/flarechat/uninstall.sh. The system libraries the .deb depends on must be
# installed (see packaging/README.md).
set -eu
APP=flarechat
DATA_HOME="${XDG_DATA_HOME:-$HOME/.local/share}"
APP_DIR="$DATA_HOME/$APP"
BIN_DIR="$HOME/.local/bin"
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) APP_DIR="$2"; shift 2 ;;
        *) echo "unknown option: $1" >&2; exit 2 ;;
    esac
done

rm -rf "$APP_DIR.new"
mkdir -p "$(dirname "$APP_DIR")" "$BIN_DIR" "$DATA_HOME/applications" "$DATA_HOME/icons"
cp -R app "$APP_DIR.new"
install -m 0755 uninstall.sh "$APP_DIR.new/uninstall.sh"
rm -rf "$APP_DIR"
mv "$APP_DIR.new" "$APP_DIR"
ln -sfn "$APP_DIR/$APP" "$BIN_DIR/$APP"

# The menu entry runs the app by absolute path: ~/.local/bin is not on every PATH.
sed -e "s|^Exec=$APP|Exec=\"$APP_DIR/$APP\"|" -e "s|^TryExec=.*|TryExec=$APP_DIR/$APP|" \
    "$APP.desktop" >"$DATA_HOME/applications/$APP.desktop"
cp -R icons/hicolor "$DATA_HOME/icons/"  # merges into an existing hicolor tree
update-desktop-database -q "$DATA_HOME/applications" >/dev/null 2>&1 || true
gtk-update-icon-cache -q -t -f "$DATA_HOME/icons/hicolor" >/dev/null 2>&1 || true

echo "Flarechat installed in $APP_DIR"
echo "Run it from the applications menu or as $BIN_DIR/$APP; remove it with $APP_DIR/uninstall.sh"

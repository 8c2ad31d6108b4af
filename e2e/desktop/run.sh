#!/bin/sh
# The desktop client's end-to-end suite (e2e/desktop/README.md): a private X
# server (Xvfb), a private session bus with the accessibility bus
# (dbus-run-session), the real flowd on that bus (suite.py starts it), and
# suite.py driving flowd-gtk through AT-SPI.
#
#   e2e/desktop/run.sh BUILD_BIN_DIR SCREENSHOT_DIR [--only NAME]...
#
# Exit status: 0 passed, 1 failed, 77 skipped: no X server can be started
# here (the line printed says why; scripts/setup-debian.sh installs what it needs).
set -eu

BIN=${1:?usage: run.sh BUILD_BIN_DIR SCREENSHOT_DIR [--only NAME]...}
SHOTS=${2:?usage: run.sh BUILD_BIN_DIR SCREENSHOT_DIR [--only NAME]...}
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)

skip() { echo "make test-desktop: NOT RUN: $*"; exit 77; }
command -v Xvfb >/dev/null 2>&1 || skip "no Xvfb to start an X server (scripts/setup-debian.sh installs xvfb)"
command -v dbus-run-session >/dev/null 2>&1 || skip "no dbus-run-session (scripts/setup-debian.sh installs dbus-daemon)"
command -v import >/dev/null 2>&1 || skip "no ImageMagick import for screenshots (scripts/setup-debian.sh installs imagemagick)"
/usr/bin/python3 -c 'import pyatspi' 2>/dev/null || skip "no python3-pyatspi (scripts/setup-debian.sh installs it)"
for built in flowd-gtk flowd flowctl libSpoolPlugin.so libCommandPlugin.so libWebhookPlugin.so \
        libValidatorsPlugin.so libProvidersPlugin.so; do
    [ -e "$BIN/$built" ] || { echo "run.sh: $BIN/$built is missing: build it first (swift build)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/flowd-gtk-e2e.XXXXXX)
XVFB_PID=
cleanup() {
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null && wait "$XVFB_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# Xvfb picks a free display and writes its number to fd 3. The screen is the
# window's default size: screenshots show the window and nothing else.
Xvfb -displayfd 3 -screen 0 720x780x24 -nolisten tcp -noreset 3>"$WORK/display" 2>"$WORK/xvfb.log" &
XVFB_PID=$!
for _ in $(seq 1 100); do
    [ -s "$WORK/display" ] && break
    kill -0 "$XVFB_PID" 2>/dev/null || break
    sleep 0.1
done
[ -s "$WORK/display" ] || skip "Xvfb could not start an X server: $(tail -n 1 "$WORK/xvfb.log" 2>/dev/null)"

# GTK settings for the suite: GNOME's font (so screenshots show it), and a
# second configuration with animations off for the reduced-motion test.
mkdir -p "$WORK/config/gtk-4.0" "$WORK/reduced/gtk-4.0" "$WORK/runtime" "$WORK/home"
chmod 700 "$WORK/runtime"
printf '[Settings]\ngtk-font-name=Cantarell 11\n' >"$WORK/config/gtk-4.0/settings.ini"
printf '[Settings]\ngtk-font-name=Cantarell 11\ngtk-enable-animations=false\n' >"$WORK/reduced/gtk-4.0/settings.ini"

# The suite's lines go to standard output (fd 3); what the buses and the
# accessibility registry print goes to bus.log, shown when the suite fails.
# GSK_RENDERER=cairo: Xvfb has no GPU, and GTK's GL renderer on Mesa's software
# rasterizer spends whole frames on a spinning spinner, starving GTK's idle work
# (the accessibility registration among it).
mkdir -p "$SHOTS"
status=0
env -u WAYLAND_DISPLAY -u NO_AT_BRIDGE \
    DISPLAY=":$(cat "$WORK/display")" GDK_BACKEND=x11 GSK_RENDERER=cairo GSETTINGS_BACKEND=memory \
    HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/config" XDG_RUNTIME_DIR="$WORK/runtime" \
    FLOWD_GTK_E2E_REDUCED_MOTION_CONFIG="$WORK/reduced" LANG=C.UTF-8 LC_ALL= LC_MESSAGES= \
    dbus-run-session -- sh -c 'exec "$@" >&3' sh /usr/bin/python3 "$HERE/suite.py" --bin "$BIN" --shots "$SHOTS" "$@" \
    3>&1 >"$WORK/bus.log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    echo "run.sh: the suite failed; the bus said:" >&2
    grep -v 'Failed to set fd limit\|Activating service\|Successfully activated\|SpiRegistry' "$WORK/bus.log" | tail -n 20 >&2 || true
fi
exit "$status"

#!/bin/sh
# make demo-gtk: a private D-Bus bus, flowd on it with the example flows and
# the shipped plugins, and flowd-gtk on FLOW (default: consultation). Escape
# in the window goes to the start page, with every example flow; closing the
# window stops flowd and the bus. Needs a display.
# Usage: scripts/demo-gtk.sh BUILD_DIR [FLOW]
set -eu

BUILD_DIR=${1:?usage: scripts/demo-gtk.sh BUILD_DIR [FLOW]}
FLOW=${2:-consultation}
. "$(dirname "$0")/demo-flowd.sh"
demo_start "$BUILD_DIR"
echo "demo: the window on $FLOW; in another terminal, flowctl sees the same sessions:"
echo "  $BUILD_DIR/flowctl --address '$ADDRESS' sessions"
status=0
"$BUILD_DIR/flowd-gtk" --address "$ADDRESS" "$FLOW" || status=$?
echo "demo: flowd-gtk exited with status $status"

#!/bin/sh
# make demo: a private D-Bus bus, flowd on it with the example flows and the
# shipped plugins, and the `consultation` flow driven to "submitted" by flowctl.
# Nothing touches the machine's own buses. Usage: scripts/demo.sh BUILD_DIR
# With DEMO_KEEP=1 (make demo DEMO_KEEP=1) the bus and flowd stay up after the
# drive, for trying flowctl by hand, until Ctrl-C.
set -eu

BUILD_DIR=${1:?usage: scripts/demo.sh BUILD_DIR}
. "$(dirname "$0")/demo-flowd.sh"
demo_start "$BUILD_DIR"
echo

FLOWCTL="$BUILD_DIR/flowctl" "$ROOT/scripts/demo-drive.sh" "$ADDRESS"

echo
echo "demo: the submission as the spool plugin wrote it (secure answers are never written):"
for f in "$STATE"/spool/consultation/*.json; do
    echo "  $f"
    sed 's/^/    /' "$f"
    echo
done

echo
echo "demo: flowd's log:"
sed 's/^/  /' "$DEMO/flowd.log"

if [ -n "${DEMO_KEEP:-}" ]; then
    echo
    echo "demo: flowd keeps serving on the private bus until Ctrl-C. In another terminal:"
    echo "  $BUILD_DIR/flowctl --address '$ADDRESS' run consultation"
    echo "  $BUILD_DIR/flowctl --address '$ADDRESS' sessions"
    wait "$FLOWD_PID" || true
fi

#!/bin/sh
# make demo: a private D-Bus bus, flowd on it with the example flows and the
# shipped plugins, and the `consultation` flow driven to "submitted" by flowctl.
# Nothing touches the machine's own buses. Usage: scripts/demo.sh BUILD_DIR
# With DEMO_KEEP=1 (make demo DEMO_KEEP=1) the bus and flowd stay up after the
# drive, for trying flowctl by hand, until Ctrl-C.
set -eu

BUILD_DIR=${1:?usage: scripts/demo.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEMO=$(mktemp -d /tmp/flowd-demo.XXXXXX)
chmod 0755 "$DEMO"
PLUGINS="$DEMO/plugins"
STATE="$DEMO/state"
mkdir -p "$PLUGINS"

# Runs once, whichever of EXIT, INT and TERM comes first.
cleanup() {
    if [ -n "${FLOWD_PID:-}" ]; then kill "$FLOWD_PID" 2>/dev/null || true; wait "$FLOWD_PID" 2>/dev/null || true; fi
    if [ -n "${BUS_PID:-}" ]; then kill "$BUS_PID" 2>/dev/null || true; fi
    FLOWD_PID= BUS_PID=
    rm -rf "$DEMO"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# The shipped plugins only, under their installed names, owned by us and not
# writable by others (the loader refuses anything else).
for p in Spool Command Webhook Validators Providers; do
    name=$(echo "$p" | tr 'A-Z' 'a-z')
    install -m 0755 "$BUILD_DIR/lib${p}Plugin.so" "$PLUGINS/$name.so"
done

. "$(dirname "$0")/private-bus.sh"
start_private_bus "$DEMO"
echo "demo: private bus at $ADDRESS"

"$BUILD_DIR/flowd" --address "$ADDRESS" --flows-dir "$ROOT/flows" --plugin-dir "$PLUGINS" \
    --state-dir "$STATE" 2> "$DEMO/flowd.log" &
FLOWD_PID=$!
i=0
until "$BUILD_DIR/flowctl" --address "$ADDRESS" flows >/dev/null 2>&1; do
    i=$((i+1))
    if [ $i -gt 200 ] || ! kill -0 "$FLOWD_PID" 2>/dev/null; then
        echo "demo: flowd did not start:" >&2
        cat "$DEMO/flowd.log" >&2
        exit 1
    fi
    sleep 0.05
done
echo "demo: flowd is serving (log: flowd's stderr below at the end)"
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

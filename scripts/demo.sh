#!/bin/sh
# make demo: a private D-Bus bus, flowd on it with the example flows and the
# shipped plugins, and the `consultation` flow driven to "submitted" by flowctl.
# Nothing touches the machine's own buses.
#
#   scripts/demo.sh BUILD_DIR            the build: flows from the source tree
#   scripts/demo.sh --installed TREE     an installed tree (make install PREFIX=/usr
#                                        DESTDIR=TREE, or / for the machine's own):
#                                        its flowd, flowctl, plugins and flows, no toolchain
#
# With DEMO_KEEP=1 (make demo DEMO_KEEP=1) the bus and flowd stay up after the
# drive, for trying flowctl by hand, until Ctrl-C.
set -eu

usage="usage: scripts/demo.sh BUILD_DIR | --installed TREE"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --installed ]; then
    TREE=${2:?$usage}
    TREE=$(cd "$TREE" && pwd)
    FLOWD="$TREE/usr/libexec/flowd"
    FLOWCTL="$TREE/usr/bin/flowctl"
    FLOWS="$TREE/usr/share/flowd/flows"
    for f in "$FLOWD" "$FLOWCTL" "$FLOWS" "$TREE/usr/lib/flowd/plugins"; do
        [ -e "$f" ] || { echo "demo: $f is missing: is $TREE a tree made by 'make install PREFIX=/usr DESTDIR=$TREE'?" >&2; exit 1; }
    done
else
    BUILD_DIR=${1:?$usage}
    FLOWD="$BUILD_DIR/flowd"
    FLOWCTL="$BUILD_DIR/flowctl"
    FLOWS="$ROOT/flows"
fi
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
# writable by others (the loader refuses anything else). An installed tree's
# are used where they are: that their libraries resolve there is the point.
if [ -n "${TREE:-}" ]; then
    PLUGINS="$TREE/usr/lib/flowd/plugins"
else
    for p in Spool Command Webhook Validators Providers; do
        name=$(echo "$p" | tr 'A-Z' 'a-z')
        install -m 0755 "$BUILD_DIR/lib${p}Plugin.so" "$PLUGINS/$name.so"
    done
fi

cat > "$DEMO/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$DEMO/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$DEMO/bus.conf" --nofork --print-address=1 > "$DEMO/address" 2> "$DEMO/bus.log" &
BUS_PID=$!
i=0
while [ ! -s "$DEMO/address" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
ADDRESS=$(head -n1 "$DEMO/address")
echo "demo: private bus at $ADDRESS"

"$FLOWD" --address "$ADDRESS" --flows-dir "$FLOWS" --plugin-dir "$PLUGINS" \
    --state-dir "$STATE" 2> "$DEMO/flowd.log" &
FLOWD_PID=$!
i=0
until "$FLOWCTL" --address "$ADDRESS" flows >/dev/null 2>&1; do
    i=$((i+1))
    if [ $i -gt 200 ] || ! kill -0 "$FLOWD_PID" 2>/dev/null; then
        echo "demo: flowd did not start:" >&2
        cat "$DEMO/flowd.log" >&2
        exit 1
    fi
    sleep 0.05
done
echo "demo: flowd is serving (log: flowd's stderr below at the end)"

# An installed tree must run as shipped: every plugin loaded (their Swift
# runtime found inside the tree) and every flow it installed served.
if [ -n "${TREE:-}" ]; then
    refused=$("$FLOWCTL" --address "$ADDRESS" plugins | awk 'NR > 1 && $4 != "loaded"')
    if [ -n "$refused" ]; then
        echo "demo: the installed tree's plugins were not all loaded:" >&2
        echo "$refused" >&2
        cat "$DEMO/flowd.log" >&2
        exit 1
    fi
    served=$("$FLOWCTL" --address "$ADDRESS" flows -q | wc -l)
    installed=$(find "$FLOWS" -maxdepth 1 -name '*.json' | wc -l)
    if [ "$served" -ne "$installed" ]; then
        echo "demo: flowd serves $served of the installed tree's $installed flows:" >&2
        cat "$DEMO/flowd.log" >&2
        exit 1
    fi
    echo "demo: the installed tree in $TREE runs: every plugin loaded, all $installed flows served"
fi
echo

FLOWCTL="$FLOWCTL" "$ROOT/scripts/demo-drive.sh" "$ADDRESS"

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
    echo "  $FLOWCTL --address '$ADDRESS' run consultation"
    echo "  $FLOWCTL --address '$ADDRESS' sessions"
    wait "$FLOWD_PID" || true
fi

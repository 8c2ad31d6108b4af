# Sourced by scripts/demo.sh and scripts/demo-gtk.sh: a private D-Bus bus
# and flowd on it, with the example flows and the shipped plugins. Nothing
# touches the machine's own buses.
#
#   . scripts/demo-flowd.sh; demo_start BUILD_DIR
#
# Sets DEMO (a temporary directory), ADDRESS (the bus), STATE (flowd's state
# directory), ROOT (the source tree), and removes all of it on exit, Ctrl-C
# or TERM. flowd's log is "$DEMO/flowd.log".

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/private-bus.sh"

# Runs once, whichever of EXIT, INT and TERM comes first.
demo_cleanup() {
    if [ -n "${FLOWD_PID:-}" ]; then kill "$FLOWD_PID" 2>/dev/null || true; wait "$FLOWD_PID" 2>/dev/null || true; fi
    if [ -n "${BUS_PID:-}" ]; then kill "$BUS_PID" 2>/dev/null || true; fi
    FLOWD_PID= BUS_PID=
    [ -z "${DEMO:-}" ] || rm -rf "$DEMO"
}

demo_start() {
    BUILD_DIR=$1
    DEMO=$(mktemp -d /tmp/flowd-demo.XXXXXX)
    chmod 0755 "$DEMO"
    PLUGINS="$DEMO/plugins"
    STATE="$DEMO/state"
    mkdir -p "$PLUGINS"
    trap demo_cleanup EXIT
    trap 'demo_cleanup; exit 130' INT TERM

    # The shipped plugins only, under their installed names, owned by us and not
    # writable by others (the loader refuses anything else).
    for p in Spool Command Webhook Validators Providers; do
        name=$(echo "$p" | tr 'A-Z' 'a-z')
        install -m 0755 "$BUILD_DIR/lib${p}Plugin.so" "$PLUGINS/$name.so"
    done

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
    echo "demo: flowd is serving (log: $DEMO/flowd.log)"
}

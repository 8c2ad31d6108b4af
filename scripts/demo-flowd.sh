# Sourced by scripts/demo.sh and scripts/demo-gtk.sh: a private D-Bus bus
# and flowd on it, with the example flows and the shipped plugins. Nothing
# touches the machine's own buses.
#
#   . scripts/demo-flowd.sh; demo_start BUILD_DIR
#   . scripts/demo-flowd.sh; demo_start_installed TREE
#
# The first runs a build: its flowd and flowctl, the source tree's flows and
# the built plugins. The second runs an installed tree (make install
# PREFIX=/usr DESTDIR=TREE, or / for the machine's own): its flowd, flowctl,
# plugins and flows where they are, no toolchain.
#
# Sets DEMO (a temporary directory), ADDRESS (the bus), STATE (flowd's state
# directory), ROOT (the source tree), FLOWD, FLOWCTL, FLOWS and PLUGINS, and
# removes the temporary directory, flowd and the bus on exit, Ctrl-C or TERM.
# flowd's log is "$DEMO/flowd.log".

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/scripts/private-bus.sh"

# Runs once, whichever of EXIT, INT and TERM comes first.
demo_cleanup() {
    if [ -n "${FLOWD_PID:-}" ]; then kill "$FLOWD_PID" 2>/dev/null || true; wait "$FLOWD_PID" 2>/dev/null || true; fi
    if [ -n "${BUS_PID:-}" ]; then kill "$BUS_PID" 2>/dev/null || true; fi
    FLOWD_PID= BUS_PID=
    [ -z "${DEMO:-}" ] || rm -rf "$DEMO"
}

# The temporary directory and the traps that remove it.
demo_directory() {
    DEMO=$(mktemp -d /tmp/flowd-demo.XXXXXX)
    chmod 0755 "$DEMO"
    STATE="$DEMO/state"
    trap demo_cleanup EXIT
    trap 'demo_cleanup; exit 130' INT TERM
}

demo_start() {
    BUILD_DIR=$1 TREE=
    FLOWD="$BUILD_DIR/flowd"
    FLOWCTL="$BUILD_DIR/flowctl"
    FLOWS="$ROOT/flows"
    demo_directory
    PLUGINS="$DEMO/plugins"
    mkdir -p "$PLUGINS"

    # The shipped plugins only, under their installed names, owned by us and not
    # writable by others (the loader refuses anything else).
    for p in Spool Command Webhook Validators Providers; do
        name=$(echo "$p" | tr 'A-Z' 'a-z')
        install -m 0755 "$BUILD_DIR/lib${p}Plugin.so" "$PLUGINS/$name.so"
    done
    demo_serve
}

demo_start_installed() {
    TREE=$(cd "$1" && pwd)
    FLOWD="$TREE/usr/libexec/flowd"
    FLOWCTL="$TREE/usr/bin/flowctl"
    FLOWS="$TREE/usr/share/flowd/flows"
    # The tree's plugins are used where they are: that their libraries
    # resolve there is the point.
    PLUGINS="$TREE/usr/lib/flowd/plugins"
    for f in "$FLOWD" "$FLOWCTL" "$FLOWS" "$PLUGINS"; do
        [ -e "$f" ] || { echo "demo: $f is missing: is $TREE a tree made by 'make install PREFIX=/usr DESTDIR=$TREE'?" >&2; exit 1; }
    done
    demo_directory
    demo_serve
}

# The bus, and flowd on it with FLOWS and PLUGINS, until flowctl gets an answer.
demo_serve() {
    start_private_bus "$DEMO"
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
    echo "demo: flowd is serving (log: $DEMO/flowd.log)"
}

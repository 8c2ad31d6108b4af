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
. "$(dirname "$0")/demo-flowd.sh"
if [ "${1:-}" = --installed ]; then
    demo_start_installed "${2:?$usage}"
else
    demo_start "${1:?$usage}"
fi

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

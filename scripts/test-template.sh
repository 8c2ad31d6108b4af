#!/bin/bash
# make test-template: the plugin template as a new author gets it. From an
# install tree (make stage: DESTDIR=stage PREFIX=/usr), with the SDK that tree
# installed, not the repository's: copy the template, run its unit tests
# (FlowKitTesting), build it with its Makefile, install it into a plugin
# directory, and check that
#   - its RUNPATH is the tree's flowd library directory and nothing else;
#   - every library it needs resolves there, none from the Swift toolchain;
#   - the tree's flowd-plugin-probe loads and calls it;
#   - flowd from the tree, started with an empty environment (no
#     LD_LIBRARY_PATH), loads it, maps nothing from the toolchain, and a flow
#     that uses its validator gets the validator's message in German and
#     stores its normalized value.
# Usage: scripts/test-template.sh STAGE (the install tree's DESTDIR)
set -euo pipefail

STAGE=$(cd "${1:?usage: scripts/test-template.sh STAGE}" && pwd)
SDK=$STAGE/usr/share/flowd/sdk
LIB=$STAGE/usr/lib/flowd
TOOLCHAIN=$(cd "$(dirname "$(command -v swift)")/.." && pwd)
fail() { echo "test-template: FAILED: $*" >&2; exit 1; }
[ -d "$SDK/template" ] || fail "$SDK/template does not exist: run make stage"

WORK=$(mktemp -d /tmp/flowd-template.XXXXXX)
chmod 0755 "$WORK"
cleanup() {
    if [ -n "${FLOWD_PID:-}" ]; then kill "$FLOWD_PID" 2>/dev/null || true; wait "$FLOWD_PID" 2>/dev/null || true; fi
    if [ -n "${BUS_PID:-}" ]; then kill "$BUS_PID" 2>/dev/null || true; wait "$BUS_PID" 2>/dev/null || true; fi
    FLOWD_PID= BUS_PID=
    rm -rf "$WORK"
}
trap cleanup EXIT

cp -r "$SDK/template" "$WORK/myplugin"
make -C "$WORK/myplugin" FLOWD_SDK="$SDK" test
make -C "$WORK/myplugin" FLOWD_SDK="$SDK" FLOWD_LIBDIR="$LIB" PLUGIN_DIR="$WORK/plugins" install
PLUGIN=$WORK/plugins/myplugin.so
chmod 0755 "$WORK/plugins"

runpath=$(readelf -d "$PLUGIN" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = "$LIB" ] || fail "RUNPATH is '$runpath', expected '$LIB'"
libraries=$(env -u LD_LIBRARY_PATH ldd "$PLUGIN")
if grep -q "not found" <<<"$libraries"; then fail "a library does not resolve: $libraries"; fi
if grep -q "$TOOLCHAIN" <<<"$libraries"; then fail "a library resolves into the toolchain: $libraries"; fi

# The installed probe loads it with flowd's checks and calls it.
probe=$(env -i PATH=/usr/bin:/bin "$STAGE/usr/bin/flowd-plugin-probe" "$PLUGIN" call myplugin.postcode --value 1011 --locale de) ||
    fail "flowd-plugin-probe: $probe"
grep -q "^rejected: Value muss aus fünf Ziffern bestehen" <<<"$probe" || fail "flowd-plugin-probe said: $probe"
# Its normalized value (spaces removed), and its debug line on stderr.
probe=$(env -i PATH=/usr/bin:/bin "$STAGE/usr/bin/flowd-plugin-probe" "$PLUGIN" call myplugin.postcode --value "101 15" 2>&1) ||
    fail "flowd-plugin-probe: $probe"
grep -q '^normalized to: "10115"' <<<"$probe" && grep -q "^log: debug: removed spaces from a postcode" <<<"$probe" ||
    fail "flowd-plugin-probe said: $probe"

mkdir -p "$WORK/flows" "$WORK/state"
cat >"$WORK/flows/address.json" <<'FLOW'
{ "format": 1, "id": "address", "title": "Address",
  "steps": [{"id": "where", "title": "Where",
             "fields": [{"id": "postcode", "type": "text", "label": "Postleitzahl", "required": true,
                         "validators": [{"plugin": "myplugin.postcode"}]}]}] }
FLOW
. "$(dirname "$0")/private-bus.sh"
start_private_bus "$WORK"

env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "$STAGE/usr/libexec/flowd" --address "$ADDRESS" \
    --flows-dir "$WORK/flows" --plugin-dir "$WORK/plugins" --state-dir "$WORK/state" 2>"$WORK/flowd.log" &
FLOWD_PID=$!
flowctl() { env -i PATH=/usr/bin:/bin LANG=C.UTF-8 "$STAGE/usr/bin/flowctl" --address "$ADDRESS" "$@"; }
i=0
until flowctl flows -q >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 400 ] || ! kill -0 "$FLOWD_PID" 2>/dev/null; then fail "flowd did not start: $(cat "$WORK/flowd.log")"; fi
    sleep 0.05
done

plugins=$(flowctl plugins --json)
grep -q '"name": *"myplugin"' <<<"$plugins" && grep -q '"status": *"loaded"' <<<"$plugins" ||
    fail "flowd did not load the plugin: $plugins; flowd's log: $(cat "$WORK/flowd.log")"
if grep -q "$TOOLCHAIN" "/proc/$FLOWD_PID/maps"; then
    fail "flowd mapped files from the toolchain: $(grep "$TOOLCHAIN" "/proc/$FLOWD_PID/maps" | head -3)"
fi
session=$(flowctl start address --locale de)
errors=$(flowctl set "$session" postcode=1011 2>&1 || true)
grep -q "Postleitzahl muss aus fünf Ziffern bestehen" <<<"$errors" || fail "the validator's message is missing: $errors"
flowctl set "$session" postcode="101 15" >/dev/null || fail "a good postcode was refused"
answers=$(flowctl answers "$session")
grep -q "10115" <<<"$answers" && ! grep -q "101 15" <<<"$answers" || fail "the normalized postcode was not stored: $answers"
echo "test-template: the template built from the installed SDK, passed its tests, and flowd loaded and called it (RUNPATH $runpath)"

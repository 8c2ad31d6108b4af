#!/bin/bash
# Builds probe.swift with the toolchain, lays it and the Swift runtime it needs
# over the staged tree, and runs the smoke checks with the probe as flowd.service's
# ExecStart= under every other setting of the shipped unit. It fails when the
# sandbox stops something a Swift daemon needs (see probe.swift for the list).
#
#   make stage && e2e/system/probe/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
SWIFTC=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
L=$(mktemp -d /var/tmp/flowd-probe.XXXXXX)
trap 'rm -rf "$L"' EXIT
mkdir -p "$L/usr/lib/flowd" "$L/usr/lib/systemd/system/flowd.service.d"
"$SWIFTC" -O -parse-as-library "$HERE/probe.swift" -o "$L/usr/lib/flowd/flowd-probe"
# The probe's runtime closure (more of Foundation than flowd may need today).
for lib in $(env -u LD_LIBRARY_PATH ldd "$L/usr/lib/flowd/flowd-probe" | awk '$3 ~ /\/lib\/swift\// { print $3 }'); do
    [ -e "$SRC/stage/usr/lib/flowd/$(basename "$lib")" ] || install -m 0755 "$lib" "$L/usr/lib/flowd/"
done
patchelf --set-rpath '$ORIGIN' "$L/usr/lib/flowd/flowd-probe"
chmod -R go-w "$L"
cat >"$L/usr/lib/systemd/system/flowd.service.d/60-probe.conf" <<'UNIT'
# Sorts after the smoke check's 50-smoke.conf: the probe replaces the placeholder.
[Service]
ExecStart=
ExecStart=/usr/lib/flowd/flowd-probe /usr/lib/flowd/plugins/spool.so /usr/lib/flowd/plugins/command.so /usr/lib/flowd/plugins/webhook.so /usr/lib/flowd/plugins/validators.so /usr/lib/flowd/plugins/providers.so
UNIT
"$SRC/e2e/system/run.sh" --smoke --fake "$L" "$@"

#!/bin/bash
# Builds flowd's Debian packages from a source tree into an output folder, with
# dpkg-buildpackage -us -uc -b -d (the Swift toolchain is not a Debian package,
# so -d: dpkg cannot see it), then runs lintian on them. Called by `make deb`;
# the package test calls it for the previous version too.
#
#   scripts/build-deb.sh [--no-lintian] SRC-DIR OUT-DIR
#
# The desktop client's package (flowd-gtk) is built only when SRC-DIR has the
# client (a flowd-gtk product in Package.swift); otherwise the build profile
# pkg.flowd.nogtk leaves it out. OUT-DIR is emptied first; it receives the
# .deb files, the .changes and the .buildinfo.
set -euo pipefail

lint=1
if [ "${1:-}" = --no-lintian ]; then lint=0; shift; fi
src=$(cd "${1:?usage: scripts/build-deb.sh [--no-lintian] SRC-DIR OUT-DIR}" && pwd)
out=${2:?usage: scripts/build-deb.sh [--no-lintian] SRC-DIR OUT-DIR}

die() { echo "build-deb: error: $*" >&2; exit 1; }
command -v dpkg-buildpackage >/dev/null || die "dpkg-buildpackage not found (Debian package dpkg-dev; run scripts/setup-debian.sh)"
command -v dh >/dev/null || die "dh not found (Debian package debhelper; run scripts/setup-debian.sh)"
[ -f "$src/debian/control" ] || die "$src/debian/control: not a source tree with debian/"

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
profiles=()
grep -q '"flowd-gtk"' "$src/Package.swift" || profiles=(-Ppkg.flowd.nogtk)
base="$out/flowd_${version#*:}_$arch"

cd "$src"
FLOWD_DEB_DIR="$out" dpkg-buildpackage -us -uc -b -d "${profiles[@]}" \
    --changes-file="$base.changes" --changes-option=-u"$out" \
    --buildinfo-file="$base.buildinfo" --buildinfo-option=-u"$out"
echo "build-deb: built in $out:"
ls -1 "$out" | sed 's/^/  /'
if [ "$lint" -eq 1 ]; then
    command -v lintian >/dev/null || die "lintian not found (run scripts/setup-debian.sh)"
    # The whole upload: every binary package and the .buildinfo. Errors and
    # warnings fail; overrides are in debian/*.lintian-overrides with their reasons.
    lintian --fail-on error,warning "$base.changes"
    echo "build-deb: lintian: no errors or warnings"
fi

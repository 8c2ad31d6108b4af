#!/bin/bash
# The package test: flowd's Debian packages (make deb) in a clean Debian 12 root made by
# mmdebstrap from the package mirror apt uses here, booted with systemd-nspawn, with no Swift
# toolchain inside. checks.sh runs inside as a unit: install, D-Bus activation, flows driven by
# flowctl as a user and as root, remove and purge, then an upgrade from the previous version
# with its sessions kept, and remove and purge again. See README.md.
#
#   e2e/package/run.sh [--debs DIR] [--keep] [--timeout SECONDS]
#
#   --debs      where `make deb` put the packages (default: ./build-deb)
#   --keep      keep the container root for inspection (its path is printed)
#
# Needs root, mmdebstrap, systemd-nspawn and the package mirror; without them it prints one
# line saying what is missing and exits 0 (SKIPPED). Caches, in .cache/package-test/: the
# clean root as a tarball (rebuilt after 7 days), and the previous version's packages with its
# build tree (rebuilt when the packaging files change; the build itself is incremental).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
DEBS=$SRC/build-deb
KEEP=0
TIMEOUT=600
CACHE=${FLOWD_PACKAGE_TEST_CACHE:-$SRC/.cache/package-test}
SUITE=bookworm
INCLUDE=systemd,systemd-sysv,dbus,ca-certificates
# The previous version: the last state of main before flowd had a Debian package, packaged
# with the packaging files as they were first committed (the commit that added debian/rules:
# debian/, scripts/install.sh, etc/flowd.conf) at a version below any of this tree's. Both are
# fixed, as a released package is: the packages are built once and cached. Its flowd
# --version says 0.1.0.
PREV_COMMIT=fd8b85442c0fae2998f7c5341bb0733655bba6fe
PREV_VERSION=0.1.0-0
PACKAGING_FILES="debian scripts/install.sh etc/flowd.conf"

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
while [ $# -gt 0 ]; do
    case "$1" in
        --debs) DEBS=${2:?--debs needs a directory}; shift ;;
        --keep) KEEP=1 ;;
        --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift ;;
        -h | --help) usage ;;
        *) echo "package-test: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done

say() { echo "package-test: $*"; }
die() { echo "package-test: error: $*" >&2; exit 1; }
skip() { echo "package-test: SKIPPED: $*"; exit 0; }
# shellcheck source=../container.sh
. "$HERE/../container.sh"

DEBS=$(cd "$DEBS" 2>/dev/null && pwd) || die "no folder $DEBS: run 'make deb' first"
new_deb=$(ls "$DEBS"/flowd_*.deb 2>/dev/null | head -n 1)
[ -n "$new_deb" ] || die "no flowd_*.deb in $DEBS: run 'make deb' first"

[ "$(id -u)" -eq 0 ] || skip "the package test boots a container and needs root; run: sudo make test-package"
command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (run scripts/setup-debian.sh)"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn is not installed (run scripts/setup-debian.sh)"

# The mirror apt uses here, and the apt options it needs (a snapshot mirror's Release files
# may be past their Valid-Until): the clean root gets the same.
SOURCES=/etc/apt/sources.list.d/debian.sources
[ -f "$SOURCES" ] || SOURCES=/etc/apt/sources.list
mirror=$(sed -n -E 's/^URIs: *([^ ]+).*/\1/p; s/^deb +(\[[^]]*\] +)?([^ ]+) +'"$SUITE"' .*/\2/p' "$SOURCES" | head -n 1)
[ -n "$mirror" ] || skip "no Debian mirror for $SUITE found in $SOURCES"
probe=$(mktemp)
if ! timeout 30 /usr/lib/apt/apt-helper download-file "${mirror%/}/dists/$SUITE/Release" "$probe" >/dev/null 2>&1; then
    rm -f "$probe"
    skip "the package mirror $mirror is not reachable (no network?)"
fi
rm -f "$probe"
aptopts=()
while read -r line; do
    aptopts+=(--aptopt="$line")
done < <(apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' || true)

mkdir -p "$CACHE"
t0=$(date +%s)

# --- the clean root, cached as a tarball ---------------------------------------------------------
key=$( { echo "$SUITE $INCLUDE"; cat "$SOURCES"; printf '%s\n' "${aptopts[@]}"; } | sha256sum | cut -c1-12)
tarball=$CACHE/root-$SUITE-$key.tar
if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mtime +7)" ]; then
    say "the cached root is older than 7 days: making it again"
    rm -f "$tarball"
fi
if [ ! -f "$tarball" ]; then
    rm -rf "$CACHE"/root-*
    say "making a clean $SUITE root (mmdebstrap --variant=minbase --include=$INCLUDE, mirror $mirror)"
    # mmdebstrap writes a tarball when the target's name ends in .tar.
    mmdebstrap --quiet --variant=minbase --include="$INCLUDE" "${aptopts[@]}" "$SUITE" "${tarball%.tar}.partial.tar" "$SOURCES" ||
        die "mmdebstrap failed"
    mv "${tarball%.tar}.partial.tar" "$tarball"
fi

# --- the previous version's packages --------------------------------------------------------------
packaging_commit=$(git -C "$SRC" log --diff-filter=A --format=%H -- debian/rules | tail -n 1)
[ -n "$packaging_commit" ] || die "no commit adds debian/rules in this clone; fetch main's history"
prev_out=$CACHE/prev-${PREV_COMMIT:0:12}-${packaging_commit:0:12}
if ! ls "$prev_out"/flowd_"$PREV_VERSION"_*.deb >/dev/null 2>&1; then
    prev_src=$CACHE/prev-src
    git -C "$SRC" cat-file -e "$PREV_COMMIT^{commit}" 2>/dev/null ||
        die "commit $PREV_COMMIT (the previous version) is not in this clone; fetch main's history"
    if [ "$(cat "$prev_src/.flowd-commit" 2>/dev/null)" != "$PREV_COMMIT" ]; then
        say "unpacking the previous version ($PREV_COMMIT) into $prev_src"
        rm -rf "$prev_src"
        mkdir -p "$prev_src"
        git -C "$SRC" archive "$PREV_COMMIT" | tar -x -C "$prev_src"
        echo "$PREV_COMMIT" >"$prev_src/.flowd-commit"
    fi
    rm -rf "$prev_src/debian"
    # shellcheck disable=SC2086
    git -C "$SRC" archive "$packaging_commit" $PACKAGING_FILES | tar -x -C "$prev_src"
    cat >"$prev_src/debian/changelog" <<EOT
flowd ($PREV_VERSION) $SUITE; urgency=medium

  * The last state of main before flowd had a Debian package (commit
    $PREV_COMMIT), packaged with the packaging files of commit
    $packaging_commit, for the upgrade test.

 -- flowd package test <root@localhost>  $(date -R)
EOT
    say "building the previous version's packages ($PREV_VERSION) in $prev_src"
    rm -rf "$CACHE"/prev-"${PREV_COMMIT:0:12}"-*
    "$SRC/scripts/build-deb.sh" --no-lintian "$prev_src" "$prev_out" >"$CACHE/prev-build.log" 2>&1 ||
        { tail -n 40 "$CACHE/prev-build.log"; die "building the previous version failed (log: $CACHE/prev-build.log)"; }
fi
prev_deb=$(ls "$prev_out"/flowd_"$PREV_VERSION"_*.deb)
t1=$(date +%s)

# --- the container root --------------------------------------------------------------------------
R=$(mktemp -d /var/tmp/flowd-package-test.XXXXXX)
chmod 0755 "$R"
cleanup() {
    if [ "$KEEP" -eq 1 ]; then say "container root kept at $R"; else rm -rf --one-file-system "$R"; fi
}
trap cleanup EXIT
tar -C "$R" -xf "$tarball"
mkdir -p "$R/flowd-e2e" "$R/root/debs/new" "$R/root/debs/prev"
chmod 0700 "$R/root"
# What the person following the README has: the packages make deb built (not the debug symbols).
for f in "$DEBS"/*.deb; do
    case "$f" in *-dbgsym_*) ;; *) cp "$f" "$R/root/debs/new/" ;; esac
done
cp "$prev_deb" "$R/root/debs/prev/"
for u in console-getty.service getty.target apt-daily.timer apt-daily-upgrade.timer \
    dpkg-db-backup.timer e2scrub_all.timer fstrim.timer; do
    ln -sf /dev/null "$R/etc/systemd/system/$u"
done
install_test_unit "$R" flowd-package-test "flowd package checks" /flowd-e2e/package/checks.sh "$TIMEOUT"

# --- boot: the host's network (apt fetches the dependencies), nothing else of the host ------------
say "booting a clean $SUITE container with $(basename "$new_deb") and the previous $(basename "$prev_deb")"
result=0
boot_and_report "$R" "$TIMEOUT" --bind-ro="$SRC/e2e:/flowd-e2e" --resolv-conf=copy-host || result=1
say "root and previous version ready in $((t1 - t0))s; container ran ${BOOT_SECONDS}s; result: $BOOT_STATUS"
exit "$result"

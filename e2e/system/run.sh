#!/bin/bash
# The end-to-end suite under a real systemd: boots a container (systemd-nspawn)
# whose /usr is the host's with the installed flowd tree laid over it, runs
# e2e/system/checks.sh inside as a unit, powers off, and reports.
#
#   e2e/system/run.sh [--full|--smoke] [--stage DIR] [--keep] [--timeout SECONDS]
#
#   --full      (default) every check in README.md
#   --smoke     the harness only: boot, install steps, unit verify, bus policy,
#               flowd --version under its hardened unit, the journal
#   --stage     the `make stage` tree to test (default: ./stage)
#   --keep      keep the container root for inspection (its path is printed)
#
# Needs root, systemd-nspawn (Debian: systemd-container) and cgroups; no
# network. The container has no Swift toolchain: /opt is empty inside.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
MODE=full
STAGE=$SRC/stage
KEEP=0
TIMEOUT=300

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) MODE=smoke ;;
        --full) MODE=full ;;
        --stage) STAGE=${2:?--stage needs a directory}; shift ;;
        --keep) KEEP=1 ;;
        --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift ;;
        -h | --help) usage ;;
        *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done

say() { echo "system-test: $*"; }
die() { echo "system-test: error: $*" >&2; exit 1; }
# shellcheck source=../container.sh
. "$HERE/../container.sh"

[ "$(id -u)" -eq 0 ] || die "must run as root (systemd-nspawn boots a container); try: sudo $0"
command -v systemd-nspawn >/dev/null || die "systemd-nspawn not found (Debian package systemd-container; run scripts/setup-debian.sh)"
STAGE=$(cd "$STAGE" 2>/dev/null && pwd) || die "no stage directory: run 'make stage' first"
[ -x "$STAGE/usr/libexec/flowd" ] || die "$STAGE/usr/libexec/flowd missing: run 'make stage' first"
# --- the container root ----------------------------------------------------------------------
R=$(mktemp -d /var/tmp/flowd-system-test.XXXXXX)
chmod 0755 "$R"   # mktemp makes it 0700: no user but root could reach anything inside
cleanup() {
    if [ "$KEEP" -eq 1 ]; then say "container root kept at $R"; else rm -rf --one-file-system "$R"; fi
}
trap cleanup EXIT

mkdir -p "$R"/{usr,etc,var,tmp,root,run,proc,sys,dev,opt,flowd-e2e}
ln -s usr/bin "$R/bin"; ln -s usr/lib "$R/lib"; ln -s usr/sbin "$R/sbin"
[ -d /usr/lib64 ] && ln -s usr/lib64 "$R/lib64"
cp -a /etc/. "$R/etc/"
cp --remove-destination /usr/lib/os-release "$R/etc/os-release"
rm -f "$R/etc/machine-id"
systemd-machine-id-setup --root="$R" >/dev/null 2>&1
# The host's own flowd configuration, if any, must not leak in.
rm -rf "$R/etc/flowd" "$R/etc/systemd/system/flowd.service" "$R/etc/systemd/system/flowd.service.d" \
    "$R/etc/systemd/user/flowd.service" "$R/etc/systemd/user/flowd.service.d" "$R/etc/dbus-1/system.d/org.flowd.Flow1.conf"
# Only what the suite needs starts: nothing the host enabled, no gettys, no timers.
find "$R/etc/systemd/system" -mindepth 2 -path '*.wants/*' -delete
find "$R/etc/systemd/system" -mindepth 2 -path '*.requires/*' -delete
for u in console-getty.service getty.target systemd-timesyncd.service systemd-networkd.service \
    systemd-resolved.service postgresql.service cron.service ssh.service apt-daily.timer \
    apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer; do
    ln -sf /dev/null "$R/etc/systemd/system/$u"
done
chmod 0700 "$R/root"
mkdir -p "$R/root/results"
# The crash-loop check's plugin: the unit tests' fixture whose library
# constructor faults inside dlopen, built here (the container has no compiler).
mkdir -p "$R/flowd-fixtures"
CC=${CC:-$(command -v cc || command -v clang || echo /opt/swift/usr/bin/clang)}
"$CC" -shared -fPIC -O0 -o "$R/flowd-fixtures/crash-in-constructor.so" \
    "$SRC/Tests/Fixtures/Plugins/CrashInConstructor/constructor.c" || die "cannot build the crashing plugin fixture with $CC"
chmod 0644 "$R/flowd-fixtures/crash-in-constructor.so"

# The suite itself runs as a unit; it powers the container off when it ends, either way.
install_test_unit "$R" flowd-system-test "flowd end-to-end checks" "/flowd-e2e/system/checks.sh --$MODE" "$TIMEOUT"

# --- boot and report -------------------------------------------------------------------------
layers="/usr:$STAGE/usr"
say "booting a container ($MODE checks; stage $STAGE)"
result=0
boot_and_report "$R" "$TIMEOUT" --overlay-ro="$layers:/usr" --bind-ro="$HERE/..:/flowd-e2e" --private-network ||
    result=1
say "container ran ${BOOT_SECONDS}s (boot, $MODE checks, poweroff); result: $BOOT_STATUS"
exit "$result"

#!/bin/sh
# Installs every Debian package flowd needs to build, test, benchmark and run its
# demo. Safe to run again: apt-get skips what is already there.
# Usage (as root, or with sudo): scripts/setup-debian.sh
set -eu

PACKAGES="
  pkg-config
  libdbus-1-dev
  libsystemd-dev
  libsqlite3-dev
  dbus-daemon
  dbus-bin
  dbus-user-session
  libglib2.0-bin
  systemd
  systemd-container
  util-linux
  patchelf
  make
  libcurl4
  valgrind
  sqlite3
  python3-dbus
"

if [ "$(id -u)" -ne 0 ]; then
    exec sudo "$0" "$@"
fi

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
fi

if ! command -v swift >/dev/null 2>&1 && [ ! -x /opt/swift/usr/bin/swift ]; then
    echo "setup: no Swift toolchain found (expected swift on PATH or /opt/swift); flowd needs Swift 6.x" >&2
    exit 1
fi
echo "setup: all build and test dependencies are present"

#!/bin/sh
# Installs every Debian package flowd needs to build, test, benchmark and run its
# demo, the desktop client's build and headless test (GTK 4, libadwaita, Xvfb,
# AT-SPI, and fonts for the screenshots, Chinese, Japanese and Korean included),
# and to build flowd's Debian packages and test them in a clean Debian
# 12 root (dpkg-dev, debhelper, fakeroot, lintian, mmdebstrap). Safe to run
# again: apt-get skips what is already there.
# Usage (as root, or with sudo): scripts/setup-debian.sh
set -eu

# libglib2.0-dev-bin (gdbus-codegen), libglib2.0-dev and gcc: the test that
# builds a C client from the shipped D-Bus XML and runs it against flowd.
PACKAGES="
  pkg-config
  libdbus-1-dev
  libsystemd-dev
  libsqlite3-dev
  dbus-daemon
  dbus-bin
  dbus-user-session
  libglib2.0-bin
  libglib2.0-dev-bin
  libglib2.0-dev
  gcc
  systemd
  systemd-container
  util-linux
  patchelf
  make
  libcurl4
  valgrind
  binutils
  sqlite3
  python3-dbus
  libgtk-4-dev
  libadwaita-1-dev
  xvfb
  xauth
  at-spi2-core
  python3
  python3-pyatspi
  gir1.2-atspi-2.0
  imagemagick
  fonts-cantarell
  fonts-dejavu-core
  fonts-wqy-microhei
  adwaita-icon-theme
  librsvg2-common
  desktop-file-utils
  appstream
  dpkg-dev
  debhelper
  fakeroot
  lintian
  mmdebstrap
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

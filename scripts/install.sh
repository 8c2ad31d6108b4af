#!/bin/bash
# Installs a release build of flowd into $DESTDIR$PREFIX: the layout of
# the install table in docs/admin.md. Called by `make install`;
# run it directly only with the same variables. With --uninstall (`make
# uninstall`) it removes what it installed instead, and keeps what holds an
# administrator's data (see uninstall below).
#
#   BUILD_DIR   the SwiftPM release bin directory (swift build -c release --show-bin-path)
#   DESTDIR     staging root, empty for a real install
#   PREFIX      /usr for a package, /usr/local by default
#
# What it guarantees, and checks before it returns:
#   - the Swift runtime libraries the binaries and plugins need (found
#     transitively from their DT_NEEDED entries in the toolchain's runtime
#     directory) are copied to $PREFIX/lib/flowd, so no toolchain is needed to run;
#   - every library search path points only inside the installed tree, relative
#     to the file, so the tree runs where it is, staged or installed: executables
#     $ORIGIN/../lib/flowd, libraries $ORIGIN, and the shipped plugins none. The
#     daemon dlopens plugins through /proc/self/fd/N, where glibc would expand a
#     plugin's $ORIGIN to /proc/self/fd; so the daemon's own search path is a
#     DT_RPATH, which glibc also searches for the libraries of a plugin that has
#     no RUNPATH of its own (a RUNPATH would be searched only for the file itself);
#   - nothing refers to the toolchain or the build tree, and every library resolves;
#   - $PREFIX/lib/flowd/plugins holds the shipped plugins and nothing else.
set -euo pipefail
# Directories created on the way (install -d, install -D) must be world-readable whatever the
# caller's umask: dbus-daemon and the flowd user read these files.
umask 022

die() { echo "install: error: $*" >&2; exit 1; }
warn() { echo "install: warning: $*" >&2; }

SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
MODE=install
[ "${1:-}" = --uninstall ] && MODE=uninstall
[ "$MODE" = uninstall ] || BUILD_DIR=${BUILD_DIR:?BUILD_DIR must be the SwiftPM release bin directory}
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/bin}
LIBEXECDIR=${LIBEXECDIR:-$PREFIX/libexec}
LIBDIR=${LIBDIR:-$PREFIX/lib}
DATADIR=${DATADIR:-$PREFIX/share}
MANDIR=${MANDIR:-$DATADIR/man}
DOCDIR=${DOCDIR:-$DATADIR/doc/flowd}
SYSTEMD_SYSTEM_UNIT_DIR=${SYSTEMD_SYSTEM_UNIT_DIR:-$PREFIX/lib/systemd/system}
SYSTEMD_USER_UNIT_DIR=${SYSTEMD_USER_UNIT_DIR:-$PREFIX/lib/systemd/user}
SYSUSERS_DIR=${SYSUSERS_DIR:-$PREFIX/lib/sysusers.d}
JOURNAL_CATALOG_DIR=${JOURNAL_CATALOG_DIR:-$PREFIX/lib/systemd/catalog}
DBUS_DIR=${DBUS_DIR:-$DATADIR/dbus-1}
POLKIT_ACTIONS_DIR=${POLKIT_ACTIONS_DIR:-$DATADIR/polkit-1/actions}
BASH_COMPLETION_DIR=${BASH_COMPLETION_DIR:-$DATADIR/bash-completion/completions}
# Where flowd looks for flowd.conf: /etc for PREFIX=/usr, $PREFIX/etc otherwise (InstallLayout).
case "$PREFIX" in /usr | /) DEFAULT_SYSCONFDIR=/etc ;; *) DEFAULT_SYSCONFDIR=$PREFIX/etc ;; esac
SYSCONFDIR=${SYSCONFDIR:-$DEFAULT_SYSCONFDIR}

FLOWD_LIB=$LIBDIR/flowd              # as seen at run time
D_FLOWD_LIB=$DESTDIR$FLOWD_LIB       # as written now

# Build products → installed plugin names. The fixture plugins are never installed.
PLUGINS="SpoolPlugin:spool CommandPlugin:command WebhookPlugin:webhook ValidatorsPlugin:validators ProvidersPlugin:providers"

case "$PREFIX" in /*) ;; *) die "PREFIX must be absolute (got '$PREFIX')" ;; esac

# Substitutes the install paths into a text file that names them for PREFIX=/usr.
substitute() {
    sed -e "s|/usr/libexec/flowd|$LIBEXECDIR/flowd|g" \
        -e "s|/usr/lib/flowd|$FLOWD_LIB|g" "$1"
}

# --- uninstall: every file the install below writes, and the directories only it made -----------
# Kept: /etc/flowd/flowd.conf if it differs from the sample (the administrator's edits), everything
# else in /etc/flowd (flows, drop-ins), the state directory /var/lib/flowd (every session), the
# flowd user, and systemd drop-ins in /etc/systemd. Stop and disable flowd first.
uninstall() {
    local f sample conf=$DESTDIR$SYSCONFDIR/flowd/flowd.conf
    for f in "$LIBEXECDIR/flowd" "$BINDIR/flowctl" "$BINDIR/flowd-gtk" \
        "$DATADIR/applications/org.flowd.Flows.desktop" "$DATADIR/metainfo/org.flowd.Flows.metainfo.xml" \
        "$DATADIR/icons/hicolor/scalable/apps/org.flowd.Flows.svg" \
        "$DBUS_DIR/system.d/org.flowd.Flow1.conf" "$DBUS_DIR/system-services/org.flowd.Flow1.service" \
        "$DBUS_DIR/services/org.flowd.Flow1.service" "$DBUS_DIR/interfaces/org.flowd.Flow1.Manager.xml" \
        "$DBUS_DIR/interfaces/org.flowd.Flow1.Session.xml" "$SYSTEMD_SYSTEM_UNIT_DIR/flowd.service" \
        "$SYSTEMD_USER_UNIT_DIR/flowd.service" "$SYSUSERS_DIR/flowd.conf" "$JOURNAL_CATALOG_DIR/flowd.catalog" \
        "$MANDIR/man1/flowctl.1" "$MANDIR/man8/flowd.8" "$MANDIR/man1/flowd-gtk.1" "$BASH_COMPLETION_DIR/flowctl"; do
        rm -f "$DESTDIR$f"
    done
    rm -rf "$D_FLOWD_LIB" "$DESTDIR$DATADIR/flowd" "$DESTDIR$DOCDIR"
    if [ -f "$conf" ]; then
        sample=$(sed -e "s|/etc/flowd|$SYSCONFDIR/flowd|g" -e "s|/usr/share/flowd|$DATADIR/flowd|g" "$SRCDIR/etc/flowd.conf" |
            substitute /dev/stdin)
        if [ "$(cat "$conf")" = "$sample" ]; then
            rm -f "$conf"
            rmdir "$DESTDIR$SYSCONFDIR/flowd" 2>/dev/null || true
        else
            warn "$conf differs from the sample: kept"
        fi
    fi
    echo "install: flowd removed from ${DESTDIR:-/}${DESTDIR:+ }(PREFIX=$PREFIX); kept: the state directory, your files in $SYSCONFDIR/flowd, the flowd user"
}
if [ "$MODE" = uninstall ]; then uninstall; exit 0; fi
[ -d "$BUILD_DIR" ] || die "no build directory $BUILD_DIR: run 'make' first"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
for f in flowd flowctl flowd-gtk flowd-plugin-probe flowd-plugin-host libFlowKit.so; do
    [ -f "$BUILD_DIR/$f" ] || die "$BUILD_DIR/$f is missing: run 'make' first"
done
for p in $PLUGINS; do
    [ -f "$BUILD_DIR/lib${p%%:*}.so" ] || die "$BUILD_DIR/lib${p%%:*}.so is missing: run 'make' first"
done

# The toolchain's runtime directory: the RUNPATH entry of the built daemon that holds libswiftCore.so.
runpath_of() { patchelf --print-rpath "$1"; }
SWIFT_RUNTIME_DIR=${SWIFT_RUNTIME_DIR:-}
if [ -z "$SWIFT_RUNTIME_DIR" ]; then
    IFS=: read -r -a entries <<<"$(runpath_of "$BUILD_DIR/flowd")"
    for e in "${entries[@]}"; do
        if [ -f "$e/libswiftCore.so" ]; then SWIFT_RUNTIME_DIR=$e; break; fi
    done
fi
[ -n "$SWIFT_RUNTIME_DIR" ] && [ -f "$SWIFT_RUNTIME_DIR/libswiftCore.so" ] ||
    die "cannot find the Swift runtime libraries (set SWIFT_RUNTIME_DIR)"

install_text() { # SRC DEST-DIR [NAME]: a 0644 file with paths substituted
    local name=${3:-$(basename "$1")}
    install -d -m 0755 "$DESTDIR$2"
    substitute "$1" >"$DESTDIR$2/$name.tmp"
    chmod 0644 "$DESTDIR$2/$name.tmp"
    mv -f "$DESTDIR$2/$name.tmp" "$DESTDIR$2/$name"
}
install_optional() { # SRC DEST-DIR NAME: skipped with a warning while SRC does not exist yet
    if [ -f "$SRCDIR/$1" ]; then
        install -D -m 0644 "$SRCDIR/$1" "$DESTDIR$2/$3"
    else
        warn "$1 does not exist yet; not installed"
    fi
}

# --- binaries, libFlowKit, plugins -----------------------------------------------------------
install -d -m 0755 "$DESTDIR$BINDIR" "$DESTDIR$LIBEXECDIR" "$D_FLOWD_LIB" "$D_FLOWD_LIB/plugins"
install -m 0755 "$BUILD_DIR/flowd" "$DESTDIR$LIBEXECDIR/flowd"
install -m 0755 "$BUILD_DIR/flowctl" "$DESTDIR$BINDIR/flowctl"
install -m 0755 "$BUILD_DIR/flowd-plugin-probe" "$DESTDIR$BINDIR/flowd-plugin-probe"
install -m 0755 "$BUILD_DIR/flowd-gtk" "$DESTDIR$BINDIR/flowd-gtk"
install -m 0755 "$BUILD_DIR/libFlowKit.so" "$D_FLOWD_LIB/libFlowKit.so"
# The process an isolated plugin runs in: beside the plugins, where the
# unit's ExecPaths= lets flowd execute it.
install -m 0755 "$BUILD_DIR/flowd-plugin-host" "$D_FLOWD_LIB/flowd-plugin-host"
shipped=""
for p in $PLUGINS; do
    install -m 0755 "$BUILD_DIR/lib${p%%:*}.so" "$D_FLOWD_LIB/plugins/${p#*:}.so"
    shipped="$shipped ${p#*:}.so"
done

# --- the Swift runtime, transitively -----------------------------------------------------------
needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
queue=("$DESTDIR$LIBEXECDIR/flowd" "$DESTDIR$BINDIR/flowctl" "$DESTDIR$BINDIR/flowd-plugin-probe" "$DESTDIR$BINDIR/flowd-gtk" "$D_FLOWD_LIB/flowd-plugin-host" "$D_FLOWD_LIB/libFlowKit.so")
for p in $shipped; do queue+=("$D_FLOWD_LIB/plugins/$p"); done
runtime_libs=""
system_libs=""
while [ ${#queue[@]} -gt 0 ]; do
    elf=${queue[0]}; queue=("${queue[@]:1}")
    while read -r lib; do
        [ -n "$lib" ] || continue
        [ "$lib" = libFlowKit.so ] && continue
        if [ -f "$SWIFT_RUNTIME_DIR/$lib" ]; then
            if [[ " $runtime_libs " != *" $lib "* ]]; then
                install -m 0755 "$SWIFT_RUNTIME_DIR/$lib" "$D_FLOWD_LIB/$lib"
                runtime_libs="$runtime_libs $lib"
                queue+=("$D_FLOWD_LIB/$lib")
            fi
        elif [[ " $system_libs " != *" $lib "* ]]; then
            system_libs="$system_libs $lib"
        fi
    done < <(needed_of "$elf")
done

# --- RUNPATHs ------------------------------------------------------------------------------------
# The daemon's is a DT_RPATH: it serves the plugins' libraries too (see the top).
patchelf --force-rpath --set-rpath '$ORIGIN/../lib/flowd' "$DESTDIR$LIBEXECDIR/flowd"
patchelf --set-rpath '$ORIGIN/../lib/flowd' "$DESTDIR$BINDIR/flowctl"
patchelf --set-rpath '$ORIGIN/../lib/flowd' "$DESTDIR$BINDIR/flowd-plugin-probe"
patchelf --set-rpath '$ORIGIN/../lib/flowd' "$DESTDIR$BINDIR/flowd-gtk"
patchelf --set-rpath '$ORIGIN' "$D_FLOWD_LIB/libFlowKit.so"
# A DT_RPATH, as the daemon's: it loads plugins, which have no RUNPATH.
patchelf --force-rpath --set-rpath '$ORIGIN' "$D_FLOWD_LIB/flowd-plugin-host"
for lib in $runtime_libs; do patchelf --set-rpath '$ORIGIN' "$D_FLOWD_LIB/$lib"; done
for p in $shipped; do patchelf --remove-rpath "$D_FLOWD_LIB/plugins/$p"; done

# --- the desktop client's menu entry, AppStream metadata and icon ---------------------------------
install -D -m 0644 "$SRCDIR/data/org.flowd.Flows.desktop" "$DESTDIR$DATADIR/applications/org.flowd.Flows.desktop"
install -D -m 0644 "$SRCDIR/data/org.flowd.Flows.metainfo.xml" "$DESTDIR$DATADIR/metainfo/org.flowd.Flows.metainfo.xml"
install -D -m 0644 "$SRCDIR/data/icons/org.flowd.Flows.svg" "$DESTDIR$DATADIR/icons/hicolor/scalable/apps/org.flowd.Flows.svg"

# --- data: flows, D-Bus, systemd, sysusers, docs -------------------------------------------------
install -d -m 0755 "$DESTDIR$DATADIR/flowd/flows"
flows=$(find "$SRCDIR/flows" -maxdepth 1 -name '*.json' 2>/dev/null | sort || true)
if [ -n "$flows" ]; then
    # In the source tree a flow names its schema as ../docs/flow.schema.json;
    # installed, the schema is beside the flows directory ($DATADIR/flowd).
    for f in $flows; do
        target="$DESTDIR$DATADIR/flowd/flows/$(basename "$f")"
        sed 's#"\$schema": "\.\./docs/flow\.schema\.json"#"$schema": "../flow.schema.json"#' "$f" >"$target"
        chmod 0644 "$target"
    done
else
    warn "flows/*.json does not exist yet; no flows installed"
fi
xmls=$(find "$SRCDIR/dbus" -maxdepth 1 -name 'org.flowd.Flow1.*.xml' 2>/dev/null | sort || true)
if [ -n "$xmls" ]; then
    install -d -m 0755 "$DESTDIR$DBUS_DIR/interfaces"
    for f in $xmls; do install -m 0644 "$f" "$DESTDIR$DBUS_DIR/interfaces/"; done
else
    warn "dbus/org.flowd.Flow1.*.xml does not exist yet; no interface XML installed"
fi
install_text "$SRCDIR/dbus/org.flowd.Flow1.conf" "$DBUS_DIR/system.d"
install_text "$SRCDIR/dbus/org.flowd.Flow1-system.service" "$DBUS_DIR/system-services" org.flowd.Flow1.service
install_text "$SRCDIR/dbus/org.flowd.Flow1-session.service" "$DBUS_DIR/services" org.flowd.Flow1.service
# The polkit actions flowd asks about on the system bus (docs/admin.md, "Authorization").
install -D -m 0644 "$SRCDIR/polkit/org.flowd.Flow1.policy" "$DESTDIR$POLKIT_ACTIONS_DIR/org.flowd.Flow1.policy"
install_text "$SRCDIR/systemd/flowd.service" "$SYSTEMD_SYSTEM_UNIT_DIR"
install_text "$SRCDIR/systemd/user/flowd.service" "$SYSTEMD_USER_UNIT_DIR"
install_text "$SRCDIR/systemd/sysusers.d/flowd.conf" "$SYSUSERS_DIR"
# The journal catalog: what `journalctl -x` says about each of flowd's MESSAGE_IDs.
install_text "$SRCDIR/data/catalog/flowd.catalog" "$JOURNAL_CATALOG_DIR"
for f in "$SRCDIR"/systemd/examples/flowd.service.d/*.conf; do
    install_text "$f" "$DOCDIR/examples/flowd.service.d"
done
# The fully commented sample configuration (every key with its default). An
# administrator's own file is never replaced: a package marks it a conffile,
# and an install into / keeps one that is already there.
conf=$DESTDIR$SYSCONFDIR/flowd/flowd.conf
if [ -z "$DESTDIR" ] && [ -e "$conf" ]; then
    warn "$conf exists: kept (the sample is $SRCDIR/etc/flowd.conf)"
else
    install -d -m 0755 "$DESTDIR$SYSCONFDIR/flowd"
    sed -e "s|/etc/flowd|$SYSCONFDIR/flowd|g" -e "s|/usr/share/flowd|$DATADIR/flowd|g" "$SRCDIR/etc/flowd.conf" |
        substitute /dev/stdin >"$conf.tmp"
    chmod 0644 "$conf.tmp"
    mv -f "$conf.tmp" "$conf"
fi
# The plugin SDK as source (docs/plugins.md): SwiftPM cannot use an installed
# .swiftmodule, so a plugin outside this tree depends on this package by path.
# FlowKit (the SDK and FlowKitTesting, its test kit) and the plugin template.
install -d -m 0755 "$DESTDIR$DATADIR/flowd/sdk/FlowKit"
install -m 0644 "$SRCDIR/Packages/FlowKit/Package.swift" "$DESTDIR$DATADIR/flowd/sdk/FlowKit/Package.swift"
for target in FlowKit FlowKitTesting; do
    install -d -m 0755 "$DESTDIR$DATADIR/flowd/sdk/FlowKit/Sources/$target"
    for f in "$SRCDIR/Packages/FlowKit/Sources/$target"/*.swift; do
        install -m 0644 "$f" "$DESTDIR$DATADIR/flowd/sdk/FlowKit/Sources/$target/"
    done
done
template="$DESTDIR$DATADIR/flowd/sdk/template"
install -d -m 0755 "$template/Sources/MyPlugin" "$template/Tests/MyPluginTests"
install -m 0644 "$SRCDIR/Packages/PluginTemplate/Package.swift" "$SRCDIR/Packages/PluginTemplate/Makefile" "$template/"
install -m 0644 "$SRCDIR"/Packages/PluginTemplate/Sources/MyPlugin/*.swift "$template/Sources/MyPlugin/"
install -m 0644 "$SRCDIR"/Packages/PluginTemplate/Tests/MyPluginTests/*.swift "$template/Tests/MyPluginTests/"
install_optional docs/plugins.md "$DOCDIR" plugins.md
install_optional docs/flow-format.md "$DOCDIR" flow-format.md
install_optional docs/flow.schema.json "$DATADIR/flowd" flow.schema.json
install_optional docs/dbus-api.md "$DOCDIR" dbus-api.md
install_optional docs/flowctl.md "$DOCDIR" flowctl.md
install_optional docs/admin.md "$DOCDIR" admin.md
install_optional docs/desktop.md "$DOCDIR" desktop.md
install_optional docs/man/flowctl.1 "$MANDIR/man1" flowctl.1
install_optional docs/man/flowd-plugin-probe.1 "$MANDIR/man1" flowd-plugin-probe.1
install_optional docs/man/flowd.8 "$MANDIR/man8" flowd.8
install_optional docs/man/flowd-gtk.1 "$MANDIR/man1" flowd-gtk.1
install_optional completions/flowctl.bash "$BASH_COMPLETION_DIR" flowctl

# --- checks --------------------------------------------------------------------------------------
failed=0
bad() { echo "install: check failed: $*" >&2; failed=1; }

# Only the shipped plugins in the plugin directory.
for f in "$D_FLOWD_LIB/plugins"/* "$D_FLOWD_LIB/plugins"/.[!.]*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    [[ " $shipped " == *" $(basename "$f") "* ]] || bad "$FLOWD_LIB/plugins holds $(basename "$f"), which flowd does not ship"
done

# Search paths: only the allowed entries, relative to the file, nothing pointing at the
# toolchain, the build tree or DESTDIR; a DT_RPATH on the daemon only, none on a plugin.
allowed_runpath() {
    case "$1" in
        '$ORIGIN' | '$ORIGIN/../lib/flowd') return 0 ;;
        *) return 1 ;;
    esac
}
elfs=("$DESTDIR$LIBEXECDIR/flowd" "$DESTDIR$BINDIR/flowctl" "$DESTDIR$BINDIR/flowd-plugin-probe" "$DESTDIR$BINDIR/flowd-gtk" "$D_FLOWD_LIB"/*.so "$D_FLOWD_LIB"/plugins/*.so)
for elf in "${elfs[@]}"; do
    dynamic=$(readelf -d "$elf")
    if [ "$elf" = "$DESTDIR$LIBEXECDIR/flowd" ]; then
        grep -q '(RPATH)' <<<"$dynamic" || bad "$elf has no DT_RPATH (the plugins' libraries are found by it)"
        grep -q '(RUNPATH)' <<<"$dynamic" && bad "$elf has a DT_RUNPATH, which would hide its DT_RPATH"
    else
        grep -q '(RPATH)' <<<"$dynamic" && bad "$elf has a DT_RPATH (only the daemon has one)"
    fi
    case "$elf" in
        "$D_FLOWD_LIB"/plugins/*) [ -z "$(runpath_of "$elf")" ] || bad "$elf has a RUNPATH (the daemon's serves plugins)"; continue ;;
    esac
    IFS=: read -r -a entries <<<"$(runpath_of "$elf")"
    for e in "${entries[@]}"; do
        allowed_runpath "$e" || bad "$elf has RUNPATH entry '$e'"
    done
done

# Every library resolves, and none from the toolchain or the build tree. ldd runs the dynamic
# loader on our own files only; LD_LIBRARY_PATH is cleared so only the RUNPATHs count. A plugin
# is resolved as the daemon loads it: in the daemon's directory, $FLOWD_LIB.
for elf in "${elfs[@]}"; do
    case "$elf" in
        "$D_FLOWD_LIB"/plugins/*) out=$(LD_LIBRARY_PATH="$D_FLOWD_LIB" ldd "$elf" 2>&1) ;;
        *) out=$(env -u LD_LIBRARY_PATH ldd "$elf" 2>&1) ;;
    esac || { bad "ldd $elf failed: $out"; continue; }
    while read -r line; do
        case "$line" in
            *"not found"*) bad "$elf: $line" ;;
            *"$SWIFT_RUNTIME_DIR"* | *"$BUILD_DIR"*) bad "$elf resolves outside the installed tree: $line" ;;
        esac
    done <<<"$out"
done
# The desktop entry and the AppStream metadata are valid (when Debian's validators are installed).
if command -v desktop-file-validate >/dev/null 2>&1; then
    out=$(desktop-file-validate "$DESTDIR$DATADIR/applications/org.flowd.Flows.desktop" 2>&1) ||
        bad "org.flowd.Flows.desktop is not valid: $out"
else
    warn "desktop-file-validate is not installed; the desktop entry was not validated"
fi
if command -v appstreamcli >/dev/null 2>&1; then
    out=$(appstreamcli validate --no-net "$DESTDIR$DATADIR/metainfo/org.flowd.Flows.metainfo.xml" 2>&1) ||
        bad "org.flowd.Flows.metainfo.xml is not valid: $out"
else
    warn "appstreamcli is not installed; the AppStream metadata was not validated"
fi
# The polkit actions are valid against polkit's DTD (when xmllint and polkitd's DTD are installed).
policy_dtd=/usr/share/polkit-1/policyconfig-1.dtd
if command -v xmllint >/dev/null 2>&1 && [ -f "$policy_dtd" ]; then
    out=$(xmllint --noout --nonet --dtdvalid "$policy_dtd" "$DESTDIR$POLKIT_ACTIONS_DIR/org.flowd.Flow1.policy" 2>&1) ||
        bad "org.flowd.Flow1.policy is not valid: $out"
else
    warn "xmllint or polkit's DTD is not installed; the polkit actions were not validated"
fi
[ "$failed" -eq 0 ] || die "the installed tree is not self-contained or not valid (see above)"

echo "install: flowd installed to ${DESTDIR:-/}${DESTDIR:+ }(PREFIX=$PREFIX)"
echo "install: Swift runtime in $FLOWD_LIB:$runtime_libs"
echo "install: system libraries needed at run time:$system_libs"

#!/bin/bash
# Runs INSIDE the booted clean Debian 12 container, as root, as the unit
# flowd-package-test.service (see run.sh). The packages are in /root/debs/new (this tree's,
# from make deb) and /root/debs/prev (the previous version). Writes its log to
# /root/results/log and PASS or FAIL to /root/results/status.
#
# In order: a fresh install of the new packages and a flow as a user and as root; remove and
# purge; the previous version with sessions and a changed configuration file, upgraded to the
# new one; remove and purge again.
set -uo pipefail
export LC_ALL=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 PATH=/usr/sbin:/usr/bin DEBIAN_FRONTEND=noninteractive

RESULTS=/root/results
TESTS=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../harness.sh
. "$TESTS/../harness.sh"
NEW=/root/debs/new
PREV=/root/debs/prev
CONF=/etc/flowd/flowd.conf
E2E_USER=flowd-package-user

# apt_get ARGS...: apt-get, its output in $RESULTS/apt.log; prints the packages it added.
# A failure is reported on stderr (the log too), so that a caller's $(...) or >/dev/null
# does not swallow it, with dpkg's own error lines and the end of apt's output.
apt_get() {
    local out rc
    out=$(apt-get -y -o Dpkg::Use-Pty=0 "$@" 2>&1 </dev/null)
    rc=$?
    printf '$ apt-get %s\n%s\n' "$*" "$out" >>"$RESULTS/apt.log"
    [ "$rc" -eq 0 ] || {
        fail "apt-get $* failed (exit $rc); dpkg said: $(grep -E -A1 '^dpkg: (error|warning)' <<<"$out" | tr '\n' ' ')" >&2
        tail -n 12 <<<"$out" | sed 's/^/        apt: /' >&2
        return 1
    }
    sed -n '/^The following NEW packages will be installed:/,/^[^ ]/p' <<<"$out" | sed '1d;$d' | tr -s ' \n' ' '
}
# flowd_packages [STATUS-REGEX]: flowd's packages dpkg knows, in a matching state (default: any).
flowd_packages() {
    dpkg-query -W -f='${Package} ${db:Status-Status}\n' 'flowd*' 2>/dev/null |
        awk -v re="${1:-.}" '$2 != "not-installed" && $2 ~ re { print $1 }' | tr '\n' ' '
}
installed_version() { dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null; }
# flowd_pids: the processes running the installed daemon (procps is not in minbase).
flowd_pids() {
    local p
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/exe" 2>/dev/null)" in /usr/libexec/flowd*) echo "${p#/proc/}" ;; esac
    done
}
name_owned() { bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s "$BUS" | grep -q true; }
activatable() { bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ListActivatableNames | grep -q "\"$BUS\""; }
not_activatable() { ! activatable; }
is_flowd_process_gone() { [ -z "$(flowd_pids)" ]; }

# started_at_once CURSOR: the postinst's start of flowd succeeded the first time: no automatic restart,
# no failed start (a bus policy read before the user flowd existed refuses flowd its name, and
# Restart= would hide that behind a later success).
# CURSOR: look at the journal after it (journal_cursor), not at the whole boot.
journal_cursor() { journalctl -n 1 -o cat --show-cursor --no-pager | sed -n "s/^-- cursor: //p"; }
started_at_once() {
    local failed
    [ "$(restarts)" -eq 0 ] || { fail "flowd was restarted $(restarts) times after its start"; return 1; }
    failed=$(journalctl --after-cursor="$1" --no-pager -o cat _PID=1 UNIT=flowd.service |
        grep -E 'Failed with result|Main process exited, code=exited, status=[1-9]')
    [ -z "$failed" ] || fail "a start of flowd failed: $failed"
}

# drive_consultation NAME: the example flow consultation, as flowctl's user (FC_AS), from start
# to submitted through the spool plugin; prints the session id.
drive_consultation() {
    local name=$1 id
    id=$(fc_start consultation) && [ -n "$id" ] || { fail "flowctl start consultation gave no session id"; return 1; }
    fc_set "$id" service=website && fc_continue "$id" || { fail "step service of $id"; return 1; }
    fc_set "$id" pageCount=12 && fc_continue "$id" || { fail "step pages of $id"; return 1; }
    fc_set "$id" "day=$(fc_first_option "$id" day)" "time=$(fc_first_option "$id" time)" && fc_continue "$id" ||
        { fail "step when of $id"; return 1; }
    fc_set "$id" "name=$name" email=ada@example.com && fc_continue "$id" || { fail "step contact of $id"; return 1; }
    fc_submit "$id" || { fail "flowctl submit $id failed"; return 1; }
    echo "$id"
}
# expect_submitted ID NAME: the session is submitted and its spool file holds NAME.
expect_submitted() {
    local id=$1 name=$2 state
    state=$(sprop "$MANAGER/session/$id" State)
    [ "$state" = submitted ] || { fail "session $id is '$state', expected submitted"; return 1; }
    grep -l -F "$name" /var/lib/flowd/spool/consultation/*.json >/dev/null 2>&1 ||
        { fail "no spool file in /var/lib/flowd/spool/consultation holds '$name'"; return 1; }
}
ensure_user() {
    getent passwd "$E2E_USER" >/dev/null || useradd --create-home --shell /bin/sh "$E2E_USER" ||
        { fail "useradd $E2E_USER failed"; return 1; }
}

# --- a fresh install ------------------------------------------------------------------------------
check_clean_root() {
    [ ! -e /opt/swift ] || fail "/opt/swift exists in the container" || return 1
    ! command -v swift >/dev/null || fail "a swift binary is on PATH: $(command -v swift)" || return 1
    [ -z "$(installed_version flowd)" ] || fail "flowd is installed before the test installed it: $(installed_version flowd)" || return 1
    local libs
    libs=$(dpkg-query -W -f='${Package} ' libcurl4 libsqlite3-0 2>/dev/null)
    [ -z "$libs" ] || note "already in the root: $libs"
}

INSTALL_CURSOR=""
check_install() {
    local added
    INSTALL_CURSOR=$(journal_cursor)
    apt_get update >/dev/null || return 1
    # As the README says: apt install ./build-deb/flowd_*.deb, with the plugin SDK beside it.
    added=$(apt_get install "$NEW"/flowd_*.deb "$NEW"/flowd-plugin-dev_*.deb) || return 1
    note "apt added: $added"
    [[ " $added " == *" libcurl4 "* ]] && [[ " $added " == *" libsqlite3-0 "* ]] ||
        { fail "apt did not pull libcurl4 and libsqlite3-0 (the webhook's and the store's libraries): $added"; return 1; }
    local f out
    for f in /usr/libexec/flowd /usr/bin/flowctl /usr/lib/flowd/flowd-plugin-host /usr/lib/flowd/*.so /usr/lib/flowd/plugins/*.so; do
        # A plugin has no RUNPATH of its own: flowd's DT_RPATH finds its
        # libraries in /usr/lib/flowd when flowd loads it; resolve it so.
        case "$f" in
            /usr/lib/flowd/plugins/*) out=$(LD_LIBRARY_PATH=/usr/lib/flowd ldd "$f" 2>&1) ;;
            *) out=$(ldd "$f" 2>&1) ;;
        esac || { fail "ldd $f: $out"; return 1; }
        ! grep -q 'not found' <<<"$out" || { fail "$f: $(grep 'not found' <<<"$out" | tr '\n' ' ')"; return 1; }
    done
}

check_maintainer_scripts() {
    getent passwd flowd >/dev/null || { fail "the postinst did not create the user flowd"; return 1; }
    [ "$(systemctl is-enabled flowd)" = enabled ] || { fail "flowd.service is $(systemctl is-enabled flowd), expected enabled"; return 1; }
    wait_for 30 "flowd active (started by the postinst)" is_state active || return 1
    name_owned || { fail "flowd runs but does not own $BUS (the bus policy did not see the user flowd?)"; return 1; }
    started_at_once "$INSTALL_CURSOR" || return 1
    dpkg-query -W -f='${Conffiles}' flowd | grep -q " $CONF " || { fail "$CONF is not a conffile of flowd"; return 1; }
    [ "$(stat -c '%U %a' /var/lib/flowd)" = "flowd 700" ] || fail "/var/lib/flowd is '$(stat -c '%U %a' /var/lib/flowd)'"
}

check_activation() { expect_activation consultation; }

check_versions() {
    local pkg upstream daemon cli property
    pkg=$(dpkg-query -W -f='${Version}' flowd)
    upstream=${pkg#*:}
    upstream=${upstream%-*}
    daemon=$(/usr/libexec/flowd --version | cut -d' ' -f2)
    cli=$(flowctl --version | cut -d' ' -f2)
    property=$(bus get-property "$BUS" "$MANAGER" "$IMANAGER" Version | sed -E 's/^s "(.*)"$/\1/')
    [ "$daemon" = "$upstream" ] && [ "$cli" = "$upstream" ] && [ "$property" = "$upstream" ] ||
        { fail "versions differ: package $pkg, flowd --version $daemon, flowctl --version $cli, bus Version $property"; return 1; }
    note "package $pkg; flowd, flowctl and the bus's Version say $upstream"
}

check_flow_as_user() {
    ensure_user || return 1
    local id
    FC_AS=(runuser -u "$E2E_USER" --)
    id=$(drive_consultation "Ada Lovelace (user)")
    FC_AS=()
    [ -n "$id" ] || return 1
    expect_submitted "$id" "Ada Lovelace (user)" || return 1
    runuser -u "$E2E_USER" -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" ListSessions | grep -q "\"$id\"" ||
        fail "session $id is not among $E2E_USER's own sessions"
}

check_flow_as_root() {
    local id
    id=$(drive_consultation "Grace Hopper (root)") && [ -n "$id" ] || return 1
    expect_submitted "$id" "Grace Hopper (root)"
}

# keys_of FILE: the keys of the commented-out assignments (#Key=value) in FILE, one each.
keys_of() { sed -n -E 's/^ *#([A-Za-z]+)=.*$/\1/p' "$1" | sort -u; }
# The shipped sample lists every key of the guide's configuration reference, and all of them,
# uncommented, are a configuration flowd starts with.
check_sample_configuration() {
    local dropin=/etc/flowd/flowd.conf.d/50-every-key.conf keys guide
    guide=$(keys_of <(zcat /usr/share/doc/flowd/admin.md.gz | awk '/^## /{ f = ($0 == "## Configure") } f'))
    keys=$(keys_of "$CONF")
    [ -n "$guide" ] && [ "$keys" = "$guide" ] ||
        { fail "the keys of $CONF ($(echo $keys)) are not those of admin.md ($(echo $guide))"; return 1; }
    mkdir -p /etc/flowd/flowd.conf.d
    sed -n -E 's/^#([A-Za-z]+=.*)$/\1/p; /^\[/p' "$CONF" >"$dropin"
    systemctl restart flowd || { fail "flowd does not start with every key of the sample uncommented"; return 1; }
    mcall ListFlows | grep -q '"consultation"' || { fail "flowd with every key uncommented serves no consultation"; return 1; }
    rm -rf /etc/flowd/flowd.conf.d
    systemctl restart flowd
    note "$(wc -l <<<"$keys") keys, as in admin.md; uncommented as a drop-in, flowd started and served"
}

# The desktop client's package, when this tree builds one: its libraries (GTK 4, libadwaita)
# come from Debian, its Swift runtime from flowd.
check_desktop_client() {
    local debs added out
    debs=$(ls "$NEW"/flowd-gtk_*.deb 2>/dev/null)
    [ -n "$debs" ] || { note "no flowd-gtk package in this build (a tree without the desktop client)"; return 0; }
    ensure_user || return 1
    added=$(apt_get install "$NEW"/flowd-gtk_*.deb) || return 1
    note "apt added $(wc -w <<<"$added") packages, among them: $(tr ' ' '\n' <<<"$added" | grep -E '^(libgtk-4-1|libadwaita-1-0)$' | tr '\n' ' ')"
    out=$(ldd /usr/bin/flowd-gtk 2>&1) || { fail "ldd /usr/bin/flowd-gtk: $out"; return 1; }
    ! grep -q 'not found' <<<"$out" || { fail "flowd-gtk: $(grep 'not found' <<<"$out" | tr '\n' ' ')"; return 1; }
    out=$(runuser -u "$E2E_USER" -- flowd-gtk --help 2>&1) || { fail "flowd-gtk --help failed: $out"; return 1; }
    grep -q '^Usage: flowd-gtk' <<<"$out" || fail "flowd-gtk --help printed no usage: $out"
}

check_plugin_sdk() {
    [ -f /usr/share/flowd/sdk/FlowKit/Package.swift ] || { fail "flowd-plugin-dev has no FlowKit package"; return 1; }
    [ "$(readlink -e /usr/share/flowd/sdk/lib/libFlowKit.so)" = /usr/lib/flowd/libFlowKit.so ] ||
        fail "/usr/share/flowd/sdk/lib/libFlowKit.so does not lead to flowd's /usr/lib/flowd/libFlowKit.so"
}

# --- remove and purge ----------------------------------------------------------------------------
check_remove() {
    # shellcheck disable=SC2046
    apt_get remove $(flowd_packages '^installed$') >/dev/null || return 1
    wait_for 30 "no flowd process" is_flowd_process_gone || return 1
    [ "$(systemctl show -P LoadState flowd)" = not-found ] ||
        { fail "flowd.service is still known after remove: $(systemctl show -P LoadState,FragmentPath flowd | tr '\n' ' ')"; return 1; }
    ! name_owned || { fail "$BUS is still owned on the bus"; return 1; }
    wait_for 10 "$BUS no longer activatable" not_activatable || return 1
    [ ! -e /usr/share/dbus-1/system.d/org.flowd.Flow1.conf ] || { fail "the bus policy is still installed"; return 1; }
    # remove keeps what purge removes: the configuration and the sessions.
    [ -f "$CONF" ] || { fail "remove deleted $CONF (a conffile: only purge may)"; return 1; }
    [ -d /var/lib/flowd ] || fail "remove deleted /var/lib/flowd (only purge may)"
}

check_purge() {
    # shellcheck disable=SC2046
    apt_get purge $(flowd_packages) >/dev/null || return 1
    [ -z "$(flowd_packages)" ] || { fail "dpkg still knows $(flowd_packages)"; return 1; }
    local left=()
    for f in /etc/flowd /var/lib/flowd /usr/lib/flowd /usr/libexec/flowd /usr/bin/flowd-gtk /lib/systemd/system/flowd.service \
        /usr/lib/systemd/system/flowd.service /etc/systemd/system/multi-user.target.wants/flowd.service \
        /usr/share/dbus-1/system.d/org.flowd.Flow1.conf /usr/share/dbus-1/system-services/org.flowd.Flow1.service; do
        [ ! -e "$f" ] && [ ! -L "$f" ] || left+=("$f")
    done
    [ ${#left[@]} -eq 0 ] || { fail "left after purge: ${left[*]}"; return 1; }
    is_flowd_process_gone || { fail "flowd processes after purge: $(flowd_pids)"; return 1; }
    # Debian keeps system users on purge (docs/admin.md): files they owned elsewhere would pass
    # to the next user given the uid.
    getent passwd flowd >/dev/null || fail "purge removed the user flowd, which docs/admin.md says it keeps"
}

# --- the upgrade ---------------------------------------------------------------------------------
PREV_PID="" USER_ID="" ROOT_ID="" DONE_ID=""
check_install_previous() {
    apt_get install "$PREV"/flowd_*.deb >/dev/null || return 1
    wait_for 30 "the previous flowd active" is_state active || return 1
    note "previous: $(installed_version flowd), $(/usr/libexec/flowd --version)"
}

check_sessions_before_upgrade() {
    ensure_user || return 1
    # An administrator's change to the configuration file, which the upgrade must keep.
    sed -i 's/^#MaxSessionsPerUser=64$/MaxSessionsPerUser=60/' "$CONF"
    grep -q '^MaxSessionsPerUser=60$' "$CONF" || { fail "the sample has no '#MaxSessionsPerUser=64' line to change"; return 1; }
    systemctl restart flowd || { fail "the previous flowd does not restart with the changed $CONF"; return 1; }
    FC_AS=(runuser -u "$E2E_USER" --)
    USER_ID=$(fc_start consultation)
    [ -n "$USER_ID" ] && fc_set "$USER_ID" service=website && fc_continue "$USER_ID" && fc_set "$USER_ID" pageCount=7 ||
        { FC_AS=(); fail "the user's session with the previous flowd"; return 1; }
    FC_AS=()
    ROOT_ID=$(fc_start consultation)
    [ -n "$ROOT_ID" ] && fc_set "$ROOT_ID" service=app && fc_continue "$ROOT_ID" ||
        { fail "root's session with the previous flowd"; return 1; }
    DONE_ID=$(drive_consultation "Submitted before the upgrade") && [ -n "$DONE_ID" ] || return 1
    PREV_PID=$(prop MainPID)
    note "sessions: user $USER_ID on $(sprop "$MANAGER/session/$USER_ID" CurrentStep), root $ROOT_ID on $(sprop "$MANAGER/session/$ROOT_ID" CurrentStep), $DONE_ID submitted; flowd PID $PREV_PID"
}

# dpkg's question when both the administrator and the new package changed a conffile (here
# flowd.conf, whose sample gained keys since the previous version), answered as its default:
# keep the administrator's version; the package's new one is put beside it as .dpkg-dist.
# apt-get with no terminal cannot answer it (dpkg fails with "end of file on stdin at
# conffile prompt", and the old flowd keeps running); docs/admin.md says so.
KEEP_MY_CONFFILES=(-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

check_upgrade() {
    local version pid exe want got cursor shipped
    cursor=$(journal_cursor)
    apt_get install "${KEEP_MY_CONFFILES[@]}" "$NEW"/flowd_*.deb >/dev/null || return 1
    version=$(installed_version flowd)
    [ "$version" = "installed $(dpkg-deb -f "$NEW"/flowd_*.deb Version)" ] || { fail "after the upgrade: $version"; return 1; }
    wait_for 30 "flowd active after the upgrade" is_state active || return 1
    pid=$(prop MainPID)
    [ "$pid" != "$PREV_PID" ] || { fail "flowd was not restarted by the upgrade (PID $pid)"; return 1; }
    started_at_once "$cursor" || return 1
    exe=$(readlink "/proc/$pid/exe")
    [ "$exe" = /usr/libexec/flowd ] || { fail "flowd (PID $pid) runs '$exe', not the installed /usr/libexec/flowd"; return 1; }
    want=$(sed -n 's|^\([0-9a-f]*\)  usr/libexec/flowd$|\1|p' /var/lib/dpkg/info/flowd.md5sums)
    got=$(md5sum <"/proc/$pid/exe" | cut -d' ' -f1)
    [ -n "$want" ] && [ "$got" = "$want" ] || { fail "the running flowd is not the new package's binary ($got, package $want)"; return 1; }
    grep -q '^MaxSessionsPerUser=60$' "$CONF" || { fail "the upgrade lost the change to $CONF"; return 1; }
    # The new package's sample beside it when it differs from the previous one, and nothing else.
    shipped=$(dpkg-deb --fsys-tarfile "$NEW"/flowd_*.deb | tar -xO ".$CONF")
    if [ "$shipped" != "$(dpkg-deb --fsys-tarfile "$PREV"/flowd_*.deb | tar -xO ".$CONF")" ]; then
        [ "$(cat "$CONF.dpkg-dist" 2>/dev/null)" = "$shipped" ] ||
            { fail "the new package's $CONF is not beside the kept one as $CONF.dpkg-dist"; return 1; }
    fi
    local left
    left=$(ls /etc/flowd/*.dpkg-* 2>/dev/null | grep -vxF "$CONF.dpkg-dist")
    [ -z "$left" ] || { fail "the upgrade left $left"; return 1; }
    local changed
    changed=$(dpkg --verify flowd | grep -v " c $CONF\$")
    [ -z "$changed" ] || fail "installed files differ from the new package: $changed"
    note "flowd PID $PREV_PID → $pid, running the new package's /usr/libexec/flowd; $CONF kept"
}

check_sessions_after_upgrade() {
    local step answers
    [ -n "$USER_ID" ] && [ -n "$ROOT_ID" ] && [ -n "$DONE_ID" ] || { fail "no sessions were made before the upgrade"; return 1; }
    [ "$(sprop "$MANAGER/session/$DONE_ID" State)" = submitted ] || { fail "$DONE_ID is no longer submitted"; return 1; }
    step=$(sprop "$MANAGER/session/$ROOT_ID" CurrentStep)
    [ "$step" = when ] || { fail "root's session $ROOT_ID is on '$step', expected when"; return 1; }
    answers=$(scall "$MANAGER/session/$USER_ID" GetAnswers)
    grep -qF '"pageCount"' <<<"$answers" && grep -qF '"website"' <<<"$answers" ||
        { fail "the user's answers did not survive the upgrade: $answers"; return 1; }
    # The new flowd takes the user's session on to submitted.
    FC_AS=(runuser -u "$E2E_USER" --)
    fc_continue "$USER_ID" &&
        fc_set "$USER_ID" "day=$(fc_first_option "$USER_ID" day)" "time=$(fc_first_option "$USER_ID" time)" &&
        fc_continue "$USER_ID" && fc_set "$USER_ID" "name=Kept across the upgrade" email=ada@example.com &&
        fc_continue "$USER_ID" && fc_submit "$USER_ID"
    local rc=$?
    FC_AS=()
    [ "$rc" -eq 0 ] || { fail "the user could not finish $USER_ID with the new flowd"; return 1; }
    expect_submitted "$USER_ID" "Kept across the upgrade"
}

# --- the run -------------------------------------------------------------------------------------
log "flowd package checks in $(systemd-detect-virt 2>/dev/null || echo a container): $(. /etc/os-release && echo "$PRETTY_NAME"), systemd $(systemctl --version | head -n 1 | cut -d' ' -f2)"
log "packages: $(cd "$NEW" && echo *.deb); previous: $(cd "$PREV" && echo *.deb)"
check "a clean root: no Swift toolchain, no flowd" check_clean_root
check "apt install ./flowd_*.deb pulls every run-time dependency; every ELF resolves" check_install
check "postinst: user flowd, service enabled and running, bus name owned, conffile" check_maintainer_scripts
check "busctl --system call activates a stopped flowd" check_activation
check "one version: package, flowd --version, flowctl --version, bus Version" check_versions
check "flowctl --system as a plain user: consultation submitted through the spool" check_flow_as_user
check "flowctl --system as root: consultation submitted through the spool" check_flow_as_root
check "the sample flowd.conf: every key, uncommented, starts flowd" check_sample_configuration
check "flowd-plugin-dev: the SDK and the link to flowd's libFlowKit.so" check_plugin_sdk
check "flowd-gtk installs with GTK 4 and libadwaita from Debian; it runs" check_desktop_client
check "apt remove: no process, no unit, no bus name or policy; conffile and state kept" check_remove
check "apt purge: no configuration, state, unit or enablement left; user flowd kept" check_purge
check "the previous version installs and runs" check_install_previous
check "sessions and a changed flowd.conf with the previous version" check_sessions_before_upgrade
check "upgrade: restarted on the new binary, flowd.conf kept" check_upgrade
check "upgrade: the sessions survive, and one is finished with the new flowd" check_sessions_after_upgrade
check "apt remove after the upgrade" check_remove
check "apt purge after the upgrade" check_purge
finish

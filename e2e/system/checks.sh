#!/bin/bash
# Runs INSIDE the booted test container, as root, as the unit flowd-system-test.service
# (see run.sh). Writes its log to /root/results/log (not to the journal: the journal is
# under test and must not see the test's secret) and PASS or FAIL to /root/results/status.
#
#   checks.sh --smoke | --full
#
# Every wait is "until a condition holds, up to N seconds"; nothing sleeps a fixed time.
set -uo pipefail
export LC_ALL=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 PATH=/usr/sbin:/usr/bin

MODE=${1:---full}
RESULTS=/root/results
TESTS=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../harness.sh
. "$TESTS/../harness.sh"
SHIPPED_PLUGINS="spool command webhook validators providers"
# A value typed into a secure field: it must never reach the journal or the disk.
SECRET="e2e-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

# --- the "package post-install" steps ----------------------------------------------------------
# Runs "$@" with the library path flowd gives the plugins it loads when $1 is
# a plugin, else as it is.
plugin_search_path() {
    local file=$1; shift
    case "$file" in
        /usr/lib/flowd/plugins/*) LD_LIBRARY_PATH=/usr/lib/flowd "$@" ;;
        *) "$@" ;;
    esac
}

check_no_toolchain() {
    [ ! -e /opt/swift ] || [ -z "$(ls -A /opt/swift 2>/dev/null)" ] || fail "/opt/swift exists in the container" || return 1
    ! command -v swift >/dev/null || fail "a swift binary is on PATH: $(command -v swift)" || return 1
    local f out
    for f in /usr/libexec/flowd /usr/bin/flowctl /usr/lib/flowd/flowd-plugin-host /usr/lib/flowd/*.so /usr/lib/flowd/plugins/*.so; do
        if [ "$(head -c 4 "$f" | tr -d '\177')" != ELF ]; then note "$f is not an ELF file (a fake?)"; continue; fi
        # A plugin has no RUNPATH of its own: flowd's DT_RPATH ($ORIGIN/../lib/flowd)
        # finds its libraries when flowd loads it, so resolve it as flowd would.
        out=$(plugin_search_path "$f" ldd "$f" 2>&1) || { fail "ldd $f: $out"; return 1; }
        if grep -q 'not found' <<<"$out"; then fail "$f: $(grep 'not found' <<<"$out" | tr '\n' ' ')"; return 1; fi
    done
    out=$(/usr/libexec/flowd --version 2>&1) || { fail "/usr/libexec/flowd --version failed: $out"; return 1; }
    note "flowd --version: $out"
    out=$(/usr/bin/flowctl --version 2>&1) || { fail "/usr/bin/flowctl --version failed: $out"; return 1; }
    if [ -x /usr/bin/python3 ]; then
        # dlopen every shipped plugin the way the daemon does: through /proc/self/fd/N.
        LD_LIBRARY_PATH=/usr/lib/flowd /usr/bin/python3 - /usr/lib/flowd/plugins/*.so <<'EOF' || { fail "a plugin does not load"; return 1; }
import ctypes, os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    ctypes.CDLL("/proc/self/fd/%d" % fd, mode=os.RTLD_NOW | os.RTLD_LOCAL)
EOF
    fi
}

check_postinst() {
    # What a package's maintainer scripts do: create the user, reload systemd and the bus policy.
    systemd-sysusers || fail "systemd-sysusers failed" || return 1
    getent passwd flowd >/dev/null || fail "sysusers did not create the flowd user" || return 1
    systemctl daemon-reload || fail "daemon-reload failed" || return 1
    systemctl reload dbus || fail "reloading the bus configuration failed" || return 1
    journalctl --update-catalog || fail "journalctl --update-catalog failed" || return 1
    mkdir -p /etc/flowd/flows
    cp "$TESTS"/flows/*.json /etc/flowd/flows/
}

check_unit_verify() {
    local out args=()
    # man pages are checked once they exist.
    [ -f /usr/share/man/man8/flowd.8 ] && [ -f /usr/share/man/man1/flowctl.1 ] || {
        args=(--man=no)
        note "man pages not installed yet: verify runs with --man=no"
    }
    out=$(systemd-analyze verify "${args[@]}" flowd.service 2>&1) || { fail "systemd-analyze verify: $out"; return 1; }
    [ -z "$out" ] || { fail "systemd-analyze verify is not clean: $out"; return 1; }
    out=$(systemctl show -P LoadState flowd)
    [ "$out" = loaded ] || fail "flowd.service LoadState=$out"
}

check_activatable() {
    bus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ListActivatableNames |
        grep -q "\"$BUS\"" || fail "$BUS is not activatable on the system bus (activation file not read)"
}

# --- bus policy ----------------------------------------------------------------------------------
request_name() { # USER: tries to own the name as USER; prints the error name or the reply
    runuser -u "$1" -- dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.RequestName "string:$BUS" uint32:4 2>&1
}
check_bus_policy() {
    is_state inactive || { systemctl stop flowd; wait_for 30 "flowd inactive" is_state inactive || return 1; }
    local who out
    for who in nobody root; do
        out=$(request_name "$who")
        grep -q 'org.freedesktop.DBus.Error.AccessDenied' <<<"$out" ||
            { fail "user $who was not refused ownership of $BUS: $out"; return 1; }
    done
    out=$(request_name flowd)
    grep -q 'uint32 1' <<<"$out" || fail "user flowd cannot own $BUS: $out"
}

# --- smoke: `flowd --version` under the shipped hardening (the harness alone, fast) ---------------
# Runs the binary once under every setting of the unit but Type=notify and the watchdog.
smoke_dropin() {
    printf '[Service]\nType=exec\nExecStart=\nExecStart=/usr/libexec/flowd --version\nRestart=no\nWatchdogSec=0\n'
}
check_smoke_service() {
    mkdir -p /run/systemd/system/flowd.service.d
    smoke_dropin >/run/systemd/system/flowd.service.d/50-smoke.conf
    systemctl daemon-reload
    systemctl start flowd || { fail "systemctl start flowd failed"; return 1; }
    wait_for 30 "flowd to run and exit" is_state inactive || return 1
    local result code status
    result=$(prop Result) code=$(prop ExecMainCode) status=$(prop ExecMainStatus)
    [ "$result" = success ] && [ "$status" = 0 ] ||
        { fail "flowd --version did not run cleanly under the unit's sandbox: Result=$result ExecMainCode=$code ExecMainStatus=$status"; return 1; }
    # What the process wrote to stdout/stderr, as the journal received it.
    local out
    out=$(journalctl -b -o cat --no-pager _SYSTEMD_UNIT=flowd.service _TRANSPORT=stdout)
    [ -n "$out" ] || { fail "nothing the process wrote reached the journal"; return 1; }
    sed 's/^/      journal: /' <<<"$out"
    check_state_dir || return 1
    rm -f /run/systemd/system/flowd.service.d/50-smoke.conf
    systemctl daemon-reload
}

check_state_dir() {
    local st
    st=$(stat -c '%U %a' /var/lib/flowd 2>/dev/null) || { fail "/var/lib/flowd was not created"; return 1; }
    [ "$st" = "flowd 700" ] || fail "/var/lib/flowd is '$st', expected 'flowd 700'"
}

# --- the per-user service on the session bus ------------------------------------------------------
E2E_USER=flowd-e2e-user
as_user() { # COMMAND...: runs COMMAND as the test user, in their user manager's environment
    local uid
    uid=$(id -u "$E2E_USER")
    runuser -u "$E2E_USER" -- env XDG_RUNTIME_DIR="/run/user/$uid" \
        DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" "$@"
}
user_manager_up() { [ "$(systemctl is-active "user@$(id -u "$E2E_USER").service")" = active ]; }
user_unit_is() { [ "$(as_user systemctl --user is-active flowd)" = "$1" ]; }
start_user_manager() {
    getent passwd "$E2E_USER" >/dev/null || useradd --create-home --shell /bin/sh "$E2E_USER" ||
        { fail "useradd $E2E_USER failed"; return 1; }
    loginctl enable-linger "$E2E_USER" || { fail "loginctl enable-linger failed"; return 1; }
    wait_for 30 "the user manager of $E2E_USER" user_manager_up
}

check_user_unit_smoke() {
    start_user_manager || return 1
    mkdir -p /etc/systemd/user/flowd.service.d
    smoke_dropin >/etc/systemd/user/flowd.service.d/50-smoke.conf
    as_user systemctl --user daemon-reload
    as_user systemctl --user start flowd || { fail "systemctl --user start flowd failed"; return 1; }
    wait_for 30 "the user's flowd to run and exit" user_unit_is inactive || return 1
    local result status
    result=$(as_user systemctl --user show -P Result flowd) status=$(as_user systemctl --user show -P ExecMainStatus flowd)
    [ "$result" = success ] && [ "$status" = 0 ] ||
        { fail "flowd --version did not run under the user unit: Result=$result ExecMainStatus=$status"; return 1; }
    rm -rf /etc/systemd/user/flowd.service.d
}

check_user_unit() {
    start_user_manager || return 1
    local out home
    out=$(as_user busctl --user --timeout=30 call "$BUS" "$MANAGER" "$IMANAGER" ListFlows) ||
        { fail "ListFlows on the session bus did not activate the user's flowd: $out"; return 1; }
    grep -q '"e2e"' <<<"$out" || { fail "the user's flowd does not list e2e: $out"; return 1; }
    wait_for 30 "the user's flowd active" user_unit_is active || return 1
    out=$(as_user busctl --user --timeout=30 call "$BUS" "$MANAGER" "$IMANAGER" StartSession 'sa{sv}' e2e 0) ||
        { fail "StartSession on the user's flowd failed: $out"; return 1; }
    home=$(getent passwd "$E2E_USER" | cut -d: -f6)
    local st
    st=$(stat -c '%U %a' "$home/.local/state/flowd" 2>/dev/null) ||
        { fail "the user's flowd has no state directory $home/.local/state/flowd"; return 1; }
    [ "$st" = "$E2E_USER 700" ] || { fail "$home/.local/state/flowd is '$st', expected '$E2E_USER 700'"; return 1; }
    # The user reloads their own flowd (no polkit on the session bus).
    out=$(as_user flowctl reload 2>&1) || { fail "flowctl reload of the user's own flowd failed: $out"; return 1; }
    grep -q '^Flows served.*e2e' <<<"$out" || { fail "flowctl reload of the user's flowd: $out"; return 1; }
    as_user systemctl --user stop flowd
}

# --- full: the real daemon -----------------------------------------------------------------------
check_start_status() {
    systemctl start flowd || { fail "systemctl start flowd failed"; return 1; }
    is_state active || { fail "flowd is $(systemctl is-active flowd) after start returned"; return 1; }
    local text
    text=$(prop StatusText)
    [ -n "$text" ] || { fail "no STATUS= text"; return 1; }
    systemctl status flowd --no-pager --full -n 0 | grep -qF "Status: \"$text\"" ||
        { fail "systemctl status does not show the STATUS= text '$text'"; return 1; }
    note "STATUS=$text"
    check_state_dir
}

check_plugins_loaded() {
    local out p
    out=$(mcall ListPlugins) || { fail "ListPlugins failed: $out"; return 1; }
    for p in $SHIPPED_PLUGINS; do
        grep -qE "\"path\" s \"/usr/lib/flowd/plugins/$p.so\"" <<<"$out" ||
            { fail "ListPlugins does not list /usr/lib/flowd/plugins/$p.so: $out"; return 1; }
    done
    if grep -qE '"status" s "(failed|disabled)"' <<<"$out"; then
        fail "a shipped plugin did not load under the sandbox: $out"
        return 1
    fi
}

check_activation() { expect_activation e2e; }

FLOW_ID=""
check_flow_with_flowctl() {
    local id state spool
    id=$(fc_start e2e) && [ -n "$id" ] || { fail "flowctl start e2e gave no session id"; return 1; }
    FLOW_ID=$id
    fc_set "$id" "name=Ada Lovelace" "pin=$SECRET" || { fail "flowctl set (step 1) failed"; return 1; }
    fc_continue "$id" || { fail "flowctl continue (step 1) failed"; return 1; }
    fc_set "$id" "topic=engines" || { fail "flowctl set (step 2) failed"; return 1; }
    fc_continue "$id" || { fail "flowctl continue (step 2) failed"; return 1; }
    fc_submit "$id" || { fail "flowctl submit failed"; return 1; }
    state=$(sprop "$MANAGER/session/$id" State)
    [ "$state" = submitted ] || { fail "session $id is '$state' after submit"; return 1; }
    spool=$(ls /var/lib/flowd/spool/e2e/*.json 2>/dev/null | head -n 1)
    [ -n "$spool" ] || { fail "no spool file in /var/lib/flowd/spool/e2e"; return 1; }
    grep -q 'Ada Lovelace' "$spool" || { fail "the spool file $spool does not hold the answers"; return 1; }
    note "spooled to $spool"
}

check_other_user() {
    local mine theirs err
    theirs=$(start_session e2e) && [ -n "$theirs" ] || { fail "root could not start a session"; return 1; }
    mine=$(start_session runuser -u nobody -- e2e) && [ -n "$mine" ] ||
        { fail "nobody could not start their own session"; return 1; }
    runuser -u nobody -- busctl --system call "$BUS" "$mine" "$ISESSION" GetStep >/dev/null ||
        { fail "nobody cannot read their own session $mine"; return 1; }
    # polkit (activated on the bus) would let an administrator in after authenticating; dbus-send
    # does not allow interaction, so the answer says so (docs/admin.md, "Authorization").
    err=$(error_name runuser -u nobody -- dbus-send --system --print-reply --dest="$BUS" "$theirs" "$ISESSION.GetStep")
    [ "$err" = org.freedesktop.DBus.Error.InteractiveAuthorizationRequired ] ||
        { fail "nobody calling GetStep on root's session got '${err:-success}', expected InteractiveAuthorizationRequired"; return 1; }
    err=$(error_name runuser -u nobody -- dbus-send --system --print-reply --dest="$BUS" "$MANAGER" "$IMANAGER.GetSession" "string:$(path_id "$theirs")")
    [ "$err" = org.freedesktop.DBus.Error.InteractiveAuthorizationRequired ] ||
        { fail "nobody calling GetSession on root's session got '${err:-success}', expected InteractiveAuthorizationRequired"; return 1; }
    runuser -u nobody -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" ListSessions | grep -q "$(path_id "$theirs")" &&
        { fail "nobody's ListSessions lists root's session"; return 1; }
    err=$(error_name runuser -u nobody -- dbus-send --system --print-reply --dest="$BUS" "$MANAGER" "$IMANAGER.Reload")
    [ "$err" = org.freedesktop.DBus.Error.InteractiveAuthorizationRequired ] ||
        { fail "nobody calling Reload got '${err:-success}', expected InteractiveAuthorizationRequired"; return 1; }
    scall "$mine" GetStep >/dev/null || fail "root cannot administer nobody's session"
}

# The real polkitd (activated on the system bus, reading the staged org.flowd.Flow1.policy): a rule
# grants manage-sessions to a group; a member reads and closes root's session, a user outside it is
# refused; with polkit stopped and masked, every non-root administrative call fails closed while
# owners go on.
POLKIT_RULE=/etc/polkit-1/rules.d/50-flowd-e2e.rules
polkit_denies() { # USER PATH METHOD [ARG...]: the error name and message of USER's call (dbus-send: no interaction)
    runuser -u "$1" -- dbus-send --system --print-reply --dest="$BUS" "$2" "${@:3}" 2>&1 | sed -n -E 's/^Error ([A-Za-z0-9_.]+): (.*)/\1 \2/p' | head -n 1
}
check_polkit() {
    local theirs mine out
    pkaction --action-id org.flowd.Flow1.manage-sessions >/dev/null 2>&1 ||
        { fail "polkit does not know org.flowd.Flow1.manage-sessions (is the policy installed?)"; return 1; }
    groupadd -f flowd-helpdesk
    id alice >/dev/null 2>&1 || useradd -m -G flowd-helpdesk alice
    id bob >/dev/null 2>&1 || useradd -m bob
    mkdir -p "$(dirname "$POLKIT_RULE")"
    cat >"$POLKIT_RULE" <<'RULE'
polkit.addRule(function(action, subject) {
    if (action.id == "org.flowd.Flow1.manage-sessions" && subject.isInGroup("flowd-helpdesk"))
        return polkit.Result.YES;
});
RULE
    systemctl restart polkit || { fail "cannot restart polkit"; return 1; }
    theirs=$(start_session e2e) && [ -n "$theirs" ] || { fail "root could not start a session"; return 1; }
    out=$(polkit_denies bob "$theirs" "$ISESSION.GetStep")
    [[ "$out" == org.freedesktop.DBus.Error.InteractiveAuthorizationRequired* ]] ||
        { fail "bob (not in flowd-helpdesk) reading root's session got '${out:-success}', expected InteractiveAuthorizationRequired"; return 1; }
    out=$(polkit_denies bob "$MANAGER" "$IMANAGER.GetSession" "string:$(path_id "$theirs")")
    [[ "$out" == org.freedesktop.DBus.Error.InteractiveAuthorizationRequired* ]] ||
        { fail "bob's GetSession of root's session got '${out:-success}', expected InteractiveAuthorizationRequired"; return 1; }
    runuser -u bob -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" ListSessions | grep -q "$(path_id "$theirs")" &&
        { fail "bob's ListSessions lists root's session"; return 1; }
    # GetManagedObjects follows ListSessions: root's session is in alice's answer, not in bob's.
    runuser -u alice -- busctl --system call "$BUS" "$MANAGER" org.freedesktop.DBus.ObjectManager GetManagedObjects |
        grep -qF "\"$theirs\"" || { fail "alice's GetManagedObjects does not hold root's session"; return 1; }
    out=$(runuser -u bob -- busctl --system call "$BUS" "$MANAGER" org.freedesktop.DBus.ObjectManager GetManagedObjects) ||
        { fail "bob's GetManagedObjects failed: $out"; return 1; }
    ! grep -qF "\"$theirs\"" <<<"$out" || { fail "bob's GetManagedObjects holds root's session: $out"; return 1; }
    # alice lists (flowctl, as a person would), finds, reads and closes root's session.
    out=$(runuser -u alice -- flowctl --system sessions --quiet 2>&1)
    grep -qx "$(path_id "$theirs")" <<<"$out" || { fail "alice's flowctl sessions does not list root's session: $out"; return 1; }
    runuser -u alice -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" GetSession s "$(path_id "$theirs")" | grep -qF "$theirs" ||
        { fail "alice (flowd-helpdesk) cannot GetSession root's session"; return 1; }
    runuser -u alice -- busctl --system call "$BUS" "$theirs" "$ISESSION" GetStep >/dev/null ||
        { fail "alice (flowd-helpdesk) cannot read root's session"; return 1; }
    runuser -u alice -- flowctl --system close "$(path_id "$theirs")" ||
        { fail "alice (flowd-helpdesk) cannot close root's session with flowctl"; return 1; }
    [ "$(error_name dbus-send --system --print-reply --dest="$BUS" "$theirs" "$ISESSION.GetStep")" = org.flowd.Flow1.Error.NotFound ] ||
        { fail "root's session is still there after alice closed it"; return 1; }
    note "bob refused (InteractiveAuthorizationRequired); alice read and closed root's session"
    # The audit trail: alice's access and bob's refusal, with uid, session and action.
    journalctl --sync
    journalctl -b -u flowd -o cat --no-pager MESSAGE_ID=bfd73dc32cdf4e0e9507311e6d4d8a15 "FLOWD_UID=$(id -u alice)" \
        "FLOWD_SESSION=$(path_id "$theirs")" FLOWD_ACTION=org.flowd.Flow1.manage-sessions | grep -q . ||
        { fail "no administrative-access journal entry for alice on $(path_id "$theirs")"; return 1; }
    journalctl -b -u flowd -o cat --no-pager MESSAGE_ID=a85c241363b84631afb4644fae70f904 "FLOWD_UID=$(id -u bob)" \
        "FLOWD_SESSION=$(path_id "$theirs")" | grep -q . ||
        { fail "no authorization-refused journal entry for bob on $(path_id "$theirs")"; return 1; }

    # A flow that names a polkit action: bob (no active session: auth_admin) is refused without
    # the interactive flag and with it (no authentication agent can ask); alice's rule does not cover it.
    sed -e 's/"id": "e2e",/"id": "e2e-guarded", "authorization": "org.flowd.Flow1.start",/' "$TESTS/flows/e2e.json" \
        >/etc/flowd/flows/e2e-guarded.json
    mcall Reload >/dev/null || { fail "Reload as root failed"; return 1; }
    # busctl prints the error's message, which says which case it is (docs/admin.md, "Authorization").
    out=$(runuser -u bob -- busctl --system --allow-interactive-authorization=no call "$BUS" "$MANAGER" "$IMANAGER" \
        StartSession 'sa{sv}' e2e-guarded 0 2>&1) && { fail "bob started e2e-guarded without the flag: $out"; return 1; }
    grep -q 'authentication is required to start flow e2e-guarded.*call again allowing interactive authorization' <<<"$out" ||
        { fail "bob starting e2e-guarded without the flag: '$out', expected InteractiveAuthorizationRequired"; return 1; }
    out=$(runuser -u bob -- busctl --system --allow-interactive-authorization=yes call "$BUS" "$MANAGER" "$IMANAGER" \
        StartSession 'sa{sv}' e2e-guarded 0 2>&1) && { fail "bob started e2e-guarded with the flag: $out"; return 1; }
    # polkitd, allowed to ask but finding no agent, may answer "challenge" or "no": refused either way.
    grep -q 'authentication is required to start flow e2e-guarded\|not authorized to start flow e2e-guarded' <<<"$out" ||
        { fail "bob starting e2e-guarded with the flag: '$out', expected a refusal naming the flow"; return 1; }
    [ -n "$(start_session e2e-guarded)" ] || { fail "root could not start e2e-guarded"; return 1; }
    rm -f /etc/flowd/flows/e2e-guarded.json
    mcall Reload >/dev/null
    note "e2e-guarded: bob refused with and without the flag ($out); root started it"

    # polkit gone: fail closed.
    systemctl stop polkit && systemctl mask --runtime polkit || { fail "cannot stop and mask polkit"; return 1; }
    theirs=$(start_session e2e) && [ -n "$theirs" ] || { fail "root could not start a session"; return 1; }
    mine=$(start_session runuser -u alice -- e2e) && [ -n "$mine" ] || { fail "alice could not start her own session"; return 1; }
    out=$(polkit_denies alice "$theirs" "$ISESSION.GetStep")
    [[ "$out" == org.flowd.Flow1.Error.AccessDenied*polkit* ]] ||
        { fail "with polkit gone, alice reading root's session got '${out:-success}', expected AccessDenied naming polkit"; return 1; }
    out=$(polkit_denies alice "$MANAGER" "$IMANAGER.Reload")
    [[ "$out" == org.flowd.Flow1.Error.AccessDenied*polkit* ]] ||
        { fail "with polkit gone, alice's Reload got '${out:-success}', expected AccessDenied naming polkit"; return 1; }
    runuser -u alice -- busctl --system call "$BUS" "$mine" "$ISESSION" GetStep >/dev/null ||
        { fail "with polkit gone, alice cannot use her own session"; return 1; }
    scall "$theirs" GetStep >/dev/null || { fail "with polkit gone, root cannot use its session"; return 1; }
    note "polkit gone: $out"
    systemctl unmask --runtime polkit
    rm -f "$POLKIT_RULE"
}

# flowctl --system reload on a terminal, as bob (not an administrator): polkit wants an
# administrator's password (org.flowd.Flow1.reload is auth_admin_keep) and flowctl's pkttyagent
# asks for it there. Both ways a person reaches a shell: inside a logind session (runuser -l, as
# a login, ssh or machinectl shell do: pam_systemd) and outside any (runuser -u). A wrong
# password is refused; --no-ask-password never asks. What bob sees goes to the log.
ON_A_TERMINAL="$TESTS/fixtures/on-a-terminal.py"
ADMIN_PASSWORD=flowd-e2e-admin
reload_on_a_terminal() { # HOW ANSWER [FLOWCTL-OPTION...]: bob's transcript, then "exit=N"
    local how=$1 answer=$2 command="flowctl --system ${*:3} reload"
    local prompt=(--prompt 'Password: ?$' --answer "$answer" --secret)
    [ -n "$answer" ] || prompt=()
    local terminal=(python3 "$ON_A_TERMINAL" --timeout 60 "${prompt[@]}" -- $command)
    case "$how" in
        # runuser -l opens a logind session (pam_systemd) but detaches from the terminal (as su -c
        # does), so the terminal is made inside it, as a login or sshd makes one.
        session) runuser -l bob -c "$(printf '%q ' "${terminal[@]}")" ;;
        no-session) runuser -u bob -- "${terminal[@]}" ;;
    esac | sed 's/\x1b\[[0-9;]*m//g'
    echo "exit=${PIPESTATUS[0]}"
}
show_transcript() { sed 's/^/        | /' <<<"$1" | while IFS= read -r line; do note "$line"; done; }
check_polkit_password() {
    local out how id_bob shadow
    id bob >/dev/null 2>&1 || useradd -m bob
    id_bob=$(id -u bob)
    shadow=$(mktemp) && cp -p /etc/shadow "$shadow"
    echo "root:$ADMIN_PASSWORD" | chpasswd
    # Debian's administrators are the sudo group, empty here: root is the one polkit asks for.
    cat >"$POLKIT_RULE" <<'RULE'
polkit.addAdminRule(function(action, subject) { return ["unix-user:0"]; });
RULE
    systemctl unmask --runtime polkit >/dev/null 2>&1
    systemctl restart polkit || { fail "cannot restart polkit"; return 1; }
    # What flowctl's choice rests on: outside a logind session polkitd never asks an agent that
    # registered as a fallback for the caller's process; one that registered plainly, it asks.
    local fallback
    for fallback in --fallback ""; do
        out=$(runuser -u bob -- python3 "$ON_A_TERMINAL" --timeout 30 --prompt 'Password: ?$' --answer "$ADMIN_PASSWORD" --secret -- \
            python3 "$TESTS/fixtures/agent-then.py" $fallback -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" Reload 2>&1)
        note "bob outside a session, pkttyagent ${fallback:-without --fallback}, busctl Reload:"; show_transcript "$out"
    done
    sed -e 's/"id": "e2e"/"id": "e2e-by-bob"/' "$TESTS/flows/e2e.json" >/etc/flowd/flows/e2e-by-bob.json
    # Outside any session first: a session of bob's, once opened, may linger a while (closing),
    # and logind may still name it his display session.
    for how in no-session session; do
        # A wrong password: polkit refuses, flowctl says flowd was not reloaded (77).
        out=$(reload_on_a_terminal "$how" wrong-password)
        note "bob, $how, wrong password:"; show_transcript "$out"
        grep -q 'AUTHENTICATING FOR org.flowd.Flow1.reload' <<<"$out" ||
            { fail "bob ($how): pkttyagent did not ask for a password"; return 1; }
        grep -q '^flowctl: flowd was not reloaded: not authorized to reload flowd' <<<"$out" && grep -q '^exit=77$' <<<"$out" ||
            { fail "bob ($how) with a wrong password: expected 'flowd was not reloaded' and exit 77"; return 1; }
        # --no-ask-password: no prompt, the reason and 77.
        out=$(reload_on_a_terminal "$how" "" --no-ask-password)
        note "bob, $how, --no-ask-password:"; show_transcript "$out"
        ! grep -q 'Password' <<<"$out" || { fail "bob ($how) was asked for a password despite --no-ask-password"; return 1; }
        grep -q '^flowctl: Authentication is required' <<<"$out" && grep -q '^exit=77$' <<<"$out" ||
            { fail "bob ($how) with --no-ask-password: expected 'Authentication is required' and exit 77"; return 1; }
        # root's password: reloaded, the new flow served.
        out=$(reload_on_a_terminal "$how" "$ADMIN_PASSWORD")
        note "bob, $how, root's password:"; show_transcript "$out"
        grep -q 'AUTHENTICATING FOR org.flowd.Flow1.reload' <<<"$out" ||
            { fail "bob ($how): pkttyagent did not ask for a password"; return 1; }
        grep -q '^✓ flowd re-read its configuration and flows' <<<"$out" && grep -q '^Flows served.*e2e-by-bob' <<<"$out" &&
            grep -q '^exit=0$' <<<"$out" || { fail "bob ($how) typed root's password and flowd did not reload"; return 1; }
        rm -f /etc/flowd/flows/e2e-by-bob.json
        mcall Reload >/dev/null
        sed -e 's/"id": "e2e"/"id": "e2e-by-bob"/' "$TESTS/flows/e2e.json" >/etc/flowd/flows/e2e-by-bob.json
    done
    # su -c and runuser -c detach from the terminal: flowctl's agent cannot ask there, and says so.
    out=$(python3 "$ON_A_TERMINAL" --timeout 60 -- runuser -l bob -c 'flowctl --system reload'; echo "exit=$?")
    note "bob, runuser -l bob -c (no controlling terminal):"; show_transcript "$out"
    grep -q 'no authentication agent could ask for the password' <<<"$out" && grep -q '^exit=77$' <<<"$out" ||
        { fail "bob under runuser -c: expected 'no authentication agent could ask for the password' and exit 77"; return 1; }
    rm -f /etc/flowd/flows/e2e-by-bob.json "$POLKIT_RULE"
    mcall Reload >/dev/null
    cp -p "$shadow" /etc/shadow && rm -f "$shadow"
    # The audit trail: bob's reloads, allowed by polkit, and his refusals, with his uid.
    journalctl --sync
    journalctl -b -u flowd -o cat --no-pager MESSAGE_ID=bfd73dc32cdf4e0e9507311e6d4d8a15 "FLOWD_UID=$id_bob" \
        FLOWD_ACTION=org.flowd.Flow1.reload | grep -q . || { fail "no administrative-access journal entry for bob's reload"; return 1; }
    journalctl -b -u flowd -o cat --no-pager MESSAGE_ID=a85c241363b84631afb4644fae70f904 "FLOWD_UID=$id_bob" \
        FLOWD_ACTION=org.flowd.Flow1.reload | grep -q . || { fail "no authorization-refused journal entry for bob's reload"; return 1; }
    note "polkitd's agents:"
    journalctl -b -u polkit -o cat --no-pager | grep -E 'Authentication Agent|authentication' | tail -n 12 |
        while IFS= read -r line; do note "  $line"; done
}

KILL_PATH=""
check_kill_restart() {
    local path id before_pid before_restarts step answers
    path=$(start_session e2e) && [ -n "$path" ] || { fail "could not start a session"; return 1; }
    KILL_PATH=$path
    scall "$path" SetAnswers 'a{sv}' 2 name s "Grace Hopper" pin s "$SECRET" >/dev/null || { fail "SetAnswers failed"; return 1; }
    scall "$path" Continue | grep -qx 'a{ss} 0' || { fail "Continue did not move on"; return 1; }
    scall "$path" SetAnswers 'a{sv}' 1 topic s "compilers" >/dev/null || { fail "SetAnswers (step 2) failed"; return 1; }
    step=$(sprop "$path" CurrentStep)
    before_pid=$(prop MainPID) before_restarts=$(restarts)
    systemctl kill -s KILL flowd
    EXPECTED_RESTARTS=$((EXPECTED_RESTARTS + 1))
    wait_for 30 "flowd restarted" restarted_since "$before_pid" "$before_restarts" || return 1
    id=$(path_id "$path")
    local got
    got=$(mcall GetSession s "$id") || { fail "GetSession $id after the restart: $got"; return 1; }
    [ "$got" = "o \"$path\"" ] || { fail "GetSession $id after the restart gave $got, expected $path"; return 1; }
    [ "$(sprop "$path" CurrentStep)" = "$step" ] || { fail "the session is not on step $step after the restart"; return 1; }
    answers=$(scall "$path" GetAnswers)
    grep -qF '"name" s "Grace Hopper"' <<<"$answers" && grep -qF '"topic" s "compilers"' <<<"$answers" ||
        { fail "the answers did not survive the restart: $answers"; return 1; }
    note "session $id intact at step $step after SIGKILL"
}
restarted_since() { # OLD-PID OLD-NRESTARTS
    [ "$(restarts)" -gt "$2" ] && is_state active && [ "$(prop MainPID)" != "$1" ] && [ "$(prop MainPID)" != 0 ]
}

check_watchdog() {
    mkdir -p /run/systemd/system/flowd.service.d
    # A short watchdog so the check is quick; the shipped value is restored afterwards.
    printf '[Service]\nWatchdogSec=3s\n' >/run/systemd/system/flowd.service.d/50-watchdog.conf
    systemctl daemon-reload
    local pid n mark
    mark=$(journal_mark)
    # PID 1 logs each sd_notify message at debug level: that is how the pings are seen.
    systemd-analyze log-level debug
    systemctl restart flowd || { systemd-analyze log-level info; fail "restart with WatchdogSec=3s failed"; return 1; }
    pid=$(prop MainPID) n=$(restarts)
    wait_for 10 "a WATCHDOG=1 ping from PID $pid" pid1_heard "$mark" "PID $pid.*WATCHDOG=1"
    local pinged=$?
    systemd-analyze log-level info
    [ "$pinged" -eq 0 ] || return 1
    mark=$(journal_mark)
    # A stopped process sends no pings; systemd must notice, kill it and start it again.
    kill -STOP "$pid"
    EXPECTED_RESTARTS=$((EXPECTED_RESTARTS + 1))
    wait_for 60 "flowd restarted by the watchdog" restarted_since "$pid" "$n" || return 1
    # The journal trails PID 1's state: wait for the line rather than expect it.
    wait_for 10 "PID 1 to log the watchdog timeout" pid1_heard "$mark" 'Watchdog timeout' || return 1
    rm -f /run/systemd/system/flowd.service.d/50-watchdog.conf
    systemctl daemon-reload
    systemctl restart flowd || { fail "restart with the shipped WatchdogSec failed"; return 1; }
    [ -z "$KILL_PATH" ] || [ "$(sprop "$KILL_PATH" CurrentStep)" = what ] ||
        fail "the session $KILL_PATH did not survive the watchdog restart"
}
# PID 1's log about flowd.service in this boot. A "mark" is its current length; pid1_heard
# looks only at what came after a mark.
pid1_log() { journalctl -b --no-pager -o cat _PID=1 UNIT=flowd.service; }
journal_mark() { pid1_log | wc -l; }
pid1_since() { pid1_log | tail -n "+$(($1 + 1))"; }
pid1_heard() { pid1_since "$1" | grep -q -E "$2"; } # MARK REGEX

check_reload() {
    local out
    sed -e 's/"id": "e2e"/"id": "e2e-reloaded"/' "$TESTS/flows/e2e.json" >/etc/flowd/flows/e2e-reloaded.json
    out=$(mcall ListFlows)
    ! grep -q '"e2e-reloaded"' <<<"$out" || { fail "e2e-reloaded listed before the reload"; return 1; }
    systemctl reload flowd || { fail "systemctl reload flowd failed"; return 1; }
    out=$(mcall ListFlows)
    grep -q '"e2e-reloaded"' <<<"$out" || { fail "e2e-reloaded not listed after systemctl reload: $out"; return 1; }
    rm -f /etc/flowd/flows/e2e-reloaded.json
    # and Reload called directly by root
    mcall Reload >/dev/null || { fail "Reload as root failed"; return 1; }
    out=$(mcall ListFlows)
    ! grep -q '"e2e-reloaded"' <<<"$out" || fail "e2e-reloaded still listed after its file was removed and flowd reloaded"
}

# --- administration: configuration that applies, failures that show (issue 21) -------------------
CONF_D=/etc/flowd/flowd.conf.d

# /etc/flowd stays root's: the unit must not hand it to the flowd user (ConfigurationDirectory=).
check_config_dir_root_owned() {
    is_state active || { systemctl start flowd || { fail "systemctl start flowd failed"; return 1; }; }
    local st
    st=$(stat -c '%U %a' /etc/flowd) || { fail "no /etc/flowd"; return 1; }
    [ "$st" = "root 755" ] || fail "/etc/flowd is '$st' after flowd started, expected 'root 755'"
}

# A fresh install has no /etc/flowd/flowd.conf in this container (only /usr is laid over): a
# drop-in alone must apply, and the journal must say which files were read.
check_dropin_without_main_file() {
    [ ! -e /etc/flowd/flowd.conf ] || { fail "/etc/flowd/flowd.conf exists; the check needs a fresh install without it"; return 1; }
    install -d -m 0755 "$CONF_D" "$E2E_SRV/flows"
    sed -e 's/"id": "e2e"/"id": "e2e-dropin"/' "$TESTS/flows/e2e.json" >"$E2E_SRV/flows/e2e-dropin.json"
    printf '[Daemon]\nFlowsDirectory=/etc/flowd/flows\nFlowsDirectory=%s/flows\nFlowsDirectory=/usr/share/flowd/flows\n' \
        "$E2E_SRV" >"$CONF_D/50-e2e.conf"
    local since out
    since=$(date +%s)
    systemctl restart flowd || { fail "systemctl restart flowd with only a drop-in failed"; return 1; }
    out=$(mcall ListFlows)
    grep -q '"e2e-dropin"' <<<"$out" || { fail "the drop-in's flows directory was not applied: $out"; return 1; }
    wait_for 10 "the journal naming the drop-in as read" journal_since_has "$since" "configuration read from $CONF_D/50-e2e.conf" ||
        return 1
    note "journal: $(journalctl -b -u flowd -o cat --no-pager --since "@$since" | grep -m1 'configuration read')"
}
journal_since_has() { journalctl -b -u flowd -o cat --no-pager --since "@$1" | grep -qF "$2"; } # SINCE TEXT

# flowd --check-config: the effective configuration and the files read; 78 and the file:line for an error.
check_check_config() {
    local out rc
    out=$(/usr/libexec/flowd --system --check-config 2>&1) || { fail "flowd --check-config failed: $out"; return 1; }
    grep -qF "# read: $CONF_D/50-e2e.conf" <<<"$out" || { fail "--check-config does not list the drop-in as read: $out"; return 1; }
    grep -qx "FlowsDirectory=$E2E_SRV/flows" <<<"$out" || { fail "--check-config does not show the effective FlowsDirectory=: $out"; return 1; }
    grep -qx "# flow e2e-dropin: served ($E2E_SRV/flows/e2e-dropin.json)" <<<"$out" || { fail "--check-config does not list the flows: $out"; return 1; }
    printf '[Limits]\nMaxSesions=3\n' >"$CONF_D/90-typo.conf"
    out=$(/usr/libexec/flowd --system --check-config 2>&1)
    rc=$?
    rm -f "$CONF_D/90-typo.conf"
    [ "$rc" -eq 78 ] || { fail "--check-config of a bad drop-in exited $rc, expected 78: $out"; return 1; }
    grep -qF "$CONF_D/90-typo.conf:2: unknown key \"MaxSesions\" in [Limits]" <<<"$out" ||
        { fail "--check-config does not name the file, line and key: $out"; return 1; }
}

# An isolated plugin under the shipped unit (docs/admin.md, "Isolate a plugin"): the shipped
# validators plugin runs in flowd-plugin-host, a child of flowd with a seccomp filter of its own
# on top of the unit's, NoNewPrivs and its RLIMIT_DATA, and flowd.hostname answers through it.
check_isolated_plugin() {
    local out pid helper mine theirs id mark
    printf '[Plugin validators]\nIsolated=yes\nMemoryLimit=256M\n' >"$CONF_D/60-e2e-isolate.conf"
    systemctl restart flowd || { fail "systemctl restart flowd with validators isolated failed"; rm -f "$CONF_D/60-e2e-isolate.conf"; return 1; }
    isolated_plugin_checks; local rc=$?
    rm -f "$CONF_D/60-e2e-isolate.conf"
    # systemctl signals every process of the unit, the helper too: the stop must be flowd's own
    # (it ends its helper and exits 0), not systemd's timeout and SIGKILL.
    mark=$(journal_mark)
    systemctl restart flowd || { fail "systemctl restart flowd without the isolation drop-in failed"; return 1; }
    stopped_by_itself "$mark" "with validators isolated" || return 1
    return $rc
}
# stopped_by_itself MARK WHAT: PID 1 logged, after MARK, that flowd.service was deactivated
# successfully (flowd exited 0 with nothing of the unit left running) and no stop timed out
# (systemd's "State 'final-sigterm' timed out. Killing.", "Failed with result 'timeout'").
stopped_by_itself() {
    local lines
    wait_for 10 "PID 1 to log the end of flowd.service" pid1_heard "$1" 'Deactivated successfully|Failed with result' || return 1
    lines=$(pid1_since "$1")
    if grep -qE "timed out|Failed with result|Killing" <<<"$lines"; then
        fail "the stop of flowd $2 was not flowd's own: $(grep -E 'timed out|Failed with result|Killing' <<<"$lines" | tr '\n' ' ')"
        return 1
    fi
    grep -q 'Deactivated successfully' <<<"$lines" || fail "flowd $2 was not deactivated cleanly: $lines"
}
isolated_plugin_checks() {
    out=$(mcall ListPlugins) || { fail "ListPlugins failed: $out"; return 1; }
    if grep -qE '"status" s "(failed|disabled)"' <<<"$out"; then fail "a plugin did not load with validators isolated: $out"; return 1; fi
    pid=$(prop MainPID)
    helper=$(pgrep -P "$pid" -f '^flowd-plugin-host ' | head -n 1)
    [ -n "$helper" ] || { fail "no flowd-plugin-host child of flowd (PID $pid): $(ps -o pid,args --ppid "$pid")"; return 1; }
    grep -qE '^NoNewPrivs:[[:space:]]+1$' "/proc/$helper/status" || { fail "flowd-plugin-host has no NoNewPrivs"; return 1; }
    mine=$(awk '/^Seccomp_filters:/ { print $2 }' "/proc/$helper/status")
    theirs=$(awk '/^Seccomp_filters:/ { print $2 }' "/proc/$pid/status")
    [ "${mine:-0}" -gt "${theirs:-0}" ] || { fail "flowd-plugin-host has $mine seccomp filters, flowd $theirs: none of its own"; return 1; }
    grep -qE '^Max data size +268435456 +268435456 +bytes' "/proc/$helper/limits" ||
        { fail "flowd-plugin-host's RLIMIT_DATA is not 256M: $(grep 'Max data size' "/proc/$helper/limits")"; return 1; }
    id=$(fc_start device-enrolment) && [ -n "$id" ] || { fail "flowctl start device-enrolment gave no session id"; return 1; }
    fc_set "$id" "hostname=ws-e2e-isolated" role=laptop || { fail "the isolated flowd.hostname refused a good host name"; return 1; }
    ! fc_set "$id" "hostname=-not-a-host-" || { fail "the isolated flowd.hostname accepted a bad host name"; return 1; }
    note "flowd-plugin-host PID $helper: seccomp filters $mine (flowd $theirs), $(grep 'Max data size' "/proc/$helper/limits" | tr -s ' ')"
    # docs/plugins.md, "Logging": `journalctl FLOWD_PLUGIN=<name>` finds flowd's lines about the plugin.
    journalctl --sync
    out=$(journalctl -b -u flowd -o cat --no-pager "_PID=$pid" FLOWD_PLUGIN=flowd.validators)
    grep -qE '^plugin flowd\.validators [^ ]+ loaded from ' <<<"$out" ||
        { fail "journalctl FLOWD_PLUGIN=flowd.validators has no line of this flowd (PID $pid) about loading it: $out"; return 1; }
    note "journalctl FLOWD_PLUGIN=flowd.validators: $(head -n 1 <<<"$out")"
}

# expect_failed_start STATUS REASON: flowd failed to start with exit STATUS, was not restarted, and
# REASON is in `journalctl -u flowd -p err` and in `systemctl status flowd`.
expect_failed_start() {
    local status=$1 reason=$2 got
    wait_for 30 "flowd failed" is_state failed || return 1
    got=$(prop ExecMainStatus)
    [ "$got" = "$status" ] || { fail "flowd exited with $got, expected $status"; return 1; }
    [ "$(restarts)" = 0 ] || { fail "flowd was restarted $(restarts) times after exit $status (RestartPreventExitStatus=)"; return 1; }
    wait_for 10 "'$reason' in journalctl -u flowd -p err" err_journal_has "$reason" || return 1
    # systemctl status exits 3 for a failed unit: read its output first (pipefail).
    got=$(systemctl status flowd --no-pager --full -n 20)
    grep -qF "$reason" <<<"$got" || { fail "systemctl status flowd does not show '$reason': $got"; return 1; }
    note "journal -p err: $(journalctl -b -u flowd -p err -o cat --no-pager | grep -F "$reason" | tail -n 1)"
}
err_journal_has() { journalctl -b -u flowd -p err -o cat --no-pager | grep -qF "$1"; }

check_config_error_shown() {
    printf '[Limits]\nMaxSesions=3\n' >"$CONF_D/90-typo.conf"
    local rc=0
    if systemctl restart flowd 2>/dev/null; then
        fail "flowd started with an unknown key in a drop-in"
        rc=1
    else
        expect_failed_start 78 "$CONF_D/90-typo.conf:2: unknown key \"MaxSesions\" in [Limits]" || rc=1
    fi
    # Fixing the file is enough: no reset-failed.
    rm -f "$CONF_D/90-typo.conf"
    systemctl start flowd || { fail "systemctl start flowd after the fix failed: $(systemctl status flowd --no-pager -n 5)"; return 1; }
    return $rc
}

check_state_dir_error_shown() {
    local db=/var/lib/flowd/sessions.sqlite
    systemctl stop flowd
    install -d -m 0700 -o root -g root /var/lib/flowd-e2e-saved
    mv "$db" "$db"-wal "$db"-shm /var/lib/flowd-e2e-saved/ 2>/dev/null
    mkdir "$db"   # a directory where the database should be: it cannot be opened
    local rc=0 invocation
    if systemctl start flowd 2>/dev/null; then
        fail "flowd started without a usable database"
        rc=1
    else
        expect_failed_start 73 "cannot open the session database" || rc=1
        # That start's entry sent with sd_journal_sendv before the failure is the unit's too,
        # although flowd may be gone before journald reads it.
        invocation=$(prop InvocationID)
        journalctl -b -o cat --no-pager _SYSTEMD_UNIT=flowd.service "_SYSTEMD_INVOCATION_ID=$invocation" |
            grep -qF "configuration read from" ||
            { fail "the failed start's 'configuration read from' entry is not under flowd.service ($invocation)"; rc=1; }
    fi
    systemctl stop flowd 2>/dev/null
    rmdir "$db"
    mv /var/lib/flowd-e2e-saved/* /var/lib/flowd/ && rmdir /var/lib/flowd-e2e-saved
    systemctl start flowd || { fail "systemctl start flowd after the fix failed"; return 1; }
    return $rc
}

check_reload_error_shown() {
    local pid out
    pid=$(prop MainPID)
    printf '[Limits]\nIdleTimeout=soon\n' >"$CONF_D/90-typo.conf"
    out=$(systemctl reload flowd 2>&1) && { fail "systemctl reload with a bad drop-in succeeded"; rm -f "$CONF_D/90-typo.conf"; return 1; }
    rm -f "$CONF_D/90-typo.conf.kept"
    is_state active && [ "$(prop MainPID)" = "$pid" ] ||
        { fail "flowd did not keep running after a failed reload"; rm -f "$CONF_D/90-typo.conf"; return 1; }
    wait_for 10 "the failed reload's reason in journalctl -u flowd -p err" err_journal_has "reload failed" || return 1
    err_journal_has "$CONF_D/90-typo.conf:2: [Limits] IdleTimeout: expected a time span" ||
        { fail "the failed reload's journal entry does not name the file and key: $(journalctl -b -u flowd -p err -o cat --no-pager | tail -n 2)"; return 1; }
    out=$(systemctl status flowd --no-pager --full -n 20)
    grep -qF "90-typo.conf:2" <<<"$out" || { fail "systemctl status flowd does not show the failed reload's reason: $out"; return 1; }
    rm -f "$CONF_D/90-typo.conf"
    systemctl reload flowd || fail "systemctl reload after the fix failed"
}

# STATUS= names the version, and flowctl --system status shows what GetStatus reports.
check_status_report() {
    local text out
    text=$(prop StatusText)
    grep -qE '^flowd [0-9][^:]*: [0-9]+ sessions, [0-9]+ flows.*, [0-9]+ plugins' <<<"$text" ||
        { fail "STATUS= is '$text', expected 'flowd VERSION: N sessions, N flows…, N plugins…'"; return 1; }
    out=$(flowctl --system status 2>&1) || { fail "flowctl --system status failed: $out"; return 1; }
    sed 's/^/      /' <<<"$out"
    grep -qE '^Version +[0-9]' <<<"$out" && grep -qE '^Uptime ' <<<"$out" && grep -qE '^Sessions ' <<<"$out" &&
        grep -qE '^Plugins +5 loaded, 0 failed' <<<"$out" && grep -qE '^State +/var/lib/flowd, ' <<<"$out" &&
        grep -qE '^Limits .*MaxSessionsPerUser=64' <<<"$out" ||
        fail "flowctl --system status lacks a line (Version, Uptime, Sessions, Plugins 5 loaded, Limits, State)"
}

# A bad flow file is refused: STATUS= and flowctl status say so, with the reason.
check_refused_flow_reported() {
    local out
    printf '{"format": 1, "id": "e2e-broken"}\n' >/etc/flowd/flows/e2e-broken.json
    systemctl reload flowd || { fail "systemctl reload failed"; return 1; }
    wait_for 10 "STATUS= to count the refused flow" status_says '(1 refused)' || return 1
    out=$(flowctl --system status 2>&1)
    grep -qF '/etc/flowd/flows/e2e-broken.json' <<<"$out" || { fail "flowctl status does not name the refused file: $out"; return 1; }
    rm -f /etc/flowd/flows/e2e-broken.json
    systemctl reload flowd || fail "systemctl reload failed"
}
status_says() { prop StatusText | grep -qF "$1"; }

# A submitted session does not count toward MaxSessionsPerUser; the limit that refuses has a MESSAGE_ID.
check_settled_and_limit() {
    local first second err path
    # nobody starts with no session (an earlier check left one).
    for path in $(runuser -u nobody -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" ListSessions |
        grep -oE '/org/flowd/Flow1/session/[0-9a-f]{32}'); do
        as_nobody "$path" Close >/dev/null
    done
    printf '[Limits]\nMaxSessionsPerUser=1\n' >"$CONF_D/60-e2e-limit.conf"
    systemctl reload flowd || { fail "systemctl reload failed"; return 1; }
    # Driven as nobody over the bus (a PIN that is not the suite's secret: runuser logs its command line).
    first=$(start_session runuser -u nobody -- e2e)
    as_nobody "$first" SetAnswers 'a{sv}' 2 name s Nobody pin s 4321 >/dev/null && as_nobody "$first" Continue >/dev/null &&
        as_nobody "$first" SetAnswers 'a{sv}' 1 topic s limits >/dev/null && as_nobody "$first" Continue >/dev/null &&
        as_nobody "$first" Submit >/dev/null
    [ "$(sprop "$first" State)" = submitted ] || { fail "nobody's session $first is '$(sprop "$first" State)'"; cleanup_limit; return 1; }
    second=$(start_session runuser -u nobody -- e2e) && [ -n "$second" ] ||
        { fail "a submitted session kept nobody from starting another (MaxSessionsPerUser=1)"; cleanup_limit; return 1; }
    err=$(runuser -u nobody -- busctl --system call "$BUS" "$MANAGER" "$IMANAGER" StartSession 'sa{sv}' e2e 0 2>&1)
    grep -qF 'already has the maximum of 1 sessions' <<<"$err" ||
        { fail "a second open session gave '$err', expected LimitExceeded"; cleanup_limit; return 1; }
    wait_for 10 "the limit's journal entry (MESSAGE_ID=$MSG_LIMIT) naming uid 65534" limit_logged || { cleanup_limit; return 1; }
    mcall GetSession s "$(path_id "$second")" >/dev/null && scall "$second" Close >/dev/null
    cleanup_limit
}
as_nobody() { local path=$1; shift; runuser -u nobody -- busctl --system --timeout=30 call "$BUS" "$path" "$ISESSION" "$@"; }
MSG_LIMIT=d8c9948098dc411b8c1f88ac55fd1485
limit_logged() { journalctl -b -u flowd -o cat --no-pager MESSAGE_ID=$MSG_LIMIT | grep -q 'uid 65534 cannot start a session of e2e'; }
cleanup_limit() { rm -f "$CONF_D/60-e2e-limit.conf"; systemctl reload flowd; }

# --- the example drop-ins: the command and webhook actions under the shipped sandbox --------------
# The drop-ins are the installed examples (/usr/share/doc/flowd/examples/flowd.service.d/), changed
# only the way docs/admin.md tells an administrator to change them.
EXAMPLES=/usr/share/doc/flowd/examples/flowd.service.d
DROPINS=/etc/systemd/system/flowd.service.d
E2E_SRV=/srv/flowd-e2e                  # the hook (hooks/), what it writes (out/), the listener's files
MSG_SUBMIT_FAILED=3550d87f29a447688ec07bdacf7f7164
WEBHOOK_PORT=8080                       # support-request's URL: http://127.0.0.1:8080/flowd/support
LISTENER_PID=""

# has_lines EXAMPLE REGEX...: the installed example has a line for each REGEX (the lines
# docs/admin.md says to edit).
has_lines() {
    local file=$EXAMPLES/$1 re
    shift
    [ -f "$file" ] || { fail "$file is not installed"; return 1; }
    for re in "$@"; do
        grep -qE "$re" "$file" || { fail "$file has no line /$re/, which docs/admin.md says to edit"; return 1; }
    done
}
# install_dropin NAME SED-ARGS...: installs the example NAME edited with sed as a drop-in, then
# daemon-reload and restart.
install_dropin() {
    local name=$1
    shift
    mkdir -p "$DROPINS"
    sed "$@" "$EXAMPLES/$name" >"$DROPINS/$name"
    grep -vE '^[[:space:]]*(#|$)' "$DROPINS/$name" | sed "s|^|      $name: |"
    systemctl daemon-reload || { fail "daemon-reload failed"; return 1; }
    systemctl restart flowd || { fail "systemctl restart flowd with $name failed"; return 1; }
    systemctl show -P DropInPaths flowd | grep -qF "$DROPINS/$name" ||
        { fail "flowd.service does not list the drop-in $DROPINS/$name: $(systemctl show -P DropInPaths flowd)"; return 1; }
}
session_state() { sprop "$MANAGER/session/$1" State; }
receipt() { bus get-property "$BUS" "$MANAGER/session/$1" "$ISESSION" Receipt; }
# flowd_journal SESSION MESSAGE-ID: flowd's journal entries of that kind for the session.
flowd_journal() { journalctl -b -u flowd -o cat --no-pager "FLOWD_SESSION=$1" "MESSAGE_ID=$2"; }
journal_says() { flowd_journal "$1" "$2" | grep -q -E "$3"; } # SESSION MESSAGE-ID REGEX
# expect_submit_refused ID PID WHAT: the submit of session ID fails cleanly (SubmitFailed, state
# failed, a reason in the journal) and flowd, main PID PID, is still up; WHAT is the expected reason.
expect_submit_refused() {
    local id=$1 pid=$2 reason=$3 err state
    err=$(fc_submit_result "$id")
    [ "$err" = org.flowd.Flow1.Error.SubmitFailed ] ||
        { fail "submit without the drop-in gave '$err', expected org.flowd.Flow1.Error.SubmitFailed"; return 1; }
    state=$(session_state "$id")
    [ "$state" = failed ] || { fail "session $id is '$state' after the failed submit, expected 'failed'"; return 1; }
    note "LastError (what the person reads): $(sprop "$MANAGER/session/$id" LastError)"
    wait_for 10 "flowd's 'submit failed' journal entry for $id saying: $reason" \
        journal_says "$id" "$MSG_SUBMIT_FAILED" "$reason" || return 1
    note "journal: $(flowd_journal "$id" "$MSG_SUBMIT_FAILED" | tail -n 1)"
    is_state active && [ "$(prop MainPID)" = "$pid" ] ||
        { fail "flowd did not survive the failed submit: $(systemctl is-active flowd), PID $(prop MainPID) (was $pid)"; return 1; }
}

# Every shipped example starts flowd as shipped, and with every commented-out setting uncommented.
check_examples_start() {
    local f name variant
    for f in "$EXAMPLES"/*.conf; do
        name=$(basename "$f")
        for variant in shipped uncommented; do
            if [ "$variant" = shipped ]; then
                install_dropin "$name" -e '' || return 1
            else
                install_dropin "$name" -e 's/^#\([A-Z][A-Za-z]*=\)/\1/' || return 1
            fi
            is_state active || { fail "flowd is $(systemctl is-active flowd) with $name ($variant)"; return 1; }
            note "$name ($variant): flowd active"
            rm -f "$DROPINS/$name"
        done
    done
    systemctl daemon-reload && systemctl restart flowd || fail "restart without the examples failed"
}

SID=""
REFUSED_ID=""   # the session check_command_without_dropin could not submit
start_e2e_command() { # NOTE: SID becomes an e2e-command session on Review
    SID=$(fc_start e2e-command) && [ -n "$SID" ] || { fail "flowctl start e2e-command gave no session id"; return 1; }
    fc_set "$SID" "note=$1" || { fail "flowctl set note failed"; return 1; }
    fc_continue "$SID" || fail "flowctl continue (to Review) failed"
}

check_command_without_dropin() {
    [ ! -e "$DROPINS/command.conf" ] || { fail "$DROPINS/command.conf is already installed"; return 1; }
    install -d -m 0755 "$E2E_SRV" "$E2E_SRV/hooks"
    install -m 0755 "$TESTS/fixtures/e2e-hook" "$E2E_SRV/hooks/e2e-hook"
    install -d -m 0700 -o flowd -g flowd "$E2E_SRV/out"
    is_state active || { systemctl start flowd || { fail "systemctl start flowd failed"; return 1; }; }
    local id
    start_e2e_command "refused at first" || return 1
    id=$SID
    REFUSED_ID=$id
    # The shipped unit executes nothing outside flowd's own directories (NoExecPaths=/).
    expect_submit_refused "$id" "$(prop MainPID)" "execve $E2E_SRV/hooks/e2e-hook: Permission denied" || return 1
    [ ! -e "$E2E_SRV/out/$id" ] || fail "the hook ran although the shipped unit forbids it: $E2E_SRV/out/$id exists"
}

check_command_with_dropin() {
    # docs/admin.md: point ExecPaths= at the hook's directory, add the script's interpreter, and
    # the directory it writes to as ReadWritePaths=. Also, for the example flow device-enrolment
    # (check_device_enrolment), the line that allows /usr/bin/logger.
    has_lines command.conf '^ExecPaths=-/usr/local/libexec/flowd-hooks$' '^#ReadWritePaths=' '^#ExecPaths=/usr/bin/logger$' ||
        return 1
    install_dropin command.conf \
        -e "s|^ExecPaths=-/usr/local/libexec/flowd-hooks\$|ExecPaths=$E2E_SRV/hooks /usr/bin/sh|" \
        -e "s|^#ReadWritePaths=.*|ReadWritePaths=$E2E_SRV/out|" \
        -e "s|^#ExecPaths=/usr/bin/logger\$|ExecPaths=/usr/bin/logger|" || return 1
    local id state out
    start_e2e_command "Hello from the end-to-end suite" || return 1
    id=$SID
    fc_submit "$id" || { fail "flowctl submit failed with the drop-in: $(sprop "$MANAGER/session/$id" LastError)"; return 1; }
    state=$(session_state "$id")
    [ "$state" = submitted ] || { fail "session $id is '$state' after submit, expected submitted"; return 1; }
    out=$E2E_SRV/out/$id
    [ -f "$out" ] || { fail "the hook did not write $out"; return 1; }
    grep -qx "FLOWD_FLOW=e2e-command" "$out" && grep -qx "FLOWD_SESSION=$id" "$out" ||
        { fail "the hook's environment is not what flowd.command documents: $(head -n 4 "$out" | tr '\n' ' ')"; return 1; }
    grep -qF '"note":"Hello from the end-to-end suite"' "$out" ||
        { fail "the hook did not get the answers on standard input: $(tail -n 1 "$out")"; return 1; }
    receipt "$id" | grep -qF "\"E2E-COMMAND-$id\"" || { fail "the hook's receipt is not the session's: $(receipt "$id")"; return 1; }
    note "the hook ran as $(stat -c %U "$out") and wrote $out; receipt: $(receipt "$id")"
    # The session refused without the drop-in goes through now (docs/admin.md says so).
    [ -n "$REFUSED_ID" ] || { fail "no refused session to submit again (the previous check failed)"; return 1; }
    fc_submit "$REFUSED_ID" && [ "$(session_state "$REFUSED_ID")" = submitted ] ||
        { fail "the session refused before the drop-in is '$(session_state "$REFUSED_ID")' after submitting again"; return 1; }
    grep -qF '"note":"refused at first"' "$E2E_SRV/out/$REFUSED_ID" ||
        { fail "the hook did not run for the session submitted again ($E2E_SRV/out/$REFUSED_ID)"; return 1; }
    note "the session refused before the drop-in ($REFUSED_ID) is submitted now"
}

check_device_enrolment() {
    # docs/admin.md's table: command.conf with its ExecPaths=/usr/bin/logger line uncommented, nothing else.
    install_dropin command.conf -e "s|^#ExecPaths=/usr/bin/logger\$|ExecPaths=/usr/bin/logger|" || return 1
    local id state host when
    host="ws-e2e-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
    when=$(date -d '+1 day' +%F)   # the flow takes a handover date 0 to 30 days ahead
    id=$(fc_start device-enrolment) && [ -n "$id" ] || { fail "flowctl start device-enrolment gave no session id"; return 1; }
    fc_set "$id" "hostname=$host" role=laptop && fc_continue "$id" || { fail "step 'device' was not accepted"; return 1; }
    fc_set "$id" ownerEmail=it@example.org "handoverDate=$when" && fc_continue "$id" ||
        { fail "step 'handover' was not accepted"; return 1; }
    fc_submit "$id" || { fail "flowctl submit failed: $(sprop "$MANAGER/session/$id" LastError)"; return 1; }
    state=$(session_state "$id")
    [ "$state" = submitted ] || { fail "session $id is '$state' after submit, expected submitted"; return 1; }
    # The flow runs `logger --tag flowd-enrolment` with the submission on its standard input.
    wait_for 10 "logger's journal entry (tag flowd-enrolment) with $host" logger_heard "$host" || return 1
    note "journal: $(journalctl -b -t flowd-enrolment -o cat --no-pager | grep -F "$host" | cut -c 1-100)…"
}
logger_heard() { journalctl -b -t flowd-enrolment -o cat --no-pager | grep -qF "$1"; }

# The listener serves support-request's URL (run by checks.sh, as root, in the container's
# network namespace); stop_listener ends it.
start_listener() {
    [ -z "$LISTENER_PID" ] || return 0
    rm -rf "$E2E_SRV/http"   # it numbers its requests from 1
    install -d -m 0755 "$E2E_SRV/http"
    /usr/bin/perl "$TESTS/fixtures/http-listener.pl" "$WEBHOOK_PORT" "$E2E_SRV/http" >>"$RESULTS/listener.log" 2>&1 &
    LISTENER_PID=$!
    wait_for 10 "the HTTP listener on 127.0.0.1:$WEBHOOK_PORT" test -e "$E2E_SRV/http/ready" ||
        { note "listener: $(cat "$RESULTS/listener.log")"; return 1; }
}
stop_listener() {
    [ -n "$LISTENER_PID" ] || return 0
    kill "$LISTENER_PID" 2>/dev/null
    wait "$LISTENER_PID" 2>/dev/null
    LISTENER_PID=""
    return 0
}
requests() { find "$E2E_SRV/http" -name 'request-*' ! -name '*.tmp' | wc -l; }

start_support_request() { # DETAILS: SID becomes a support-request session on Review
    SID=$(fc_start support-request) && [ -n "$SID" ] || { fail "flowctl start support-request gave no session id"; return 1; }
    fc_set "$SID" area=printer "details=$1" urgent=no && fc_continue "$SID" ||
        { fail "step 'problem' was not accepted"; return 1; }
    fc_set "$SID" "name=Ada Lovelace" email=ada@example.org && fc_continue "$SID" ||
        fail "step 'contact' was not accepted"
}

# N plugins that crash flowd while it loads them: each start disables the one it
# found crashed (recorded before the next plugin loads), so start N + 1 serves,
# and the unit's start limit must allow that many starts before it gives up.
CRASHERS=6
CRASH_DIR=/srv/flowd-crashers
check_crash_loop() {
    local burst i mark since n entry list
    burst=$(prop StartLimitBurst)
    [ $((CRASHERS + 1)) -le "$burst" ] ||
        { fail "$CRASHERS crashing plugins need $((CRASHERS + 1)) starts; the unit allows $burst (StartLimitBurst=)"; return 1; }
    install -d -m 0755 "$CRASH_DIR"
    for i in $(seq 1 "$CRASHERS"); do
        install -m 0644 -o root -g root /flowd-fixtures/crash-in-constructor.so "$CRASH_DIR/crash-$i.so"
    done
    mkdir -p /etc/flowd/flowd.conf.d "$DROPINS"
    printf '[Daemon]\nPluginDirectory=/usr/lib/flowd/plugins\nPluginDirectory=%s\n' "$CRASH_DIR" \
        >/etc/flowd/flowd.conf.d/50-crashers.conf
    printf '[Service]\nExecPaths=%s\n' "$CRASH_DIR" >"$DROPINS/50-crashers.conf"
    systemctl daemon-reload
    mark=$(journal_mark) since=$(date +%s)
    # The first start crashes, so the start job fails; systemd restarts it.
    systemctl restart flowd 2>/dev/null
    EXPECTED_RESTARTS=$((EXPECTED_RESTARTS + CRASHERS))
    wait_for 120 "flowd active after $CRASHERS crashing starts" active_since_crashes "$mark" || return 1
    n=$(pid1_since "$mark" | grep -c 'Scheduled restart job')
    [ "$n" -eq "$CRASHERS" ] || { fail "flowd was restarted $n times, expected $CRASHERS (one per crashing plugin)"; return 1; }
    ! pid1_since "$mark" | grep -q 'Start request repeated too quickly' || { fail "systemd's start limit was hit"; return 1; }
    # One "crashed the daemon" entry per plugin, each from the start after its crash.
    n=$(journalctl -b -u flowd -o cat --no-pager --since "@$since" MESSAGE_ID=c126ad6741fd4a429855a3da02f6e5b8 |
        grep -c 'crashed the daemon during loading')
    [ "$n" -eq "$CRASHERS" ] || { fail "$n plugin-crashed entries in the journal, expected $CRASHERS"; return 1; }
    list=$(fc --json plugins | tr -d '\n')
    for i in $(seq 1 "$CRASHERS"); do
        entry=$(grep -o '{[^{}]*"'"$CRASH_DIR/crash-$i"'\.so"[^{}]*}' <<<"$list")
        grep -q '"status": *"disabled"' <<<"$entry" || { fail "crash-$i.so is not disabled: ${entry:-not listed}"; return 1; }
    done
    note "$CRASHERS plugins crashed flowd while loading; start $((CRASHERS + 1)) served with all of them disabled (StartLimitBurst=$burst)"
    rm -f /etc/flowd/flowd.conf.d/50-crashers.conf "$DROPINS/50-crashers.conf"
    rm -rf "$CRASH_DIR"
    systemctl daemon-reload
    systemctl restart flowd || fail "restart without the crashing plugins failed"
}
active_since_crashes() { # MARK
    is_state active && pid1_since "$1" | grep -q 'Started flowd'
}

check_webhook_without_dropin() {
    [ ! -e "$DROPINS/webhook.conf" ] || { fail "$DROPINS/webhook.conf is already installed"; return 1; }
    start_listener || return 1
    local id
    start_support_request "The printer on floor 2 is jammed (refused)" || return 1
    id=$SID
    # The shipped unit has no network: only AF_UNIX sockets, in a network namespace of its own.
    expect_submit_refused "$id" "$(prop MainPID)" 'flowd\.webhook: .*connect' || return 1
    [ "$(requests)" -eq 0 ] || fail "the listener got a request although the shipped unit has no network"
}

check_webhook_with_dropin() {
    # docs/admin.md: IPAddressAllow= the webhook's server (support-request posts to 127.0.0.1).
    has_lines webhook.conf '^IPAddressAllow=192\.0\.2\.10$' || return 1
    install_dropin webhook.conf -e "s|^IPAddressAllow=192.0.2.10\$|IPAddressAllow=127.0.0.1|" || return 1
    start_listener || return 1
    local id state before req details
    details="The printer on floor 3 is jammed ($(od -An -N4 -tx1 /dev/urandom | tr -d ' \n'))"
    before=$(requests)
    start_support_request "$details" || return 1
    id=$SID
    fc_submit "$id" || { fail "flowctl submit failed with the drop-in: $(sprop "$MANAGER/session/$id" LastError)"; return 1; }
    state=$(session_state "$id")
    [ "$state" = submitted ] || { fail "session $id is '$state' after submit, expected submitted"; return 1; }
    [ "$(requests)" -eq $((before + 1)) ] || { fail "the listener got $(($(requests) - before)) requests, expected 1"; return 1; }
    req=$E2E_SRV/http/request-$((before + 1))
    head -n 1 "$req" | grep -q '^POST /flowd/support HTTP/1\.1' || { fail "not a POST to /flowd/support: $(head -n 1 "$req")"; return 1; }
    grep -qi '^Idempotency-Key: ' "$req" && grep -qi '^Content-Type: application/json' "$req" ||
        { fail "the request lacks the documented headers: $(grep -i '^[a-z-]*:' "$req" | tr '\r\n' '  ')"; return 1; }
    grep -qF "\"details\":\"$details\"" "$req" || { fail "the request body lacks the answers: $(tail -n 1 "$req")"; return 1; }
    receipt "$id" | grep -qF '"E2E-WEBHOOK-' || { fail "the server's receipt is not the session's: $(receipt "$id")"; return 1; }
    note "the listener got $(head -n 1 "$req" | tr -d '\r') with $(wc -c <"$req") bytes; receipt: $(receipt "$id")"
}

check_dropins_removed() {
    stop_listener
    rm -f "$DROPINS/command.conf" "$DROPINS/webhook.conf"
    systemctl daemon-reload || { fail "daemon-reload failed"; return 1; }
    systemctl restart flowd || { fail "systemctl restart flowd without the drop-ins failed"; return 1; }
    local d
    d=$(systemctl show -P DropInPaths flowd)
    ! grep -qE 'command\.conf|webhook\.conf' <<<"$d" || fail "flowd.service still has the drop-ins: $d"
}

# support-request's webhook from the per-user flowd: the user unit allows only AF_UNIX sockets
# until the drop-in docs/admin.md gives for `systemctl --user edit flowd` is in place.
check_user_webhook() {
    FC_AS=(as_user) FC_BUS=--user
    user_webhook
    local rc=$?
    FC_AS=() FC_BUS=--system
    return $rc
}
user_webhook() {
    start_user_manager || return 1
    start_listener || return 1
    local home dir err before
    home=$(getent passwd "$E2E_USER" | cut -d: -f6)
    dir=$home/.config/systemd/user/flowd.service.d    # where `systemctl --user edit flowd` writes
    as_user rm -f "$dir/override.conf"
    as_user systemctl --user daemon-reload
    before=$(requests)
    start_support_request "The scanner is offline (per-user, refused)" || return 1
    err=$(fc_submit_result "$SID")
    [ "$err" = org.flowd.Flow1.Error.SubmitFailed ] ||
        { fail "the user unit without the drop-in: submit gave '$err', expected SubmitFailed"; return 1; }
    user_unit_is active || { fail "the user's flowd is $(as_user systemctl --user is-active flowd) after the failed submit"; return 1; }
    [ "$(requests)" -eq "$before" ] || { fail "the listener got a request although the user unit allows only AF_UNIX"; return 1; }
    as_user mkdir -p "$dir"
    printf '[Service]\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n' | as_user tee "$dir/override.conf" >/dev/null
    as_user systemctl --user daemon-reload
    as_user systemctl --user restart flowd || { fail "systemctl --user restart flowd with the drop-in failed"; return 1; }
    as_user systemctl --user show -P DropInPaths flowd | grep -qF "$dir/override.conf" ||
        { fail "the user's flowd.service does not list $dir/override.conf"; return 1; }
    start_support_request "The scanner is offline (per-user)" || return 1
    err=$(fc_submit_result "$SID")
    [ "$err" = submitted ] || { fail "the user unit with the drop-in: submit gave '$err'"; return 1; }
    [ "$(requests)" -eq $((before + 1)) ] || { fail "the listener got $(($(requests) - before)) requests, expected 1"; return 1; }
    grep -qF '"details":"The scanner is offline (per-user)"' "$E2E_SRV/http/request-$((before + 1))" ||
        { fail "the per-user flowd's POST lacks the answers: $(tail -n 1 "$E2E_SRV/http/request-$((before + 1))")"; return 1; }
    note "the per-user flowd POSTed session $SID as uid $(id -u "$E2E_USER")"
    as_user rm -f "$dir/override.conf"
    as_user systemctl --user daemon-reload
    as_user systemctl --user stop flowd
    stop_listener
}

check_journal() {
    [ -n "$FLOW_ID" ] || { fail "no flow was run (the flowctl check failed)"; return 1; }
    local entries
    wait_for 10 "a journal entry with FLOWD_SESSION=$FLOW_ID" journal_has "FLOWD_SESSION=$FLOW_ID" || return 1
    entries=$(journalctl -b -u flowd -o json --no-pager "FLOWD_SESSION=$FLOW_ID")
    grep -q '"FLOWD_FLOW":"e2e"' <<<"$entries" || { fail "entries for the session lack FLOWD_FLOW=e2e"; return 1; }
    grep -q '"MESSAGE_ID":"[0-9a-f]\{32\}"' <<<"$entries" || { fail "entries for the session carry no MESSAGE_ID"; return 1; }
    grep -qF "\"MESSAGE\":\"session $FLOW_ID of e2e started by uid 0\"" <<<"$entries" ||
        { fail "the session-started entry does not name the session, flow and uid in its text"; return 1; }
    note "$(wc -l <<<"$entries") entries for session $FLOW_ID; MESSAGE_IDs: $(grep -o '"MESSAGE_ID":"[0-9a-f]*"' <<<"$entries" | sort -u | cut -d'"' -f4 | tr '\n' ' ')"
}

journal_has() { journalctl -b -u flowd -o cat --no-pager "$1" | grep -q .; }

# libdispatch's "Failed to set thread priority" lines (one per worker thread) stay out of the journal.
check_no_dispatch_noise() {
    local n
    n=$(journalctl -b -u flowd -o cat --no-pager | grep -c 'Failed to set thread priority')
    [ "$n" -eq 0 ] || fail "the journal has $n lines 'Failed to set thread priority' from libdispatch"
}

# The installed journal catalog explains flowd's MESSAGE_IDs (journalctl -x).
check_catalog() {
    local out
    out=$(journalctl --list-catalog 2>&1 | grep -c ' flowd: ')
    [ "$out" -ge 12 ] || { fail "the journal catalog has $out flowd entries, expected 12: $(journalctl --list-catalog | grep flowd)"; return 1; }
    out=$(journalctl -b -x -u flowd --no-pager -o short MESSAGE_ID=995f4e09ab32461ebef85cbb74068c45 | tail -n 20)
    grep -qF 'A flowd session was started' <<<"$out" || { fail "journalctl -x does not explain 'session started': $out"; return 1; }
}

check_no_secret_anywhere() {
    # Have journald write out everything it has received before it is searched.
    journalctl --sync && journalctl --flush || { fail "journalctl --sync/--flush failed"; return 1; }
    if journalctl -o export --no-pager | grep -a -q -F "$SECRET"; then
        fail "the secure value appears in the journal: $(journalctl -o export --no-pager | grep -a -F "$SECRET" | head -n 3)"
        return 1
    fi
    if grep -r -a -l -F "$SECRET" /var/lib/flowd /var/log /tmp /var/tmp 2>/dev/null | grep -q .; then
        fail "the secure value is on disk: $(grep -r -a -l -F "$SECRET" /var/lib/flowd /var/log /tmp /var/tmp 2>/dev/null | tr '\n' ' ')"
    fi
}

check_stop() {
    local mark pid lines
    pid=$(prop MainPID)
    mark=$(journal_mark)
    # systemd logs every sd_notify message at debug level: that is how STOPPING=1 is seen.
    systemd-analyze log-level debug
    systemctl stop flowd
    systemd-analyze log-level info
    is_state inactive || { fail "flowd is $(systemctl is-active flowd) after stop"; return 1; }
    # The unit is garbage-collected once inactive, so its exit status is read from PID 1's log,
    # which trails its state: wait for the last line.
    wait_for 10 "PID 1 to log the end of flowd.service" pid1_heard "$mark" 'Deactivated successfully|Failed with result' || return 1
    lines=$(pid1_since "$mark")
    grep -q "notification message from PID $pid.*STOPPING=1" <<<"$lines" ||
        { fail "flowd (PID $pid) did not send STOPPING=1"; return 1; }
    grep -q 'Main process exited, code=exited, status=0/SUCCESS' <<<"$lines" ||
        { fail "flowd did not exit with status 0: $(grep 'Main process exited' <<<"$lines")"; return 1; }
    grep -q 'Deactivated successfully' <<<"$lines" || fail "flowd.service was not deactivated cleanly"
}

EXPECTED_RESTARTS=0
check_no_unexpected_restarts() {
    local n
    # NRestarts is reset by a manual restart; PID 1 logs every automatic one.
    n=$(journalctl -b -u flowd _PID=1 -o cat --no-pager | grep -c 'Scheduled restart job')
    [ "$n" -eq "$EXPECTED_RESTARTS" ] || fail "flowd restarted $n times; the checks caused $EXPECTED_RESTARTS (a missed watchdog ping or a crash?)"
}

# --- the run -------------------------------------------------------------------------------------
log "flowd end-to-end checks ($MODE) in $(systemd-detect-virt 2>/dev/null || echo a container), systemd $(systemctl --version | head -n 1 | cut -d' ' -f2)"
check "the installed tree runs without the Swift toolchain" check_no_toolchain
check "post-install: sysusers creates flowd, systemd and dbus reload" check_postinst
check "systemd-analyze verify flowd.service is clean" check_unit_verify
check "org.flowd.Flow1 is activatable on the system bus" check_activatable
check "bus policy: only the flowd user may own org.flowd.Flow1" check_bus_policy
if [ "$MODE" = --smoke ]; then
    check "flowd --version runs under the shipped sandbox; journal and state directory" check_smoke_service
    check "flowd --version runs under the user unit" check_user_unit_smoke
else
    check "systemctl start: active, STATUS= shown by systemctl status" check_start_status
    check "every shipped plugin loads under the sandbox" check_plugins_loaded
    check "D-Bus activation: ListFlows starts a stopped flowd" check_activation
    check "/etc/flowd stays root's after flowd started" check_config_dir_root_owned
    check "a drop-in without flowd.conf applies; the journal names the files read" check_dropin_without_main_file
    check "flowd --check-config: effective configuration; 78 and file:line for an error" check_check_config
    check "an isolated plugin under the shipped unit: its own seccomp filter and memory limit, and it answers" check_isolated_plugin
    check "a configuration error: exit 78, not restarted, reason at err in journal and status; fixed by the file" check_config_error_shown
    check "an unopenable database: exit 73, not restarted, reason at err in journal and status" check_state_dir_error_shown
    check "a failed reload: flowd keeps running, the reason at err in journal and status" check_reload_error_shown
    check "a whole flow with flowctl --system ends in the spool" check_flow_with_flowctl
    check "another user: own session yes, root's session refused (polkit: InteractiveAuthorizationRequired)" check_other_user
    check "polkit: a rule lets a group manage sessions; others refused; polkit gone fails closed" check_polkit
    check "flowctl --system reload on a terminal: bob types root's password (in a login session and outside one); a wrong one and --no-ask-password refused" check_polkit_password
    check "SIGKILL: restarted, the session intact at its path" check_kill_restart
    check "no watchdog pings: restarted" check_watchdog
    check "systemctl reload picks up a new flow file" check_reload
    check "STATUS= names the version; flowctl --system status reports the daemon" check_status_report
    check "a refused flow shows in STATUS= and flowctl status" check_refused_flow_reported
    check "a submitted session does not count toward MaxSessionsPerUser; the limit is logged with a MESSAGE_ID" check_settled_and_limit
    check "every example drop-in starts flowd, as shipped and with every line uncommented" check_examples_start
    check "command action, shipped unit: SubmitFailed (exec denied), flowd unharmed" check_command_without_dropin
    check "command action with the example drop-in: the hook runs, submitted" check_command_with_dropin
    check "device-enrolment (logger) with the drop-in as docs/admin.md says: submitted" check_device_enrolment
    check "webhook action, shipped unit: SubmitFailed (no network), nothing sent" check_webhook_without_dropin
    check "webhook action with the example drop-in: support-request POSTed, submitted" check_webhook_with_dropin
    check "drop-ins removed: the shipped unit again" check_dropins_removed
    check "$CRASHERS plugins that crash while loading: all disabled within $((CRASHERS + 1)) starts, under the start limit" check_crash_loop
    check "journal: FLOWD_* fields and MESSAGE_IDs for the flow" check_journal
    check "the journal catalog explains flowd's MESSAGE_IDs (journalctl -x)" check_catalog
    check "no libdispatch thread-priority lines in the journal" check_no_dispatch_noise
    check "no secure value in the journal or on disk" check_no_secret_anywhere
    check "no restart the checks did not cause" check_no_unexpected_restarts
    check "systemctl stop: STOPPING=1 and a clean exit" check_stop
    check "per-user flowd: D-Bus activation on the session bus, state in ~/.local/state" check_user_unit
    check "per-user flowd: support-request's webhook needs the documented drop-in" check_user_webhook
fi

stop_listener
finish

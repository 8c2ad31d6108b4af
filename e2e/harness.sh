#!/bin/bash
# The harness of the end-to-end suites (e2e/system, e2e/package), sourced by their checks.sh
# INSIDE the booted test container: running and reporting checks, waiting for conditions,
# calling flowd on the system bus, and driving flowctl. Expects RESULTS (the results folder)
# to be set by the caller.
#
# Every wait is "until a condition holds, up to N seconds"; nothing sleeps a fixed time.


BUS=org.flowd.Flow1
MANAGER=/org/flowd/Flow1
IMANAGER=org.flowd.Flow1.Manager
ISESSION=org.flowd.Flow1.Session

failures=0
passes=0
current=""
start_all=$(date +%s%N)

log() { echo "$*"; }
# check NAME FUNCTION: runs one check; a check fails by calling `fail` (and returning 1).
check() {
    local name=$1 fn=$2 t0 t1
    current=$name
    t0=$(date +%s%N)
    if "$fn"; then
        t1=$(date +%s%N)
        passes=$((passes + 1))
        log "PASS  $name ($(((t1 - t0) / 1000000)) ms)"
    else
        failures=$((failures + 1))
        log "FAIL  $name"
        log "----- journalctl -u flowd (last 40 lines) -----"
        journalctl -b -u flowd -n 40 --no-pager -o short-precise 2>&1 | sed 's/^/    /'
        log "----- systemctl status flowd -----"
        systemctl status flowd --no-pager -n 0 2>&1 | sed 's/^/    /'
        log "-----"
    fi
}
fail() { log "      $current: $*"; return 1; }
note() { log "      $*"; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds, up to SECONDS.
wait_for() {
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$(($(date +%s%N) + limit * 1000000000))
    until "$@" >/dev/null 2>&1; do
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            fail "timed out after ${limit}s waiting for: $what"
            return 1
        fi
        sleep 0.05
    done
}

prop() { systemctl show -P "$1" flowd; }
is_state() { [ "$(systemctl is-active flowd)" = "$1" ]; }
restarts() { prop NRestarts; }

# --- D-Bus helpers (busctl; dbus-send where the error *name* matters) -------------------------
bus() { busctl --system --timeout=30 "$@"; }
mcall() { bus call "$BUS" "$MANAGER" "$IMANAGER" "$@"; }
scall() { local path=$1; shift; bus call "$BUS" "$path" "$ISESSION" "$@"; }
sprop() { bus get-property "$BUS" "$1" "$ISESSION" "$2" | sed -E 's/^[a-z]+ //; s/^"(.*)"$/\1/'; }
# error_name [runuser -u USER --] dbus-send-args...: prints the D-Bus error name of a failing call.
error_name() {
    "$@" 2>&1 | sed -n -E 's/^Error ([A-Za-z0-9_.]+):.*/\1/p' | head -n 1
}
start_session() { # [runuser prefix...] FLOW: prints the session object path
    local flow=${!#}
    local prefix=("${@:1:$#-1}")
    "${prefix[@]}" busctl --system --timeout=30 call "$BUS" "$MANAGER" "$IMANAGER" StartSession 'sa{sv}' "$flow" 1 locale s en |
        sed -n -E 's/^o "(.*)"$/\1/p'
}
path_id() { basename "$1"; }

# expect_activation FLOW: a stopped flowd is started by the bus (D-Bus activation) for a call
# to ListFlows, whose reply lists FLOW.
expect_activation() {
    systemctl stop flowd
    wait_for 30 "flowd inactive" is_state inactive || return 1
    local out
    out=$(mcall ListFlows) || { fail "ListFlows did not activate flowd: $out"; return 1; }
    grep -q "\"$1\"" <<<"$out" || { fail "ListFlows after activation does not list $1: $out"; return 1; }
    wait_for 30 "flowd active after activation" is_state active
}

# --- flowctl adapters: the only lines that know flowctl's command line and output -------------
# FC_AS/FC_BUS: the per-user checks run flowctl as the test user on the session bus.
FC_AS=()
FC_BUS=--system
fc() { "${FC_AS[@]}" flowctl "$FC_BUS" "$@"; }
fc_start() { fc start "$1" | grep -oE '[0-9a-f]{32}' | head -n 1; }  # prints the session id
fc_set() { local id=$1; shift; fc set "$id" "$@" >/dev/null; }       # FIELD=VALUE...
fc_continue() { fc continue "$1" >/dev/null; }
fc_submit() { fc submit "$1" >/dev/null; }
fc_first_option() { fc __complete values "$1" "$2" | head -n 1; }  # SESSION FIELD: a choice's first option
# fc_submit_result SESSION: submits; prints "submitted", or the D-Bus error name of the failure, or
# what flowctl said when it names none.
fc_submit_result() {
    local out rc name
    out=$(fc --json submit "$1" 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '"submitted": *true' <<<"$out"; then echo submitted; return; fi
    name=$(sed -n -E 's/^ *"errorName": *"([^"]+)".*/\1/p' <<<"$out")
    echo "${name:-flowctl exit $rc: $(tr '\n' ' ' <<<"$out")}"
}

# finish: the closing line, the journal on failure, and PASS or FAIL in $RESULTS/status.
finish() {
    local end_all
    end_all=$(date +%s%N)
    log "$passes passed, $failures failed in $(((end_all - start_all) / 1000000)) ms"
    if [ "$failures" -gt 0 ]; then
        journalctl -b --no-pager -o short-precise -u flowd -u dbus >"$RESULTS/journal.txt" 2>&1
        log "the journal of flowd and dbus is in $RESULTS/journal.txt (kept with --keep)"
        echo FAIL >"$RESULTS/status"
    else
        echo PASS >"$RESULTS/status"
    fi
}

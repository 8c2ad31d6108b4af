#!/bin/bash
# The host side of the end-to-end suites (e2e/system, e2e/package), sourced by their run.sh:
# the unit that runs the checks inside a prepared container root and powers it off, the boot
# with systemd-nspawn, and the report. Expects the caller's say().

# install_test_unit ROOT NAME DESCRIPTION COMMAND TIMEOUT: the oneshot unit NAME.service in
# ROOT, wanted by multi-user.target, which runs COMMAND with its output in /root/results/log
# and powers the container off when it ends, either way.
install_test_unit() {
    local root=$1 name=$2 description=$3 command=$4 timeout=$5
    mkdir -p "$root/root/results" "$root/etc/systemd/system/multi-user.target.wants"
    cat >"$root/etc/systemd/system/$name.service" <<EOF
[Unit]
Description=$description
After=multi-user.target dbus.service systemd-logind.service
Wants=dbus.service systemd-logind.service
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=$command
StandardOutput=append:/root/results/log
StandardError=append:/root/results/log
TimeoutStartSec=$((timeout - 20))
EOF
    ln -sf "../$name.service" "$root/etc/systemd/system/multi-user.target.wants/$name.service"
}

# boot_and_report ROOT TIMEOUT NSPAWN-OPTION...: boots ROOT until its test unit powers it off,
# at most TIMEOUT seconds, and prints the checks' log. Returns 0 only if they wrote PASS.
# Sets BOOT_SECONDS (how long the container ran) and BOOT_STATUS (PASS, FAIL, or why neither).
boot_and_report() {
    local root=$1 timeout=$2 results=$1/root/results rc start end
    shift 2
    start=$(date +%s.%N)
    set +e
    timeout --kill-after=10 "$timeout" systemd-nspawn -D "$root" --register=no --keep-unit \
        --console=read-only --quiet -b "$@" >"$results/console" 2>&1
    rc=$?
    set -e
    end=$(date +%s.%N)
    BOOT_SECONDS=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    if [ -f "$results/log" ]; then
        cat "$results/log"
    else
        say "the checks never ran; container console:"
        tail -n 50 "$results/console" || true
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        BOOT_STATUS="FAILED: the container did not finish within ${timeout}s"
        tail -n 30 "$results/console" || true
        return 1
    fi
    BOOT_STATUS=$(cat "$results/status" 2>/dev/null || echo "no status written")
    [ "$BOOT_STATUS" = PASS ]
}

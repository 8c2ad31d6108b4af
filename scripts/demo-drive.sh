#!/usr/bin/env bash
# Walks the example flow "consultation" to submitted with flowctl, printing
# each command and what it shows, as a person at a terminal would see it.
#
#   scripts/demo-drive.sh ADDRESS
#
# ADDRESS is the D-Bus address of a bus where flowd serves the example flows
# with the shipped plugins (make demo starts both). FLOWCTL names the flowctl
# to use; by default the release build, else the debug build, else the one on
# PATH. The answers go through the spool plugin: the last command shows the
# receipt.
set -euo pipefail

address=${1:?usage: scripts/demo-drive.sh ADDRESS}
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${FLOWCTL:-}" ]; then
    for candidate in "$root/.build/release/flowctl" "$root/.build/debug/flowctl"; do
        if [ -x "$candidate" ]; then FLOWCTL=$candidate; break; fi
    done
fi
FLOWCTL=${FLOWCTL:-flowctl}

fc() { "$FLOWCTL" --address "$address" "$@"; }

# Prints the command as typed, then runs it.
show() {
    printf '\n\033[1m$ flowctl %s\033[0m\n' "$*"
    fc "$@"
}

# The first option a provider offers for a field of the current step
# (the weekdays and time slots depend on today's date).
first_option() {
    fc __complete values "$1" "$2" | head -n 1
}

printf '\033[1m$ flowctl flows\033[0m\n'
fc flows
printf '\n\033[1m$ flowctl start consultation\033[0m\n'
id=$(fc start consultation --locale en)
echo "$id"

show show "$id"
show set "$id" service=website
show continue "$id"
show set "$id" pageCount=12
show continue "$id"
show set "$id" "day=$(first_option "$id" day)" "time=$(first_option "$id" time)"
show continue "$id"
show set "$id" "name=Ada Lovelace" email=ada@example.com
show continue "$id"
show submit "$id"
show answers "$id"
printf "\nThe same interactively: make demo DEMO_KEEP=1 keeps this bus and flowd up, then\n  flowctl --address '%s' run consultation\n" "$address"

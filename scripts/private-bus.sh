# Sourced by the scripts that run flowd on a bus of their own (demo.sh,
# test-template.sh); POSIX sh.
#
# start_private_bus DIR: writes DIR/bus.conf (a session-type bus listening on
# DIR/bus, open to this user), starts dbus-daemon in the background and waits
# for its address. Sets BUS_PID and ADDRESS; the caller kills BUS_PID.
start_private_bus() {
    cat >"$1/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$1/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF
    dbus-daemon --config-file="$1/bus.conf" --nofork --print-address=1 >"$1/address" 2>"$1/bus.log" &
    BUS_PID=$!
    _bus_wait=0
    while [ ! -s "$1/address" ] && [ $_bus_wait -lt 200 ]; do sleep 0.05; _bus_wait=$((_bus_wait + 1)); done
    ADDRESS=$(head -n1 "$1/address")
}

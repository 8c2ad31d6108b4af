"""A private dbus-daemon and the built flowd on it, for the D-Bus fuzzer and
the soak test (Fuzz/bus/fuzz.py, Fuzz/bus/soak.py; docs/fuzzing.md).

flowd runs as the system service does (--system, pointed at the private bus
through DBUS_SYSTEM_BUS_ADDRESS: signals only to a session's owner, only
root's plugins), with the example flows and the shipped plugins copied from
the build directory, in a temporary state directory. Its memory (VmRSS) and
open descriptors are read from /proc.
"""
import os
import shutil
import subprocess
import tempfile
import time

import dbus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUS_NAME = "org.flowd.Flow1"
MANAGER_PATH = "/org/flowd/Flow1"
MANAGER = "org.flowd.Flow1.Manager"
SESSION = "org.flowd.Flow1.Session"
SHIPPED = {"spool": "SpoolPlugin", "command": "CommandPlugin", "webhook": "WebhookPlugin",
           "validators": "ValidatorsPlugin", "providers": "ProvidersPlugin"}
# Users the bus admits besides root: the fuzzer's clients take these uids.
OTHER_UIDS = [65534, 1, 2]


def build_directory():
    """$FLOWD_BUILD_DIR, else SwiftPM's debug binary directory."""
    given = os.environ.get("FLOWD_BUILD_DIR")
    if given:
        return given
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def documented_error_names():
    """The error names docs/dbus-api.md's table lists."""
    names = set()
    with open(os.path.join(ROOT, "docs", "dbus-api.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("| `org.flowd.Flow1.Error."):
                names.add(line.split("`")[1])
    if not names:
        raise RuntimeError("docs/dbus-api.md lists no error names")
    return names


class Flowd:
    """The private bus and flowd; a context manager."""

    def __init__(self, configuration="", flows_dir=None):
        self.directory = tempfile.mkdtemp(prefix="flowd-busfuzz.")
        os.chmod(self.directory, 0o755)
        self.configuration = configuration
        self.flows_dir = flows_dir or os.path.join(ROOT, "flows")
        self.bus = None
        self.daemon = None

    def __enter__(self):
        try:
            self.start_bus()
            self.start_flowd()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start_bus(self):
        socket = os.path.join(self.directory, "bus")
        users = "".join('    <allow user="%d"/>\n' % uid for uid in [os.getuid()] + OTHER_UIDS)
        config = os.path.join(self.directory, "bus.conf")
        with open(config, "w") as f:
            f.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <limit name="max_connections_per_user">1024</limit>
  <policy context="default">
%s    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""" % (socket, users))
        self.bus = subprocess.Popen(
            ["dbus-daemon", "--nofork", "--nopidfile", "--nosyslog", "--config-file=" + config, "--print-address=1"],
            stdout=subprocess.PIPE, stderr=open(os.path.join(self.directory, "bus.log"), "w"), text=True)
        self.address = self.bus.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon did not start")
        os.chmod(socket, 0o777)

    def start_flowd(self):
        build = build_directory()
        plugins = os.path.join(self.directory, "plugins")
        os.makedirs(plugins, mode=0o755)
        for name, product in SHIPPED.items():
            target = os.path.join(plugins, name + ".so")
            shutil.copyfile(os.path.join(build, "lib%s.so" % product), target)
            os.chmod(target, 0o755)
        state = os.path.join(self.directory, "state")
        arguments = [os.path.join(build, "flowd"), "--system", "--flows-dir", self.flows_dir,
                     "--plugin-dir", plugins, "--state-dir", state]
        if self.configuration:
            path = os.path.join(self.directory, "flowd.conf")
            with open(path, "w") as f:
                f.write(self.configuration)
            arguments += ["--config", path]
        environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "DBUS_SYSTEM_BUS_ADDRESS": self.address,
                       "SWIFT_BACKTRACE": "enable=no"}
        self.log = open(os.path.join(self.directory, "flowd.log"), "w")
        self.daemon = subprocess.Popen(arguments, env=environment, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise RuntimeError("flowd exited with %s; its log:\n%s" % (self.daemon.returncode, self.log_text()))
            try:
                self.ping(self.connect(), timeout=2)
                return
            except dbus.DBusException:
                time.sleep(0.1)
        raise RuntimeError("flowd did not answer within 60 s; its log:\n" + self.log_text())

    def log_text(self):
        self.log.flush()
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def connect(self):
        """A new connection to the private bus, as this process's uid."""
        return dbus.bus.BusConnection(self.address)

    @staticmethod
    def ping(connection, timeout=10):
        connection.call_blocking(BUS_NAME, MANAGER_PATH, "org.freedesktop.DBus.Peer", "Ping", "", (), timeout=timeout)

    @property
    def pid(self):
        return self.daemon.pid

    def alive(self):
        return self.daemon.poll() is None

    def rss_kib(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def fd_count(self):
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def stop(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        if self.bus and self.bus.poll() is None:
            self.bus.terminate()
            self.bus.wait()
        if os.environ.get("FLOWD_FUZZ_KEEP") != "1":
            shutil.rmtree(self.directory, ignore_errors=True)


def as_user(uid):
    """In a child: becomes `uid` (its own group, no others)."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def percentiles(samples, points=(50, 90, 99, 100)):
    """{point: value} of a list of numbers (nearest rank)."""
    if not samples:
        return {p: 0.0 for p in points}
    ordered = sorted(samples)
    return {p: ordered[min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered))) - 1))] for p in points}

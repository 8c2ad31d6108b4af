import Foundation

/// A private `dbus-daemon` for one test: its own config, a unix socket in a
/// temporary directory, and a policy that allows everything. Killed on
/// ``stop()`` or deinit. Tests never touch the host's session or system bus.
package final class PrivateBus: @unchecked Sendable {
    /// The address to connect to (as printed by the daemon, with its guid).
    package private(set) var address: String
    /// The directory holding the socket and the config.
    package let directory: TemporaryDirectory
    private var daemon: ChildProcess
    private let configPath: String

    /// Starts `dbus-daemon --nofork --print-address` and waits until it listens.
    ///
    /// - Parameters:
    ///   - allowUsers: more uids that may connect (the daemon's own uid
    ///     always may). The directory and socket are then opened up to them.
    ///   - user: the account the daemon switches to once it listens (as the
    ///     system bus runs as `messagebus`); root only. Nil: the test's own.
    package init(allowUsers: [UInt32] = [], user: String? = nil) throws {
        directory = try TemporaryDirectory(prefix: "flowd-bus")
        let socket = directory.file("bus")
        let userRules = allowUsers.map { "    <allow user=\"\($0)\"/>\n" }.joined()
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
            \(user.map { "  <user>\($0)</user>\n" } ?? "")  <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="\(getuid())"/>
            \(userRules)    <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """
        configPath = try directory.write("bus.conf", config)
        if !allowUsers.isEmpty { chmod(directory.path, 0o755) }
        (daemon, address) = try Self.start(configPath: configPath)
        if !allowUsers.isEmpty { chmod(socket, 0o777) }
    }

    private static func start(configPath: String) throws -> (ChildProcess, String) {
        let daemon = try ChildProcess(
            "dbus-daemon",
            ["--nofork", "--nopidfile", "--nosyslog", "--config-file=\(configPath)", "--print-address=1"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "", "DBUS_SYSTEM_BUS_ADDRESS": ""])
        guard daemon.waitForOutput(until: { $0.contains("\n") }) else {
            daemon.terminate(grace: .seconds(1))
            throw TestSupportError("dbus-daemon did not start: \(daemon.standardError)")
        }
        return (daemon, daemon.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The address without the daemon's guid: what reaches this bus again
    /// after ``restart()`` (a new daemon has a new guid).
    package var socketAddress: String {
        address.split(separator: ",").filter { !$0.hasPrefix("guid=") }.joined(separator: ",")
    }

    /// Stops the daemon and starts a new one on the same socket: every
    /// connection is dropped, as when the bus restarts.
    package func restart() throws {
        stop()
        (daemon, address) = try Self.start(configPath: configPath)
    }

    deinit {
        stop()
    }

    /// Environment for child processes (`gdbus`, `busctl`, the daemon under
    /// test): both bus variables point at this bus.
    package var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": address]
    }

    /// The daemon's process id.
    package var pid: pid_t { daemon.pid }

    /// Kills the daemon (SIGTERM, then SIGKILL). Safe to call more than once.
    package func stop() {
        daemon.terminate(grace: .seconds(5))
    }
}

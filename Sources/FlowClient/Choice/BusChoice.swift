import DBus
import FlowdSystem

/// Which bus a client talks to flowd on, from `--system`, `--user` or
/// `--address` (flowctl and flowd-gtk take the same options), and what a
/// person is told when flowd cannot be reached there.
package enum BusChoice: Sendable, Hashable {
    /// The system bus: the system service.
    case system
    /// The session bus: the per-user service (the default, like flowd's).
    case user
    /// A bus at a D-Bus address.
    case address(String)

    /// The options that select this bus again, for hints such as the resume command.
    package var commandLineOptions: [String] {
        switch self {
        case .system: return ["--system"]
        case .user: return []
        case .address(let address): return ["--address", address]
        }
    }

    /// "the session bus", "the system bus", "the bus at ADDR".
    package var displayName: String {
        switch self {
        case .system: return "the system bus"
        case .user: return "the session bus"
        case .address(let address): return "the bus at \(address)"
        }
    }

    /// The bus to connect to.
    package var connectionBus: Connection.Bus {
        switch self {
        case .system: return .system
        case .user: return .session
        case .address(let address): return .address(address)
        }
    }

    /// The command that starts flowd on this bus; for an address, the
    /// executable at `flowd` (see ``FlowdLocation``).
    package func startCommand(flowd: String = FlowdLocation.installed) -> String {
        switch self {
        case .system: return "systemctl start flowd"
        case .user: return "systemctl --user start flowd"
        case .address(let address): return "\(shellQuoted(flowd)) --address \(shellQuoted(address))"
        }
    }

    /// What a person is told when `error` means flowd cannot be reached on
    /// this bus (not running, no bus, the connection lost), with the command
    /// that starts it; nil for every other failure. `flowd` is the daemon's
    /// path for that command.
    package func unreachableMessage(_ error: FlowClientError, flowd: @autoclosure () -> String) -> String? {
        let detail = error.underlying?.message ?? error.message
        switch error.kind {
        case .notRunning:
            var message = "flowd is not running on \(displayName). Start it with: \(startCommand(flowd: flowd()))"
            if let name = error.name, name != .serviceUnknown, name != .nameHasNoOwner {
                message += " (activation failed: \(detail))"
            }
            return message
        case .cannotConnect:
            var message = "cannot connect to \(displayName): \(detail)"
            if case .user = self { message += " (is this a desktop or user session? For the system service use --system)" }
            return message
        case .disconnected:
            return "lost the connection to \(displayName): \(detail)"
        default:
            return nil
        }
    }
}

/// Where the flowd executable is, for the "Start it with" hint. flowd is not
/// on `PATH`: it is installed to `<prefix>/libexec/flowd` (docs/admin.md).
package enum FlowdLocation {
    /// The packaged daemon (`make install PREFIX=/usr`).
    package static let installed = "/usr/libexec/flowd"

    /// The daemon for a client at `executable`: `flowd` in the same
    /// directory (a build tree), else `<prefix>/libexec/flowd` for a client
    /// in `<prefix>/bin` (an installation), whichever `isExecutable` accepts
    /// first; else ``installed``.
    package static func find(executable: String?, isExecutable: (String) -> Bool) -> String {
        guard let executable, let slash = executable.lastIndex(of: "/") else { return installed }
        let directory = String(executable[..<slash])
        var candidates = [directory + "/flowd"]
        if directory.hasSuffix("/bin") { candidates.append(String(directory.dropLast(4)) + "/libexec/flowd") }
        return candidates.first(where: isExecutable) ?? installed
    }

    /// The daemon for this client process (`/proc/self/exe`).
    package static func current() -> String {
        find(executable: CurrentProcess.executablePath(), isExecutable: FileSystem.isExecutableFile)
    }
}

/// `text` quoted for a POSIX shell when it needs it.
package func shellQuoted(_ text: String) -> String {
    let safe = text.unicodeScalars.allSatisfy { scalar in
        (scalar.value < 128 && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil))
            || "-_./:=,@%+".unicodeScalars.contains(scalar)
    }
    if safe && !text.isEmpty { return text }
    return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}

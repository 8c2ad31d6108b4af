import DBus
import FlowProtocol

/// What `flowd`'s command line asks for.
package enum DaemonCommand: Sendable, Equatable {
    case run(DaemonOptions)
    /// `--check-config`: read everything a start would, print it, exit.
    case checkConfig(DaemonOptions)
    case help
    case version
}

/// The options given on the command line; nil or empty means "not given", so
/// the configuration file's value stands.
package struct DaemonOptions: Sendable, Equatable {
    package var bus: BusChoice?
    package var flowDirectories: [String] = []
    package var pluginDirectories: [String] = []
    package var stateDirectory: String?
    package var configFile: String?
    package var verbose = false

    package init() {}
}

/// A bad command line: printed as one line, exit status 64 (`EX_USAGE`).
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

package enum DaemonCommandLine {
    /// The text of `flowd --help`.
    package static let help = """
        Usage: flowd [OPTION]...
        Serve multi-step form flows over D-Bus (bus name \(FlowBus.name)).

        Bus (default: the session bus):
              --system              serve on the system bus
              --session             serve on the session bus
              --address ADDR        serve on the bus at the D-Bus address ADDR

        Files (each also has a key in the configuration file):
              --config FILE         read FILE and FILE.d/*.conf (default: /etc/flowd/flowd.conf)
              --flows-dir DIR       load flows from DIR; repeat for more (replaces the configured list)
              --plugin-dir DIR      load plugins from DIR; repeat for more (replaces the configured list)
              --state-dir DIR       keep the session database in DIR

              --check-config        read the configuration, plugins and flows as a start
                                    or reload would, print the effective configuration,
                                    and exit (status 78 if anything would be refused)
              --verbose             log debug messages too
          -h, --help                show this help and exit
              --version             show the version and exit

        flowd(8) describes the configuration file, signals and exit statuses.
        """

    /// Parses the arguments after the program name.
    package static func parse(_ arguments: [String]) throws(UsageError) -> DaemonCommand {
        var options = DaemonOptions()
        var index = 0
        var check = false
        func value(for option: String, inline: String?) throws(UsageError) -> String {
            if let inline {
                guard !inline.isEmpty else { throw UsageError(message: "flowd: option \(option) needs a value") }
                return inline
            }
            index += 1
            guard index < arguments.count, !arguments[index].hasPrefix("--"), !arguments[index].isEmpty else {
                throw UsageError(message: "flowd: option \(option) needs a value")
            }
            return arguments[index]
        }
        func address(for option: String, inline: String?) throws(UsageError) -> String {
            let address = try value(for: option, inline: inline)
            do {
                try BusAddress.check(address)
            } catch {
                throw UsageError(message: "flowd: \(option): \(error.message)")
            }
            return address
        }
        func setBus(_ bus: BusChoice, _ option: String) throws(UsageError) {
            if let existing = options.bus, existing != bus {
                throw UsageError(message: "flowd: \(option) conflicts with an earlier bus option; choose one of --system, --session, --address")
            }
            options.bus = bus
        }
        while index < arguments.count {
            let argument = arguments[index]
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inline = String(argument[argument.index(after: eq)...])
            }
            let takesValue = ["--address", "--config", "--flows-dir", "--plugin-dir", "--state-dir"].contains(name)
            if inline != nil && !takesValue {
                throw UsageError(message: "flowd: option \(name) takes no value")
            }
            switch name {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--system": try setBus(.system, name)
            case "--session": try setBus(.session, name)
            case "--address": try setBus(.address(try address(for: name, inline: inline)), name)
            case "--config": options.configFile = try value(for: name, inline: inline)
            case "--flows-dir": options.flowDirectories.append(try value(for: name, inline: inline))
            case "--plugin-dir": options.pluginDirectories.append(try value(for: name, inline: inline))
            case "--state-dir": options.stateDirectory = try value(for: name, inline: inline)
            case "--verbose": options.verbose = true
            case "--check-config": check = true
            default:
                if argument.hasPrefix("-") {
                    throw UsageError(message: "flowd: unknown option \(name) (see flowd --help)")
                }
                throw UsageError(message: "flowd: unexpected argument \"\(argument)\" (flowd takes only options; see flowd --help)")
            }
            index += 1
        }
        return check ? .checkConfig(options) : .run(options)
    }
}

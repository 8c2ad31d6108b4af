import DBus
import FlowdSystem
import PluginHost

/// Which bus the daemon serves.
package enum BusChoice: Sendable, Equatable, CustomStringConvertible {
    case system
    case session
    /// A bus at an explicit D-Bus address (tests, the demo, the benchmark).
    case address(String)

    package var description: String {
        switch self {
        case .system: return "system"
        case .session: return "session"
        case .address(let a): return a
        }
    }
}

/// Bounds on everything a caller controls. Going over one is `LimitExceeded`.
package struct SessionLimits: Sendable, Equatable {
    /// Longest string value, in bytes of UTF-8 (the wire size), per answer or argument.
    package var maxStringLength = 4096
    /// Most answers in one `SetAnswers` call, and most prefill values.
    package var maxAnswersPerCall = 64
    /// Most items in one list answer (`multichoice`).
    package var maxListLength = 256
    /// Most live sessions one uid may own.
    package var maxSessionsPerUser = 64
    /// Most live sessions in all.
    package var maxSessions = 50_000
    /// A session untouched for this long is deleted (a settled one has its own retention).
    package var idleTimeout: Duration = .seconds(7 * 86400)
    /// A settled (submitted) session is deleted this long after it settled.
    /// Until then its owner can read its receipt; it does not count toward
    /// ``maxSessionsPerUser``.
    package var settledRetention: Duration = .seconds(86400)

    package init() {}
}

/// SQLite durability: what an acknowledged change survives.
package enum Durability: String, Sendable, Equatable {
    /// Survives a crash or `kill -9` of the daemon (WAL, `synchronous=NORMAL`). The default.
    case process
    /// Also survives power loss (WAL, `synchronous=FULL`): an fsync per change.
    case power
}

/// Everything the daemon is told by its configuration file, drop-ins and
/// command line, in that order of precedence (the command line wins).
package struct DaemonConfiguration: Sendable, Equatable {
    package var bus: BusChoice = .session
    /// Flow directories, highest priority first: a flow id found in an earlier
    /// directory wins over the same id in a later one.
    package var flowDirectories: [String]
    /// Plugin directories, searched in order.
    package var pluginDirectories: [String]
    /// Where the database lives. Nil means: decide from the environment
    /// (`$STATE_DIRECTORY`, then the bus mode's default).
    package var stateDirectory: String?
    package var limits = SessionLimits()
    package var durability: Durability = .process
    /// Time limit of one validator, options or prefill plugin call.
    package var pluginCallTimeout: Duration = .seconds(5)
    /// Plugin names the administrator switched off.
    package var disabledPlugins: [String] = []
    /// The `[Plugin NAME]` sections, by the plugin's file name without `.so`.
    package var plugins: [String: PluginSettings] = [:]
    /// Log debug messages too.
    package var verbose = false
    /// The configuration files read, in the order they were applied (empty:
    /// only built-in defaults and the command line).
    package var files: [String] = []

    /// The built-in defaults for an installation laid out by `layout`.
    package init(layout: InstallLayout) {
        flowDirectories = [layout.sysconfDirectory + "/flowd/flows", layout.dataDirectory + "/flowd/flows"]
        pluginDirectories = [layout.libDirectory + "/flowd/plugins"]
    }

    /// Applies one parsed file on top of this configuration.
    ///
    /// Like systemd, an empty assignment to a list key (`FlowsDirectory=`) empties
    /// the list, so a drop-in can replace a list instead of extending it.
    package mutating func apply(_ file: INIFile) throws(ConfigurationError) {
        for a in file.assignments {
            func error(_ message: String) -> ConfigurationError {
                ConfigurationError(file: a.file, line: a.line, message: message)
            }
            /// An error about the value.
            func fail(_ message: String) -> ConfigurationError { error("[\(a.section)] \(a.key): \(message)") }
            func boolean() throws(ConfigurationError) -> Bool {
                guard let b = ConfigValue.boolean(a.value) else { throw fail("expected yes or no, found \"\(a.value)\"") }
                return b
            }
            func count(maximum: Int = Int(Int32.max)) throws(ConfigurationError) -> Int {
                guard let n = ConfigValue.count(a.value, maximum: maximum), n > 0 else {
                    throw fail("expected a positive whole number up to \(maximum), found \"\(a.value)\"")
                }
                return n
            }
            func span() throws(ConfigurationError) -> Duration {
                guard let d = TimeSpan.parse(a.value), d > .zero else {
                    throw fail("expected a time span such as 30s, 5min or 7d, found \"\(a.value)\"")
                }
                return d
            }
            func path() throws(ConfigurationError) -> String {
                guard a.value.hasPrefix("/") else { throw fail("expected an absolute path, found \"\(a.value)\"") }
                return a.value
            }
            // The first time any file sets a list key, the built-in default list
            // is replaced; later assignments add to it, and an empty one clears it.
            func appendPath(to list: inout [String], key: String) throws(ConfigurationError) {
                let entry = a.value.isEmpty ? nil : try path()
                if !listKeysSetByFiles.contains(key) {
                    list = []
                    listKeysSetByFiles.insert(key)
                }
                if let entry { list.append(entry) } else { list = [] }
            }

            switch (a.section, a.key) {
            case ("Daemon", "Bus"):
                switch a.value {
                case "system": bus = .system
                case "session": bus = .session
                case let v where v.contains(":"):
                    do {
                        try BusAddress.check(v)
                    } catch {
                        throw fail(error.message)
                    }
                    bus = .address(v)
                default: throw fail("expected system, session or a D-Bus address, found \"\(a.value)\"")
                }
            case ("Daemon", "FlowsDirectory"): try appendPath(to: &flowDirectories, key: a.key)
            case ("Daemon", "PluginDirectory"): try appendPath(to: &pluginDirectories, key: a.key)
            case ("Daemon", "StateDirectory"): stateDirectory = try path()
            case ("Daemon", "Durability"):
                guard let d = Durability(rawValue: a.value) else { throw fail("expected process or power, found \"\(a.value)\"") }
                durability = d
            case ("Daemon", "Verbose"): verbose = try boolean()
            case ("Limits", "MaxStringLength"): limits.maxStringLength = try count(maximum: 1 << 20)
            case ("Limits", "MaxAnswersPerCall"): limits.maxAnswersPerCall = try count(maximum: 4096)
            case ("Limits", "MaxListLength"): limits.maxListLength = try count(maximum: 65536)
            case ("Limits", "MaxSessionsPerUser"): limits.maxSessionsPerUser = try count(maximum: 10_000_000)
            case ("Limits", "MaxSessions"): limits.maxSessions = try count(maximum: 10_000_000)
            case ("Limits", "IdleTimeout"): limits.idleTimeout = try span()
            case ("Limits", "SettledRetention"): limits.settledRetention = try span()
            case ("Plugins", "CallTimeout"): pluginCallTimeout = try span()
            case ("Plugins", "Disable"):
                if a.value.isEmpty {
                    disabledPlugins = []
                } else {
                    disabledPlugins += a.value.split(separator: " ").map(String.init)
                }
            case ("Daemon", _), ("Limits", _), ("Plugins", _):
                throw error("unknown key \"\(a.key)\" in [\(a.section)]")
            default:
                guard let plugin = PluginSettings.sectionName(a.section) else {
                    throw error("unknown section [\(a.section)] (expected [Daemon], [Limits], [Plugins] or [Plugin NAME])")
                }
                guard let name = plugin else {
                    throw error("[\(a.section)]: expected the plugin's file name, with or without .so, such as [Plugin webhook]")
                }
                var settings = plugins[name] ?? PluginSettings()
                switch a.key {
                case "Isolated": settings.isolated = try boolean()
                case "MemoryLimit":
                    guard let bytes = ConfigValue.bytes(a.value), bytes.map({ $0 >= PluginSettings.minimumMemoryLimit }) ?? true
                    else {
                        throw fail(
                            "expected a size of at least 64M such as 256M or 1G, or infinity, found \"\(a.value)\"")
                    }
                    settings.memoryLimit = bytes
                case "Network": settings.network = try boolean()
                default: throw error("unknown key \"\(a.key)\" in [\(a.section)] (expected Isolated, MemoryLimit or Network)")
                }
                plugins[name] = settings
            }
        }
    }

    /// List keys some file has set: their built-in defaults are gone.
    private var listKeysSetByFiles: Set<String> = []

    /// The plugins to run isolated, by file name without `.so`, with their sandbox.
    package var isolatedPlugins: [String: IsolationSettings] {
        plugins.compactMapValues { $0.isolated ? $0.isolation : nil }
    }
}

/// One `[Plugin NAME]` section: how flowd runs that plugin.
package struct PluginSettings: Sendable, Equatable {
    /// Run it in a `flowd-plugin-host` process of its own.
    package var isolated = false
    /// Its process's memory limit in bytes; nil: none (`infinity`). Only
    /// for an isolated plugin.
    package var memoryLimit: UInt64? = IsolationSettings.defaultMemoryLimit
    /// Whether its process may open network sockets. Only for an isolated plugin.
    package var network = false

    /// Smaller limits leave the Swift runtime no room to load the plugin.
    static let minimumMemoryLimit: UInt64 = 64 << 20

    package init() {}

    /// The helper's sandbox.
    var isolation: IsolationSettings { IsolationSettings(memoryLimit: memoryLimit, network: network) }

    /// For a section header `Plugin NAME`: nil when it is no plugin section,
    /// `.some(nil)` when NAME is not a plugin file name, otherwise the name
    /// without `.so`.
    static func sectionName(_ section: String) -> String?? {
        guard section.hasPrefix("Plugin ") else { return nil }
        var name = String(section.dropFirst("Plugin ".count)).trimmingWhitespace()
        if name.hasSuffix(".so") { name.removeLast(3) }
        let valid =
            !name.isEmpty && !name.hasPrefix(".") && name.utf8.count <= 255
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.+".unicodeScalars.contains($0)) }
        return .some(valid ? name : nil)
    }
}

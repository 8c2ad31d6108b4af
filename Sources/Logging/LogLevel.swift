/// How severe a log entry is. The raw value is the syslog priority the
/// journal stores in `PRIORITY=` (lower is more severe). Levels compare by
/// severity: `.debug < .info < … < .critical`.
package enum LogLevel: Int, CaseIterable, Comparable, Sendable {
    case critical = 2
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// The syslog priority, 2 (`LOG_CRIT`) to 7 (`LOG_DEBUG`).
    package var syslogPriority: Int { rawValue }

    /// The lowercase name used in stderr lines and configuration.
    package var name: String {
        switch self {
        case .critical: return "critical"
        case .error: return "error"
        case .warning: return "warning"
        case .notice: return "notice"
        case .info: return "info"
        case .debug: return "debug"
        }
    }

    /// The level called `name` (as in ``name``, case-insensitive; `warn`
    /// and `crit` are accepted too), for configuration files and options.
    package init?(name: String) {
        let aliases = ["crit": "critical", "err": "error", "warn": "warning"]
        let lowered = name.lowercased()
        guard let level = Self.allCases.first(where: { $0.name == aliases[lowered, default: lowered] }) else { return nil }
        self = level
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rawValue > rhs.rawValue
    }
}

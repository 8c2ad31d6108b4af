/// Where the D-Bus module reports what it cannot return to anyone: a method
/// handler that dropped its invocation, a handler error that is not a
/// ``DBusErrorConvertible``, a reply of the wrong signature.
///
/// A value type holding a sink closure (swift-log style); levels are syslog
/// priorities, so the daemon can forward them to the journal as they are.
/// Messages never contain argument values (they may be secrets).
public struct DBusLogger: Sendable {
    /// Severity, numbered as syslog priorities.
    public enum Level: Int, Sendable, Comparable {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue > rhs.rawValue }
    }

    private let sink: @Sendable (Level, String) -> Void

    /// A logger that hands each line to `sink`.
    public init(_ sink: @escaping @Sendable (Level, String) -> Void) {
        self.sink = sink
    }

    /// Logs `message` at `level`.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        sink(level, message())
    }

    /// Plain lines on stderr: `dbus: <level>: <message>`.
    public static let standardError = DBusLogger { level, message in
        LibDBus.printError("dbus: \(level): \(message)")
    }

    /// Drops everything.
    public static let discard = DBusLogger { _, _ in }
}

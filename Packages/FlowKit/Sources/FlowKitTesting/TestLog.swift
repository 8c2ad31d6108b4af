import FlowKit
import Synchronization

/// What a plugin logged in a test (``PluginContext/testing(flowID:sessionID:locale:callerUID:answers:options:stateDirectory:timeLimit:log:)``
/// records into one): every line, in order, as flowd would have received
/// it, before flowd's own limits.
///
/// ```swift
/// let log = TestLog()
/// _ = try await VATNumber().review(.text("de 123"), field: field, context: .testing(log: log))
/// #expect(log.messages(at: .warning) == ["VIES did not answer; checked the format only"])
/// ```
public final class TestLog: PluginLogSink {
    private let recorded = Mutex<[PluginLogEntry]>([])

    public init() {}

    public func write(_ entry: PluginLogEntry) {
        recorded.withLock { $0.append(entry) }
    }

    /// Every line so far, in order.
    public var entries: [PluginLogEntry] { recorded.withLock { $0 } }

    /// The messages of the lines at `level` (every level when nil), in order.
    public func messages(at level: PluginLogLevel? = nil) -> [String] {
        entries.filter { level == nil || $0.level == level }.map(\.message)
    }

    /// Forgets what was logged.
    public func clear() {
        recorded.withLock { $0.removeAll() }
    }
}

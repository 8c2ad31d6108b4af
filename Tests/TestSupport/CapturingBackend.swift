import FlowdSystem
import Logging

/// Keeps every record it is given, for tests that check what was logged
/// (and, as important, what was not: a secret).
package final class CapturingBackend: LogBackend {
    private let captured = LockedValue<[LogRecord]>([])

    /// An empty capture.
    package init() {}

    package func write(_ record: LogRecord) {
        captured.withLock { $0.append(record) }
    }

    /// Every record so far, oldest first.
    package var records: [LogRecord] { captured.withLock { $0 } }

    /// The message of every record so far, oldest first.
    package var messages: [String] { records.map(\.message) }
}

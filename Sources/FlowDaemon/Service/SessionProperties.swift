import FlowEngine
import FlowKit
import FlowProtocol
import Logging

/// Something that happened, for the bus front end to announce after it has
/// replied to the call that caused it.
enum ServiceEvent {
    case sessionNew(id: String)
    case sessionRemoved(id: String)
    case sessionCountChanged
    /// These properties of a session changed; the values are in `now`.
    case propertiesChanged(id: String, names: [SessionProperty], now: SessionProperties)
    /// Secure answers are already left out.
    case stepCompleted(id: String, step: String, answers: [String: AnswerValue])
    case submitted(id: String, receipt: [String: JSONValue])
    case submitFailed(id: String, message: String)
    case announcement(id: String, text: String)
    /// A log entry about the call, written after its reply like the signals:
    /// formatting and writing a line costs about as much as the rest of a
    /// `Continue`, and the caller need not wait for it.
    case log(DeferredLog)
}

/// A log entry kept until the reply is sent (``ServiceEvent/log(_:)``), with
/// the place that asked for it.
struct DeferredLog {
    var level: LogLevel
    var message: String
    var id: MessageID?
    var metadata: LogMetadata
    var file: String
    var function: String
    var line: UInt

    func write(to logger: Logger) {
        logger.log(level, "\(message)", id: id, metadata: metadata, file: file, function: function, line: line)
    }
}

import FlowEngine
import FlowKit
import Logging

/// The values of a session's mutable D-Bus properties at one moment. Taken
/// before and after a change, the difference says which `PropertiesChanged`
/// to emit.
struct SessionProperties: Equatable {
    var state: SessionState
    var currentStep: String
    var stepIndex: Int
    var stepCount: Int
    var canGoBack: Bool
    var canContinue: Bool
    var continueLabel: String
    var returningToReview: Bool
    var lastError: String
    var updatedAt: Int64
    var path: [PathEntry]
    var announcement: String
    var receipt: [String: JSONValue]

    init(_ s: FlowSession) {
        // One walk of the path for all the values that depend on it.
        let progress = s.progressSnapshot
        state = s.state
        currentStep = s.currentStepID
        stepIndex = progress.stepIndex
        stepCount = progress.stepCount
        canGoBack = progress.canGoBack
        canContinue = progress.canContinue
        continueLabel = progress.continueLabel
        returningToReview = s.returningToReview
        lastError = s.lastError ?? ""
        updatedAt = s.record.updatedAt
        path = progress.path
        announcement = s.announcement
        receipt = s.record.receipt ?? [:]
    }

    /// The names of the properties whose values differ from `old`, in the
    /// order the interface declares them.
    func changed(since old: SessionProperties) -> [String] {
        var names: [String] = []
        if state != old.state { names.append("State") }
        if currentStep != old.currentStep { names.append("CurrentStep") }
        if stepIndex != old.stepIndex { names.append("StepIndex") }
        if stepCount != old.stepCount { names.append("StepCount") }
        if canGoBack != old.canGoBack { names.append("CanGoBack") }
        if canContinue != old.canContinue { names.append("CanContinue") }
        if continueLabel != old.continueLabel { names.append("ContinueLabel") }
        if returningToReview != old.returningToReview { names.append("ReturningToReview") }
        if lastError != old.lastError { names.append("LastError") }
        if updatedAt != old.updatedAt { names.append("UpdatedAt") }
        if path != old.path { names.append("Path") }
        if announcement != old.announcement { names.append("Announcement") }
        if receipt != old.receipt { names.append("Receipt") }
        return names
    }
}

/// Something that happened, for the bus front end to announce after it has
/// replied to the call that caused it.
enum ServiceEvent {
    case sessionNew(id: String)
    case sessionRemoved(id: String)
    case sessionCountChanged
    /// The named properties of a session changed; the values are in `now`.
    case propertiesChanged(id: String, names: [String], now: SessionProperties)
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

/// Throw this from a submit action to show `message` to the person exactly
/// as given.
///
/// The message must already be in the session's locale (`context.locale`).
/// Any other error is shown as the daemon's localized default, "Couldn't send
/// this. Try again.", and its details go only to the journal. A validator
/// rejects a value by *returning* its message: one that throws, this error
/// included, makes the daemon refuse the value with its own "Couldn't check
/// this value." (it fails closed), and the message goes to the journal.
public struct LocalizedFailure: Error, Sendable, Hashable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}

extension LocalizedFailure: CustomStringConvertible {
    /// What the daemon's log records: the person's message, marked as such,
    /// since the plugin gave no detail for the administrator
    /// (``ExplainedFailure`` does).
    public var description: String { "no detail for the log; the person was told: \(message)" }
}

/// Throw this from a plugin to show `message` to the person, as
/// ``LocalizedFailure`` does, and to give the administrator `detail` for the
/// daemon's log: in English, what failed and why (the address, the status,
/// the system's error). Keep secrets and the person's answers out of both.
///
///     throw ExplainedFailure(busy(context.locale), detail: "POST https://crm.example/hooks answered HTTP 503")
public struct ExplainedFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// For the person, in the session's locale (`context.locale`).
    public var message: String
    /// For the administrator's log, in English.
    public var detail: String

    public init(_ message: String, detail: String) {
        self.message = message
        self.detail = detail
    }

    /// The detail: what the daemon's log records.
    public var description: String { detail }
}

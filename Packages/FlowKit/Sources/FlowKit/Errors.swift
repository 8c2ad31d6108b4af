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

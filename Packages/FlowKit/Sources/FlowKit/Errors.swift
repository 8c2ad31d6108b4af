/// Throw this from a plugin to show `message` to the person exactly as given.
///
/// The message must already be in the session's locale (`context.locale`).
/// Any other error is shown as the daemon's localized default, for a submit
/// action "Couldn't send this. Try again.", and its details go only to the
/// journal.
public struct LocalizedFailure: Error, Sendable, Hashable {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }
}

// The only file that imports Foundation's essentials: `LocalizedError` lives there.
import FlowKit
import FoundationEssentials

/// Turns an error a plugin threw into the message the person sees.
enum ErrorMessages {
    /// A ``FlowKit/LocalizedFailure``'s or ``FlowKit/ExplainedFailure``'s message, or a `LocalizedError`'s
    /// `errorDescription`; nil for any other error (the daemon then shows its
    /// localized default and keeps the details for the journal).
    static func message(for error: any Error) -> String? {
        if let failure = error as? LocalizedFailure {
            return failure.message
        }
        if let failure = error as? ExplainedFailure {
            return failure.message
        }
        if let localized = error as? any LocalizedError {
            return localized.errorDescription
        }
        return nil
    }
}

import FlowKit

/// The part of a session that is never persisted: secure answers and the
/// caches of plugin results.
///
/// Not `Codable` on purpose (secure values can never reach a record), and its
/// textual and reflected forms hide the contents, so `print(session)` or
/// `dump(session)` cannot leak a password into a log.
struct SessionScratch: Sendable {
    /// Field id → secret.
    var secure: [String: String] = [:]
    /// Field id → the plugin results for the value they were computed for.
    var fieldVerdicts: [String: FieldVerdict] = [:]
    /// Step id → the plugin step validator results for one revision.
    var stepVerdicts: [String: StepVerdict] = [:]
    /// The Continue that asked for plugin checks and waits for them.
    var pendingContinue: PendingContinue?

    struct FieldVerdict: Sendable {
        var value: AnswerValue
        /// Validator name → outcome.
        var results: [String: PluginCheckOutcome]
    }

    struct StepVerdict: Sendable {
        var revision: UInt64
        /// Validator name → outcome.
        var results: [String: PluginCheckOutcome]
    }

    struct PendingContinue: Sendable, Hashable {
        var step: String
        var revision: UInt64
    }

    /// Forgets every plugin result (after a settle, or when values vanish).
    mutating func clearVerdicts() {
        fieldVerdicts = [:]
        stepVerdicts = [:]
        pendingContinue = nil
    }
}

extension SessionScratch: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "SessionScratch(\(secure.count) secure values hidden)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [:]) }
}

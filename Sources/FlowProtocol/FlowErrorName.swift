import DBus
import FlowEngine

/// The error names flowd sends (``FlowBus/errorPrefix`` + the case): the one
/// list, for the daemon's ``FlowErrorName/errorName`` and the client's
/// classification. docs/dbus-api.md says when each is sent.
package enum FlowErrorName: String, Sendable, Hashable, CaseIterable {
    /// An unknown flow, session or step id.
    case notFound = "NotFound"
    /// A wrong argument or value type, an unknown option, a field not on the step.
    case invalidArgs = "InvalidArgs"
    /// Another uid's session, `Reload` by anyone but root (or the per-user flowd's own user), or a caller whose uid cannot be read.
    case accessDenied = "AccessDenied"
    /// Not possible in the session's state.
    case invalidState = "InvalidState"
    /// `Submit` found a step that is not finished; the session moved there.
    case validationFailed = "ValidationFailed"
    /// A value, list, argument count or session count over its bound.
    case limitExceeded = "LimitExceeded"
    /// The submit action failed; the message is the localized `LastError`.
    case submitFailed = "SubmitFailed"
    /// A plugin needed to start a session failed.
    case pluginFailed = "PluginFailed"
    /// A plugin call ran past its time limit.
    case timeout = "Timeout"
    /// `Cancel` stopped the pending `Submit`, or flowd stopped during it.
    case cancelled = "Cancelled"
    /// An internal failure (the database refused a write; a bad configuration
    /// on `Reload`): the call did not take effect.
    case failed = "Failed"

    /// The full D-Bus error name.
    package var errorName: ErrorName { ErrorName(trusted: FlowBus.errorPrefix + rawValue) }

    /// The contract's name `name` stands for; nil for any other error name.
    package init?(_ name: ErrorName) {
        guard name.rawValue.hasPrefix(FlowBus.errorPrefix) else { return nil }
        self.init(rawValue: String(name.rawValue.dropFirst(FlowBus.errorPrefix.count)))
    }

    /// The name for an engine refusal of `kind`: the one place the engine's
    /// kinds meet the contract's names.
    package init(_ kind: SessionError.Kind) {
        switch kind {
        case .invalidArgs: self = .invalidArgs
        case .invalidState: self = .invalidState
        case .notFound: self = .notFound
        case .validationFailed: self = .validationFailed
        case .limitExceeded: self = .limitExceeded
        case .incompatibleRecord: self = .failed
        }
    }
}

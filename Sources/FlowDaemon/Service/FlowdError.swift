import DBus
import FlowEngine

/// A refusal the daemon sends back to a caller: one of the contract's error
/// names (`org.flowd.Flow1.Error.<Name>`) with an English message for
/// programs and logs.
public struct FlowdError: Error, Sendable, Hashable, CustomStringConvertible, DBusErrorConvertible {
    /// The last part of the error name.
    public enum Name: String, Sendable, Hashable, CaseIterable {
        case notFound = "NotFound"
        case invalidArgs = "InvalidArgs"
        case accessDenied = "AccessDenied"
        case invalidState = "InvalidState"
        case validationFailed = "ValidationFailed"
        case limitExceeded = "LimitExceeded"
        case submitFailed = "SubmitFailed"
        case pluginFailed = "PluginFailed"
        case timeout = "Timeout"
        case cancelled = "Cancelled"
        /// Not in the contract's list: an internal failure (the database
        /// refused a write, say). The call did not take effect.
        case failed = "Failed"
    }

    public let name: Name
    public let message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    /// The full D-Bus error name.
    public var errorName: String { "org.flowd.Flow1.Error." + name.rawValue }

    public var description: String { "\(errorName): \(message)" }

    public var dbusError: DBusError {
        // Every name above is a valid error name by construction.
        DBusError(name: ErrorName(trusted: errorName), message: message)
    }

    static func notFound(_ m: String) -> FlowdError { FlowdError(.notFound, m) }
    static func invalidArgs(_ m: String) -> FlowdError { FlowdError(.invalidArgs, m) }
    static func accessDenied(_ m: String) -> FlowdError { FlowdError(.accessDenied, m) }
    static func invalidState(_ m: String) -> FlowdError { FlowdError(.invalidState, m) }
    static func limitExceeded(_ m: String) -> FlowdError { FlowdError(.limitExceeded, m) }
    static func failed(_ m: String) -> FlowdError { FlowdError(.failed, m) }

    /// The engine's refusal as the contract's error.
    init(_ error: SessionError) {
        switch error.kind {
        case .invalidArgs: self.init(.invalidArgs, error.message)
        case .invalidState: self.init(.invalidState, error.message)
        case .notFound: self.init(.notFound, error.message)
        case .validationFailed: self.init(.validationFailed, error.message)
        case .limitExceeded: self.init(.limitExceeded, error.message)
        case .incompatibleRecord: self.init(.failed, "the stored session cannot be restored: \(error.message)")
        }
    }
}

import DBus
import FlowEngine
import FlowProtocol

/// A refusal the daemon sends back to a caller: one of the contract's error
/// names (``FlowErrorName``) with an English message for programs and logs.
package struct FlowdError: Error, Sendable, Hashable, CustomStringConvertible, DBusErrorConvertible {
    package let name: FlowErrorName
    package let message: String

    package init(_ name: FlowErrorName, _ message: String) {
        self.name = name
        self.message = message
    }

    /// The full D-Bus error name.
    package var errorName: String { name.errorName.rawValue }

    package var description: String { "\(errorName): \(message)" }

    package var dbusError: DBusError {
        DBusError(name: name.errorName, message: message)
    }

    static func notFound(_ m: String) -> FlowdError { FlowdError(.notFound, m) }
    static func invalidArgs(_ m: String) -> FlowdError { FlowdError(.invalidArgs, m) }
    static func accessDenied(_ m: String) -> FlowdError { FlowdError(.accessDenied, m) }
    static func invalidState(_ m: String) -> FlowdError { FlowdError(.invalidState, m) }
    static func limitExceeded(_ m: String) -> FlowdError { FlowdError(.limitExceeded, m) }
    static func failed(_ m: String) -> FlowdError { FlowdError(.failed, m) }

    /// The engine's refusal as the contract's error.
    init(_ error: SessionError) {
        let name = FlowErrorName(error.kind)
        switch error.kind {
        case .incompatibleRecord: self.init(name, "the stored session cannot be restored: \(error.message)")
        default: self.init(name, error.message)
        }
    }
}

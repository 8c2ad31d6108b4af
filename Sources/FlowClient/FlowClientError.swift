import DBus
import FlowProtocol

/// A failed call to flowd: what kind of failure, the D-Bus error behind it
/// (its name and message, when there was one), and a sentence saying what
/// went wrong.
package struct FlowClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    package enum Kind: Sendable, Hashable {
        /// flowd refused the call with one of the contract's errors.
        case flowd(FlowErrorName)
        /// flowd does not own its name on the bus (`ServiceUnknown`,
        /// `NameHasNoOwner`, or its activation failed or timed out).
        case notRunning
        /// The bus could not be reached.
        case cannotConnect
        /// The connection to the bus was lost, or the client was closed.
        case disconnected
        /// No reply within the call's timeout.
        case noReply
        /// The task awaiting the call was cancelled. flowd may still have
        /// received the call and acted on it.
        case cancelled
        /// The reply does not have the contract's shape, or flowd does not
        /// know the member: flowd and this client disagree on the API.
        case protocolMismatch
        /// Another D-Bus error: the bus or libdbus refused the message
        /// (its policy, a value it cannot carry, an unknown object). See ``name``.
        case dbus
    }

    /// What kind of failure it is.
    package var kind: Kind
    /// A sentence saying what went wrong (flowd's own message for ``Kind/flowd(_:)``).
    package var message: String
    /// The D-Bus error behind the failure, when there was one.
    package var underlying: DBusError?

    /// An error of `kind` saying `message`.
    package init(_ kind: Kind, _ message: String, underlying: DBusError? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// The D-Bus error name, when there was one (a refusal the client made
    /// itself on flowd's behalf has flowd's name).
    package var name: ErrorName? { underlying?.name ?? flowdName?.errorName }

    /// The contract's error name, for a refusal by flowd.
    package var flowdName: FlowErrorName? {
        if case .flowd(let name) = kind { return name }
        return nil
    }

    package var description: String { name.map { "\($0.rawValue): \(message)" } ?? message }

    /// Classifies the D-Bus error a call of `member` ended with.
    package init(_ error: DBusError, member: MemberName) {
        if let name = FlowErrorName(error.name) {
            self.init(.flowd(name), error.message, underlying: error)
            return
        }
        switch error.name {
        case .serviceUnknown, .nameHasNoOwner:
            self.init(.notRunning, "flowd is not running on the bus (\(error.message))", underlying: error)
        case .noReply, .timeout:
            self.init(.noReply, "flowd did not answer \(member) in time (\(error.message))", underlying: error)
        case .timedOut:
            // The bus started flowd, which did not take its name in time.
            self.init(.notRunning, "flowd could not be started in time (\(error.message))", underlying: error)
        case .disconnected, .noServer, .ioError:
            self.init(.disconnected, "the connection to the bus was lost (\(error.message))", underlying: error)
        case .unknownMethod, .unknownInterface, .unknownProperty:
            self.init(
                .protocolMismatch, "flowd does not understand \(member); is it an older version? (\(error.message))",
                underlying: error)
        default:
            if error.name.isActivationFailure {
                self.init(.notRunning, "flowd could not be started (\(error.message))", underlying: error)
            } else {
                self.init(.dbus, error.message, underlying: error)
            }
        }
    }

    /// A reply (or signal) of `member` that does not have the contract's shape.
    init(_ error: WireError, member: MemberName) {
        self.init(.protocolMismatch, "flowd's \(member) reply does not match the API: \(error.message)")
    }
}

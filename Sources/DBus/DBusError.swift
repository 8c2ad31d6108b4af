/// A D-Bus error: a name such as `org.freedesktop.DBus.Error.InvalidArgs` and
/// a human message.
///
/// Everything this module throws is a `DBusError`, because everything it can
/// fail with (libdbus failures, bad names and values, error replies from a
/// peer) already has that shape, and an error thrown by a method handler goes
/// back to the caller as exactly this name and message.
package struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name sent on the wire.
    package var name: ErrorName
    /// A human message, sent as the error reply's first argument.
    package var message: String

    /// An error with `name` and `message`.
    package init(name: ErrorName, message: String) {
        self.name = name
        self.message = message
    }

    /// An error with `name` and `message`.
    package init(_ name: ErrorName, _ message: String) {
        self.init(name: name, message: message)
    }

    package var description: String { "\(name.rawValue): \(message)" }

    /// `org.freedesktop.DBus.Error.Failed`.
    package static func failed(_ message: String) -> DBusError { DBusError(.failed, message) }
    /// `org.freedesktop.DBus.Error.InvalidArgs`.
    package static func invalidArgs(_ message: String) -> DBusError { DBusError(.invalidArgs, message) }
    /// `org.freedesktop.DBus.Error.UnknownMethod`.
    package static func unknownMethod(_ message: String) -> DBusError { DBusError(.unknownMethod, message) }
    /// `org.freedesktop.DBus.Error.UnknownObject`.
    package static func unknownObject(_ message: String) -> DBusError { DBusError(.unknownObject, message) }
    /// `org.freedesktop.DBus.Error.UnknownInterface`.
    package static func unknownInterface(_ message: String) -> DBusError { DBusError(.unknownInterface, message) }
    /// `org.freedesktop.DBus.Error.UnknownProperty`.
    package static func unknownProperty(_ message: String) -> DBusError { DBusError(.unknownProperty, message) }
    /// `org.freedesktop.DBus.Error.PropertyReadOnly`.
    package static func propertyReadOnly(_ message: String) -> DBusError { DBusError(.propertyReadOnly, message) }
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    package static func accessDenied(_ message: String) -> DBusError { DBusError(.accessDenied, message) }
    /// `org.freedesktop.DBus.Error.Disconnected`.
    package static func disconnected(_ message: String) -> DBusError { DBusError(.disconnected, message) }
}

extension ErrorName {
    /// The bus could not start the service a call was for (D-Bus
    /// activation failed: `org.freedesktop.DBus.Error.Spawn.*`, or systemd's
    /// `org.freedesktop.systemd1.*`, such as a masked unit).
    package var isActivationFailure: Bool {
        rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.") || rawValue.hasPrefix("org.freedesktop.systemd1.")
    }

    /// `org.freedesktop.DBus.Error.Failed`: a generic failure.
    package static let failed: ErrorName = "org.freedesktop.DBus.Error.Failed"
    /// `org.freedesktop.DBus.Error.InteractiveAuthorizationRequired`: the call
    /// could succeed if the caller allowed interactive authorization.
    package static let interactiveAuthorizationRequired: ErrorName =
        "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
    /// `org.freedesktop.DBus.Error.NoMemory`.
    package static let noMemory: ErrorName = "org.freedesktop.DBus.Error.NoMemory"
    /// `org.freedesktop.DBus.Error.ServiceUnknown`: no such name, and none activatable.
    package static let serviceUnknown: ErrorName = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// `org.freedesktop.DBus.Error.NameHasNoOwner`.
    package static let nameHasNoOwner: ErrorName = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// `org.freedesktop.DBus.Error.NoReply`: the call timed out.
    package static let noReply: ErrorName = "org.freedesktop.DBus.Error.NoReply"
    /// `org.freedesktop.DBus.Error.IOError`.
    package static let ioError: ErrorName = "org.freedesktop.DBus.Error.IOError"
    /// `org.freedesktop.DBus.Error.BadAddress`.
    package static let badAddress: ErrorName = "org.freedesktop.DBus.Error.BadAddress"
    /// `org.freedesktop.DBus.Error.NotSupported`.
    package static let notSupported: ErrorName = "org.freedesktop.DBus.Error.NotSupported"
    /// `org.freedesktop.DBus.Error.LimitsExceeded`.
    package static let limitsExceeded: ErrorName = "org.freedesktop.DBus.Error.LimitsExceeded"
    /// `org.freedesktop.DBus.Error.AccessDenied`.
    package static let accessDenied: ErrorName = "org.freedesktop.DBus.Error.AccessDenied"
    /// `org.freedesktop.DBus.Error.NoServer`.
    package static let noServer: ErrorName = "org.freedesktop.DBus.Error.NoServer"
    /// `org.freedesktop.DBus.Error.Timeout`.
    package static let timeout: ErrorName = "org.freedesktop.DBus.Error.Timeout"
    /// `org.freedesktop.DBus.Error.TimedOut`: what the bus answers when the
    /// service it started did not take its name in time (activation timeout).
    package static let timedOut: ErrorName = "org.freedesktop.DBus.Error.TimedOut"
    /// `org.freedesktop.DBus.Error.Disconnected`.
    package static let disconnected: ErrorName = "org.freedesktop.DBus.Error.Disconnected"
    /// `org.freedesktop.DBus.Error.InvalidArgs`.
    package static let invalidArgs: ErrorName = "org.freedesktop.DBus.Error.InvalidArgs"
    /// `org.freedesktop.DBus.Error.UnknownMethod`.
    package static let unknownMethod: ErrorName = "org.freedesktop.DBus.Error.UnknownMethod"
    /// `org.freedesktop.DBus.Error.UnknownObject`.
    package static let unknownObject: ErrorName = "org.freedesktop.DBus.Error.UnknownObject"
    /// `org.freedesktop.DBus.Error.UnknownInterface`.
    package static let unknownInterface: ErrorName = "org.freedesktop.DBus.Error.UnknownInterface"
    /// `org.freedesktop.DBus.Error.UnknownProperty`.
    package static let unknownProperty: ErrorName = "org.freedesktop.DBus.Error.UnknownProperty"
    /// `org.freedesktop.DBus.Error.PropertyReadOnly`.
    package static let propertyReadOnly: ErrorName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    /// `org.freedesktop.DBus.Error.InvalidSignature`.
    package static let invalidSignature: ErrorName = "org.freedesktop.DBus.Error.InvalidSignature"
    /// `org.freedesktop.DBus.Error.MatchRuleInvalid`.
    package static let matchRuleInvalid: ErrorName = "org.freedesktop.DBus.Error.MatchRuleInvalid"
}

/// An error type of the program that knows its D-Bus name and message.
///
/// A method handler may throw (or ``MethodInvocation/fail(_:)`` with) any
/// error: a `DBusErrorConvertible` goes back as its ``dbusError``; any other
/// error goes back as `org.freedesktop.DBus.Error.Failed` with a generic
/// message, and its details only reach the log (they may hold secrets).
package protocol DBusErrorConvertible: Error {
    /// The name and message to send to the caller.
    var dbusError: DBusError { get }
}

extension DBusError: DBusErrorConvertible {
    /// Itself.
    package var dbusError: DBusError { self }
}

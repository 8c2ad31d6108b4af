
/// The four kinds of D-Bus message.
package enum MessageType: Int32, Sendable {
    /// A call expecting a reply (unless flagged no-reply-expected).
    case methodCall = 1
    /// A successful reply.
    case methodReturn = 2
    /// An error reply.
    case error = 3
    /// A signal, broadcast or unicast.
    case signal = 4
}

/// A D-Bus message: owns one reference to a libdbus `DBusMessage`
/// (`dbus_message_unref` in deinit).
///
/// Build one with ``methodCall(destination:path:interface:member:)``,
/// ``signal(path:interface:member:)``, ``makeReturn()`` or ``makeError(_:)``,
/// append arguments, and send it on a ``Connection``. A message that was sent
/// or received is read-only; do not append to one message from two threads.
package final class Message: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes over a reference the caller owns.
    init(adopting raw: OpaquePointer) {
        self.raw = raw
    }

    /// Takes a new reference (`dbus_message_ref`).
    init(retaining raw: OpaquePointer) {
        LibDBus.ref(message: raw)
        self.raw = raw
    }

    deinit {
        LibDBus.unref(message: raw)
    }

    // MARK: making messages

    /// A method call (`dbus_message_new_method_call`). `destination` may be nil
    /// on a peer-to-peer connection; `interface` may be nil (any interface
    /// with the member).
    package static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName
    ) -> Message {
        Message(adopting: LibDBus.newMethodCall(
            destination: destination?.rawValue, path: path.rawValue, interface: interface?.rawValue, member: member.rawValue))
    }

    /// A message read from its wire format, checked by libdbus as a message
    /// from the bus is (for the fuzzers of the daemon's argument parsing).
    package static func demarshaling(_ bytes: [UInt8]) throws(DBusError) -> Message {
        let (raw, error) = LibDBus.demarshal(bytes)
        if let error { throw error }
        guard let raw else { throw DBusError(.invalidArgs, "not a D-Bus message") }
        return Message(adopting: raw)
    }

    /// The message in its wire format.
    package func marshaled() -> [UInt8] {
        LibDBus.marshal(raw)
    }

    /// A signal (`dbus_message_new_signal`). Set ``destination`` to unicast it.
    package static func signal(path: ObjectPath, interface: InterfaceName, member: MemberName) -> Message {
        Message(adopting: LibDBus.newSignal(path: path.rawValue, interface: interface.rawValue, member: member.rawValue))
    }

    /// An empty method return for this received call (`dbus_message_new_method_return`).
    /// Only a call that was sent has a serial to reply to; libdbus would abort otherwise.
    package func makeReturn() -> Message {
        precondition(serial != 0, "makeReturn() needs a call that was sent (its serial is 0)")
        return Message(adopting: LibDBus.newMethodReturn(raw))
    }

    /// An error reply for this received call (`dbus_message_new_error`).
    package func makeError(_ error: DBusError) -> Message {
        precondition(serial != 0, "makeError(_:) needs a call that was sent (its serial is 0)")
        return Message(adopting: LibDBus.newError(raw, name: error.name.rawValue, message: error.message))
    }

    // MARK: header

    /// The message type.
    package var type: MessageType {
        MessageType(rawValue: LibDBus.type(raw)) ?? .error
    }

    /// The object path of a call or signal.
    package var path: ObjectPath? { LibDBus.path(raw).map { ObjectPath(trusted: String(cString: $0)) } }
    /// The interface of a call or signal (optional in calls).
    package var interface: InterfaceName? { LibDBus.interface(raw).map { InterfaceName(trusted: String(cString: $0)) } }
    /// The method or signal name.
    package var member: MemberName? { LibDBus.member(raw).map { MemberName(trusted: String(cString: $0)) } }
    /// The error name of an error reply.
    package var errorName: ErrorName? { LibDBus.errorName(raw).map { ErrorName(trusted: String(cString: $0)) } }

    /// The sender's unique name, filled in by the bus.
    package var sender: BusName? {
        get { LibDBus.sender(raw).map { BusName(trusted: String(cString: $0)) } }
        set { LibDBus.setSender(raw, newValue?.rawValue) }
    }

    /// The destination; set it on a signal to unicast it.
    package var destination: BusName? {
        get { LibDBus.destination(raw).map { BusName(trusted: String(cString: $0)) } }
        set { LibDBus.setDestination(raw, newValue?.rawValue) }
    }

    /// The serial the connection gave the message (0 before sending).
    package var serial: UInt32 { LibDBus.serial(raw) }
    /// The serial of the call this message answers (0 if none).
    package var replySerial: UInt32 { LibDBus.replySerial(raw) }

    /// The signature of the arguments.
    package var signature: Signature {
        Signature(trusted: LibDBus.signature(raw).map { String(cString: $0) } ?? "")
    }

    /// True when the arguments have exactly `signature` (`dbus_message_has_signature`, no allocation).
    package func hasSignature(_ signature: Signature) -> Bool {
        LibDBus.hasSignature(raw, signature.rawValue)
    }

    /// The caller does not want a reply (the no-reply-expected flag).
    package var noReplyExpected: Bool {
        get { LibDBus.noReply(raw) }
        set { LibDBus.setNoReply(raw, newValue) }
    }

    /// The caller lets the service ask for authentication during this call
    /// (the `ALLOW_INTERACTIVE_AUTHORIZATION` flag): a polkit check may then
    /// wait for an authentication agent instead of refusing.
    package var allowsInteractiveAuthorization: Bool {
        get { LibDBus.allowsInteractiveAuthorization(raw) }
        set { LibDBus.setAllowsInteractiveAuthorization(raw, newValue) }
    }

    /// Whether the bus may start the destination service for this call.
    package var autoStart: Bool {
        get { LibDBus.autoStart(raw) }
        set { LibDBus.setAutoStart(raw, newValue) }
    }

    /// For an error reply: its name and its first string argument as message.
    package var error: DBusError? {
        guard type == .error else { return nil }
        var reader = arguments()
        let message = (try? reader.next(String.self)) ?? ""
        return DBusError(errorName ?? .failed, message)
    }

    /// True for a signal `member` on `interface`.
    package func isSignal(interface: InterfaceName, member: MemberName) -> Bool {
        type == .signal && matches(interface: interface, member: member)
    }

    private func matches(interface: InterfaceName, member: MemberName) -> Bool {
        guard let i = LibDBus.interface(raw), let m = LibDBus.member(raw) else { return false }
        return String(cString: m) == member.rawValue && String(cString: i) == interface.rawValue
    }

    // MARK: arguments

    /// A reader positioned at the first argument.
    package func arguments() -> MessageReader {
        MessageReader(message: self)
    }

    /// Every argument as a ``DBusValue``.
    package func readArguments() throws(DBusError) -> [DBusValue] {
        var reader = arguments()
        return try reader.readAll()
    }

    /// A writer that appends after the existing arguments.
    package func appender() -> MessageWriter {
        MessageWriter(message: self)
    }

    /// Appends values, each as its own type. When one is invalid it throws, and
    /// the values before it stay appended: build a fresh message to retry.
    @discardableResult
    package func append(_ values: DBusValue...) throws(DBusError) -> Message {
        try append(contentsOf: values)
    }

    /// Appends values, each as its own type.
    @discardableResult
    package func append(contentsOf values: [DBusValue]) throws(DBusError) -> Message {
        var writer = appender()
        try writer.appendValues(values)
        return self
    }

    /// Appends typed values: `try message.append(typed: answers, "note")`.
    @discardableResult
    package func append<each T: DBusRepresentable>(typed values: repeat each T) throws(DBusError) -> Message {
        var writer = appender()
        for value in repeat each values { try writer.append(value) }
        return self
    }
}

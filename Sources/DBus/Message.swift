import Synchronization

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

/// A D-Bus message, backed by libdbus or by the bytes flowd read itself.
///
/// A message libdbus holds owns one reference to a `DBusMessage`
/// (`dbus_message_unref` in deinit). A message flowd read from its own
/// socket (``init(received:)``) keeps the bytes: its header accessors read
/// the ``IncomingHeader``, its ``MessageReader`` reads the body, and the
/// libdbus message is made only if something needs it (sending or writing
/// to a received message, which flowd does not do).
///
/// Build one with ``methodCall(destination:path:interface:member:)``,
/// ``signal(path:interface:member:)``, ``makeReturn()`` or ``makeError(_:)``,
/// append arguments, and send it on a ``Connection``. A message that was sent
/// or received is read-only; do not append to one message from two threads.
package final class Message: @unchecked Sendable {
    /// The libdbus message of a message libdbus made or loaded.
    private let libdbus: OpaquePointer?
    /// The header, bytes and descriptors of a message flowd read itself.
    private let received: (header: IncomingHeader, bytes: ReceivedBytes, fds: [UnixFD])?
    /// A received message's libdbus message, once made (``raw``).
    private let loaded = Mutex<UncheckedPointer?>(nil)

    /// Takes over a reference the caller owns.
    init(adopting raw: OpaquePointer) {
        libdbus = raw
        received = nil
    }

    /// Takes a new reference (`dbus_message_ref`).
    init(retaining raw: OpaquePointer) {
        LibDBus.ref(message: raw)
        libdbus = raw
        received = nil
    }

    /// A message flowd read from its own socket (cut out by a
    /// ``MessageFramer``), read from its bytes without libdbus.
    ///
    /// - Throws: `InconsistentMessage` for a body libdbus' loader would
    ///   refuse (``BodyReader``): the message is refused as a whole, as
    ///   ``demarshaling(_:)`` refuses it.
    package init(received message: IncomingMessage) throws(DBusError) {
        guard message.bytes.count >= message.header.length else {
            throw .inconsistentMessage("a message of \(message.bytes.count) bytes, shorter than its header says")
        }
        let bytes = ReceivedBytes(message)
        do throws(DBusError) {
            try BodyReader.validate(bytes, fds: message.fds.count)
        } catch {
            bytes.deallocate()
            throw error
        }
        libdbus = nil
        received = (message.header, bytes, message.fds)
    }

    deinit {
        if let libdbus { LibDBus.unref(message: libdbus) }
        if let received {
            received.bytes.deallocate()
            if let made = loaded.withLock({ $0 }) { LibDBus.unref(message: made.raw) }
        }
    }

    /// The libdbus message. For a received message it is made on first use:
    /// libdbus loads the bytes, or, when it cannot (a message with file
    /// descriptors, which travel beside the bytes), it gets the same header
    /// and the values this message reads.
    var raw: OpaquePointer {
        if let libdbus { return libdbus }
        return loaded.withLock { made in
            if let made { return made.raw }
            let raw = makeLibDBusMessage()
            made = UncheckedPointer(raw: raw)
            return raw
        }
    }

    /// True once a received message's libdbus message was made (for tests).
    var hasLoadedLibDBusMessage: Bool { loaded.withLock { $0 != nil } }

    /// A received message as libdbus holds it (see ``raw``).
    private func makeLibDBusMessage() -> OpaquePointer {
        guard let received else { preconditionFailure("only a received message is made on demand") }
        if received.fds.isEmpty, case (let raw?, nil) = LibDBus.demarshal(Array(received.bytes.message)) { return raw }
        let header = received.header
        let copy = Message(adopting: LibDBus.newMessage(type: Int32(header.type?.rawValue ?? 0)))
        LibDBus.setHeader(
            copy.raw, path: header.path?.rawValue, interface: header.interface?.rawValue, member: header.member?.rawValue,
            errorName: header.errorName?.rawValue, destination: header.destination?.rawValue, sender: header.sender?.rawValue,
            serial: header.serial, replySerial: header.replySerial, flags: header.flags)
        if let values = try? readArguments() { _ = try? copy.append(contentsOf: values) }
        LibDBus.ref(message: copy.raw)
        return copy.raw
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
        if let received { return Array(received.bytes.message) }
        return LibDBus.marshal(raw)
    }

    /// A signal (`dbus_message_new_signal`). Set ``destination`` to unicast it.
    package static func signal(path: ObjectPath, interface: InterfaceName, member: MemberName) -> Message {
        Message(adopting: LibDBus.newSignal(path: path.rawValue, interface: interface.rawValue, member: member.rawValue))
    }

    /// An empty method return for this received call (`dbus_message_new_method_return`).
    /// Only a call that was sent has a serial to reply to; libdbus would abort otherwise.
    package func makeReturn() -> Message {
        precondition(serial != 0, "makeReturn() needs a call that was sent (its serial is 0)")
        guard received != nil else { return Message(adopting: LibDBus.newMethodReturn(raw)) }
        return Message(adopting: LibDBus.newReply(to: serial, of: sender?.rawValue, error: nil))
    }

    /// An error reply for this received call (`dbus_message_new_error`).
    package func makeError(_ error: DBusError) -> Message {
        precondition(serial != 0, "makeError(_:) needs a call that was sent (its serial is 0)")
        guard received != nil else {
            return Message(adopting: LibDBus.newError(raw, name: error.name.rawValue, message: error.message))
        }
        return Message(adopting: LibDBus.newReply(to: serial, of: sender?.rawValue, error: (error.name.rawValue, error.message)))
    }

    // MARK: header
    //
    // A received message answers from its header; its setters do nothing,
    // as libdbus ignores them on a message it received (it is locked).

    /// The message type.
    package var type: MessageType {
        if let received { return received.header.type ?? .error }
        return MessageType(rawValue: LibDBus.type(raw)) ?? .error
    }

    /// The object path of a call or signal.
    package var path: ObjectPath? {
        if let received { return received.header.path }
        return LibDBus.path(raw).map { ObjectPath(trusted: String(cString: $0)) }
    }

    /// The interface of a call or signal (optional in calls).
    package var interface: InterfaceName? {
        if let received { return received.header.interface }
        return LibDBus.interface(raw).map { InterfaceName(trusted: String(cString: $0)) }
    }

    /// The method or signal name.
    package var member: MemberName? {
        if let received { return received.header.member }
        return LibDBus.member(raw).map { MemberName(trusted: String(cString: $0)) }
    }

    /// The error name of an error reply.
    package var errorName: ErrorName? {
        if let received { return received.header.errorName }
        return LibDBus.errorName(raw).map { ErrorName(trusted: String(cString: $0)) }
    }

    /// The sender's unique name, filled in by the bus.
    package var sender: BusName? {
        get {
            if let received { return received.header.sender }
            return LibDBus.sender(raw).map { BusName(trusted: String(cString: $0)) }
        }
        set { if received == nil { LibDBus.setSender(raw, newValue?.rawValue) } }
    }

    /// The destination; set it on a signal to unicast it.
    package var destination: BusName? {
        get {
            if let received { return received.header.destination }
            return LibDBus.destination(raw).map { BusName(trusted: String(cString: $0)) }
        }
        set { if received == nil { LibDBus.setDestination(raw, newValue?.rawValue) } }
    }

    /// The serial the connection gave the message (0 before sending).
    package var serial: UInt32 {
        if let received { return received.header.serial }
        return LibDBus.serial(raw)
    }

    /// The serial of the call this message answers (0 if none).
    package var replySerial: UInt32 {
        if let received { return received.header.replySerial }
        return LibDBus.replySerial(raw)
    }

    /// The signature of the arguments.
    package var signature: Signature {
        if let received { return received.header.signature }
        return Signature(trusted: LibDBus.signature(raw).map { String(cString: $0) } ?? "")
    }

    /// True when the arguments have exactly `signature` (`dbus_message_has_signature`, no allocation).
    package func hasSignature(_ signature: Signature) -> Bool {
        if let received { return received.header.signature == signature }
        return LibDBus.hasSignature(raw, signature.rawValue)
    }

    /// The caller does not want a reply (the no-reply-expected flag).
    package var noReplyExpected: Bool {
        get {
            if let received { return received.header.flags & Self.noReplyFlag != 0 }
            return LibDBus.noReply(raw)
        }
        set { if received == nil { LibDBus.setNoReply(raw, newValue) } }
    }

    /// The caller lets the service ask for authentication during this call
    /// (the `ALLOW_INTERACTIVE_AUTHORIZATION` flag): a polkit check may then
    /// wait for an authentication agent instead of refusing.
    package var allowsInteractiveAuthorization: Bool {
        get {
            if let received { return received.header.flags & Self.interactiveFlag != 0 }
            return LibDBus.allowsInteractiveAuthorization(raw)
        }
        set { if received == nil { LibDBus.setAllowsInteractiveAuthorization(raw, newValue) } }
    }

    /// Whether the bus may start the destination service for this call.
    package var autoStart: Bool {
        get {
            if let received { return received.header.flags & Self.noAutoStartFlag == 0 }
            return LibDBus.autoStart(raw)
        }
        set { if received == nil { LibDBus.setAutoStart(raw, newValue) } }
    }

    /// The header's flags (the specification's values).
    static let noReplyFlag: UInt8 = 0x1, noAutoStartFlag: UInt8 = 0x2, interactiveFlag: UInt8 = 0x4

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
        if let received { return received.header.member == member && received.header.interface == interface }
        guard let i = LibDBus.interface(raw), let m = LibDBus.member(raw) else { return false }
        return String(cString: m) == member.rawValue && String(cString: i) == interface.rawValue
    }

    // MARK: arguments

    /// A reader positioned at the first argument.
    package func arguments() -> MessageReader {
        if let received { return MessageReader(message: self, body: BodyReader(received.bytes, fds: received.fds.count)) }
        return MessageReader(message: self)
    }

    /// The file descriptors a received message carries, in the header's order.
    var receivedFDs: [UnixFD] { received?.fds ?? [] }

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

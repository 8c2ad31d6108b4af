import DBus

/// A typed handle on one interface of a remote object, for raw calls in
/// client mode: tests that send what no well-behaved client sends. flowd's
/// clients use FlowClient.
///
/// ```swift
/// let manager = Proxy(connection: connection, destination: "org.example.Forms1",
///                     path: "/org/example/Forms1", interface: "org.example.Forms1.Manager")
/// let flows = try manager.call("ListFlows", returning: [[String: DBusValue]].self)
/// let count = try manager.property("SessionCount", as: UInt32.self)
/// ```
///
/// The blocking methods suit client mode; ``call(_:arguments:onReply:)``
/// suits a connection attached to a loop.
package struct Proxy: Sendable {
    /// The connection calls go through.
    package let connection: Connection
    /// The service: a well-known or unique name.
    package let destination: BusName
    /// The object.
    package let path: ObjectPath
    /// The interface calls and properties use.
    package let interface: InterfaceName
    /// How long blocking calls wait for a reply.
    package var timeout: Duration

    /// A proxy for `interface` of `path` at `destination`.
    package init(
        connection: Connection, destination: BusName, path: ObjectPath, interface: InterfaceName,
        timeout: Duration = .seconds(25)
    ) {
        self.connection = connection
        self.destination = destination
        self.path = path
        self.interface = interface
        self.timeout = timeout
    }

    /// The same object seen through another of its interfaces.
    package func with(interface: InterfaceName) -> Proxy {
        Proxy(connection: connection, destination: destination, path: path, interface: interface, timeout: timeout)
    }

    /// A method call message for `member` with `arguments`, not yet sent.
    package func makeCall(_ member: MemberName, arguments: [DBusValue] = []) throws(DBusError) -> Message {
        let message = Message.methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(contentsOf: arguments)
        return message
    }

    /// Calls `member` and blocks for the reply; an error reply is thrown.
    @discardableResult
    package func call(_ member: MemberName, _ arguments: DBusValue...) throws(DBusError) -> Message {
        try call(member, arguments: arguments)
    }

    /// Calls `member` and blocks for the reply; an error reply is thrown.
    @discardableResult
    package func call(_ member: MemberName, arguments: [DBusValue]) throws(DBusError) -> Message {
        try connection.call(makeCall(member, arguments: arguments), timeout: timeout)
    }

    /// Calls `member` with typed arguments and blocks for the reply.
    @discardableResult
    package func call<each A: DBusRepresentable>(_ member: MemberName, typed arguments: repeat each A) throws(DBusError) -> Message {
        let message = Message.methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(typed: repeat each arguments)
        return try connection.call(message, timeout: timeout)
    }

    /// Calls `member` and reads its single return value as `R`.
    package func call<R: DBusRepresentable>(
        _ member: MemberName, _ arguments: DBusValue..., returning type: R.Type
    ) throws(DBusError) -> R {
        var reply = try call(member, arguments: arguments).arguments()
        return try reply.next(R.self)
    }

    /// Calls `member` and delivers the reply on the loop thread. Attached
    /// connections only.
    package func call(
        _ member: MemberName, arguments: [DBusValue] = [],
        onReply: @escaping @Sendable (Result<Message, DBusError>) -> Void
    ) {
        do {
            connection.sendWithReply(try makeCall(member, arguments: arguments), timeout: timeout, onReply: onReply)
        } catch {
            onReply(.failure(error))
        }
    }

    private var properties: Proxy { with(interface: .properties) }

    /// Reads a property (`org.freedesktop.DBus.Properties.Get`).
    package func property(_ name: MemberName) throws(DBusError) -> DBusValue {
        try properties.call("Get", .string(interface.rawValue), .string(name.rawValue), returning: DBusValue.self)
    }

    /// Reads a property as `T`; throws `InvalidArgs` when it has another type.
    package func property<T: DBusRepresentable>(_ name: MemberName, as type: T.Type) throws(DBusError) -> T {
        let value = try property(name)
        guard let typed = T(dbusValue: value) else {
            throw .invalidArgs("property \(name) has type '\(value.signature)', expected '\(T.dbusSignature)'")
        }
        return typed
    }

    /// Reads every property of the interface (`GetAll`).
    package func allProperties() throws(DBusError) -> [String: DBusValue] {
        try properties.call("GetAll", .string(interface.rawValue), returning: [String: DBusValue].self)
    }

    /// Writes a property (`Set`).
    package func setProperty(_ name: MemberName, _ value: DBusValue) throws(DBusError) {
        try properties.call("Set", .string(interface.rawValue), .string(name.rawValue), .variant(value))
    }

    /// The object's introspection XML.
    package func introspect() throws(DBusError) -> String {
        try with(interface: .introspectable).call("Introspect", returning: String.self)
    }

    /// `org.freedesktop.DBus.Peer.Ping`.
    package func ping() throws(DBusError) {
        try with(interface: .peer).call("Ping")
    }
}

extension Connection {
    /// A blocking call of the bus driver's `member` with `arguments`.
    private func busDriver(_ member: MemberName, _ arguments: DBusValue...) throws(DBusError) -> MessageReader {
        try Proxy(connection: self, destination: .bus, path: "/org/freedesktop/DBus", interface: .bus)
            .call(member, arguments: arguments).arguments()
    }

    /// True when `name` has an owner on the bus (`NameHasOwner`); blocks.
    package func nameHasOwner(_ name: BusName) throws(DBusError) -> Bool {
        var reply = try busDriver("NameHasOwner", .string(name.rawValue))
        return try reply.next(Bool.self)
    }

    /// Gives `name` back (`ReleaseName`); blocks. True when it was released.
    @discardableResult
    package func releaseName(_ name: BusName) throws(DBusError) -> Bool {
        var reply = try busDriver("ReleaseName", .string(name.rawValue))
        return try reply.next(UInt32.self) == 1
    }
}

/// The answer to `RequestName`.
package enum RequestNameReply: UInt32, Sendable {
    /// The connection now owns the name.
    case primaryOwner = 1
    /// Someone else owns it; the connection waits in the queue.
    case inQueue = 2
    /// Someone else owns it and `doNotQueue` was given.
    case exists = 3
    /// The connection already owned it.
    case alreadyOwner = 4
}

/// Flags for `RequestName`.
package struct RequestNameFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Another connection may take the name with `replaceExisting`.
    package static let allowReplacement = RequestNameFlags(rawValue: 1)
    /// Take the name from an owner that allowed replacement.
    package static let replaceExisting = RequestNameFlags(rawValue: 2)
    /// Fail (``RequestNameReply/exists``) instead of queueing.
    package static let doNotQueue = RequestNameFlags(rawValue: 4)
}

/// A change of a name's owner, from the bus driver's `NameOwnerChanged`.
package struct NameOwnerChange: Sendable, Hashable {
    /// The name whose owner changed.
    package let name: BusName
    /// The previous owner's unique name; nil when the name was free.
    package let oldOwner: BusName?
    /// The new owner's unique name; nil when the name is now free.
    package let newOwner: BusName?

    /// True when a unique name disappeared: that client disconnected.
    package var isClientGone: Bool {
        name.isUnique && newOwner == nil
    }

    init?(_ message: Message) {
        var reader = message.arguments()
        guard let name = try? reader.next(String.self), let old = try? reader.next(String.self),
              let new = try? reader.next(String.self), let busName = BusName(rawValue: name) else { return nil }
        self.name = busName
        oldOwner = old.isEmpty ? nil : BusName(rawValue: old)
        newOwner = new.isEmpty ? nil : BusName(rawValue: new)
    }
}

/// A signal subscription from ``Connection/subscribe(_:_:)``. The handler
/// stays registered until ``cancel()``.
package final class SignalSubscription: @unchecked Sendable {
    private weak var connection: Connection?
    private let id: UInt64

    init(connection: Connection, id: UInt64) {
        self.connection = connection
        self.id = id
    }

    /// Removes the handler and the bus match rule. Safe from any thread: off
    /// the loop of an attached connection it hops onto it.
    package func cancel() {
        guard let connection else { return }
        if let loop = connection.loop, !loop.inEventLoop {
            let id = self.id
            loop.execute { [weak connection] in connection.map { Self.cancel(id, on: $0) } }
        } else {
            Self.cancel(id, on: connection)
        }
    }

    private static func cancel(_ id: UInt64, on connection: Connection) {
        guard let rule = connection.core.removeSubscription(id) else { return }
        connection.sendBusCallIgnoringReply("RemoveMatch", rule.description)
    }
}

extension Connection {
    private func busCall(_ member: MemberName) -> Message {
        Message.methodCall(destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: member)
    }

    /// Sends a bus driver call with one string argument; in server mode an
    /// error reply is logged (not the connection's end), in client mode no
    /// reply is requested.
    func sendBusCallIgnoringReply(_ member: MemberName, _ argument: String) {
        let message = busCall(member)
        do {
            try message.append(.string(argument))
        } catch {
            logger.log(.error, "cannot build \(member) call: \(error.message)")
            return
        }
        if loop != nil {
            let logger = self.logger
            sendWithReply(message) { result in
                // A connection that ended has no match rules left at the bus:
                // a call of this kind lost with it (a stop that cancels its
                // watches, then closes) did what it was for.
                if case .failure(let error) = result, error.name != .disconnected {
                    logger.log(.warning, "\(member) failed: \(error)")
                }
            }
        } else {
            message.noReplyExpected = true
            send(message)
        }
    }

    /// Asks the bus for `name` (`RequestName`); blocks for the answer.
    package func requestName(_ name: BusName, flags: RequestNameFlags = [.doNotQueue]) throws(DBusError) -> RequestNameReply {
        let message = busCall("RequestName")
        try message.append(.string(name.rawValue), .uint32(flags.rawValue))
        var reply = try call(message).arguments()
        let code = try reply.next(UInt32.self)
        guard let answer = RequestNameReply(rawValue: code) else { throw .failed("unknown RequestName reply \(code)") }
        return answer
    }

    /// Adds a match rule at the bus (`AddMatch`) and waits for it to take effect.
    package func addMatch(_ rule: MatchRule) throws(DBusError) {
        let message = busCall("AddMatch")
        try message.append(.string(rule.description))
        _ = try call(message)
    }

    /// Calls `handler` for every received signal matching `rule`, and adds the
    /// rule at the bus without waiting (calls made after this one are ordered
    /// after it by the bus). On the loop thread when attached; in client mode
    /// handlers run inside ``nextSignal(matching:timeout:)``.
    package func subscribe(_ rule: MatchRule, _ handler: @escaping @Sendable (Message) -> Void) -> SignalSubscription {
        let id = core.addSubscription(rule, handler)
        sendBusCallIgnoringReply("AddMatch", rule.description)
        return SignalSubscription(connection: self, id: id)
    }

    /// Calls `handler` for every `NameOwnerChanged` from the bus driver, for
    /// example to forget what was cached about a client that disconnected
    /// (``NameOwnerChange/isClientGone``).
    package func onNameOwnerChanged(_ handler: @escaping @Sendable (NameOwnerChange) -> Void) -> SignalSubscription {
        subscribe(.nameOwnerChanged()) { message in
            if let change = NameOwnerChange(message) { handler(change) }
        }
    }

    /// The uid of the process that owns `name` (`GetConnectionUnixUser`); blocks.
    package func unixUser(of name: BusName, timeout: Duration = .seconds(25)) throws(DBusError) -> UInt32 {
        let message = busCall("GetConnectionUnixUser")
        try message.append(.string(name.rawValue))
        var reply = try call(message, timeout: timeout).arguments()
        return try reply.next(UInt32.self)
    }

    /// The uid of the process that owns `name`, delivered on the loop thread
    /// (`GetConnectionUnixUser` without blocking). Attached connections only.
    package func unixUser(
        of name: BusName, timeout: Duration = .seconds(25),
        completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void
    ) {
        let message = busCall("GetConnectionUnixUser")
        do {
            try message.append(.string(name.rawValue))
        } catch {
            completion(.failure(error))
            return
        }
        sendWithReply(message, timeout: timeout) { result in
            completion(result.flatMap { (reply) -> Result<UInt32, DBusError> in
                var reader = reply.arguments()
                return Result { () throws(DBusError) -> UInt32 in try reader.next(UInt32.self) }
            })
        }
    }
}

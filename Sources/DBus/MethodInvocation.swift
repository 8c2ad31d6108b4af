import Synchronization

/// One received method call, to be completed exactly once with ``reply(_:)``
/// (or a variant) or ``fail(_:)``.
///
/// Completion may happen inside the handler or later (a deferred reply, such
/// as `Submit` answering when its action ends), from any thread. An
/// invocation released without completion answers the caller with
/// `org.freedesktop.DBus.Error.Failed` and logs it: a caller is never left
/// waiting. A second completion is ignored and logged.
package final class MethodInvocation: @unchecked Sendable {
    /// The call as received.
    package let message: Message
    /// The object path called.
    package let path: ObjectPath
    /// The interface of the member that is running (also when the caller
    /// left the interface out).
    package let interface: InterfaceName
    /// The method called.
    package let member: MemberName
    /// The signature the reply must have.
    package let replySignature: Signature

    private let core: ConnectionCore
    private let completed = Atomic<Bool>(false)

    init(message: Message, path: ObjectPath, interface: InterfaceName, member: MemberName, replySignature: Signature,
         core: ConnectionCore) {
        self.message = message
        self.path = path
        self.interface = interface
        self.member = member
        self.replySignature = replySignature
        self.core = core
    }

    deinit {
        // A caller that wants no reply is not left waiting by a dropped call.
        guard !completed.load(ordering: .acquiring), !message.noReplyExpected else { return }
        core.logger.log(.error, "\(interface).\(member) on \(path) was dropped without a reply")
        core.sendError(.failed("The service dropped the call to \(member) without replying."), to: message)
    }

    /// The caller's unique bus name, for authorization.
    package var sender: BusName? { message.sender }

    /// True once replied to or failed.
    package var isCompleted: Bool { completed.load(ordering: .acquiring) }

    /// A reader over the call's arguments (already checked against the
    /// method's input signature).
    package func arguments() -> MessageReader {
        message.arguments()
    }

    private func claim(_ what: String) -> Bool {
        if completed.exchange(true, ordering: .acquiringAndReleasing) {
            core.logger.log(.warning, "\(interface).\(member) on \(path): \(what) after the call was already completed")
            return false
        }
        return true
    }

    /// Replies with `values`, each written as its own type.
    package func reply(_ values: DBusValue...) {
        reply(values: values)
    }

    /// Replies with `values`, each written as its own type (in wire format,
    /// ``WireEncoder``, unless one is a file descriptor).
    package func reply(values: [DBusValue]) {
        if values.contains(where: \.containsUnixFD) {
            return reply { (writer) throws(DBusError) in try writer.appendValues(values) }
        }
        var text = ""
        for value in values { value.appendSignature(to: &text) }
        reply(signature: Signature(trusted: text)) { (body) throws(DBusError) in
            for value in values { try body.value(value) }
        }
    }

    /// Replies with typed values: `call.reply(typed: errors)` for `a{ss}`.
    package func reply<each T: DBusRepresentable>(typed values: repeat each T) {
        reply { (writer) throws(DBusError) in
            for value in repeat each values { try writer.append(value) }
        }
    }

    /// Replies with whatever `build` appends. When it throws, or the reply
    /// does not have the method's declared output signature, the caller gets
    /// `org.freedesktop.DBus.Error.Failed` instead and the mistake is logged.
    package func reply(_ build: (inout MessageWriter) throws(DBusError) -> Void) {
        guard claim("reply") else { return }
        guard !message.noReplyExpected else { return }
        let reply = message.makeReturn()
        var writer = reply.appender()
        do throws(DBusError) {
            try build(&writer)
        } catch {
            core.logger.log(.error, "\(interface).\(member) on \(path): cannot build the reply: \(error.message)")
            core.sendError(.failed("The service could not encode its reply to \(member)."), to: message)
            return
        }
        guard reply.hasSignature(replySignature) else {
            core.logger.log(
                .error, "\(interface).\(member) on \(path): reply has type '\(reply.signature)', declared '\(replySignature)'")
            core.sendError(.failed("The service sent an invalid reply to \(member)."), to: message)
            return
        }
        core.send(reply)
    }

    /// Replies with arguments written straight into wire format by `build`
    /// (``WireEncoder``): for the replies sent most often. `signature` must
    /// be the method's declared output signature; otherwise, or when `build`
    /// throws or libdbus refuses the bytes, the caller gets
    /// `org.freedesktop.DBus.Error.Failed` and the mistake is logged.
    package func reply(signature: Signature, _ build: (inout WireEncoder) throws(DBusError) -> Void) {
        guard claim("reply") else { return }
        guard !message.noReplyExpected else { return }
        guard signature == replySignature else {
            core.logger.log(.error, "\(interface).\(member) on \(path): reply has type '\(signature)', declared '\(replySignature)'")
            core.sendError(.failed("The service sent an invalid reply to \(member)."), to: message)
            return
        }
        var body = WireEncoder()
        let reply: WireMessage
        do throws(DBusError) {
            try build(&body)
            reply = try WireMessage.methodReturn(to: message, signature: signature, body: body).checkedInDebugBuilds()
        } catch {
            core.logger.log(.error, "\(interface).\(member) on \(path): cannot build the reply: \(error.message)")
            core.sendError(.failed("The service could not encode its reply to \(member)."), to: message)
            return
        }
        core.send(reply)
    }

    /// Completes the call with an error. A ``DBusErrorConvertible`` goes back
    /// as its name and message; any other error as
    /// `org.freedesktop.DBus.Error.Failed` with a generic message, its details
    /// only logged.
    package func fail(_ error: any Error) {
        guard claim("fail") else { return }
        let dbusError: DBusError
        if let convertible = error as? any DBusErrorConvertible {
            dbusError = convertible.dbusError
        } else {
            core.logger.log(.error, "\(interface).\(member) on \(path) failed: \(String(describing: error))")
            dbusError = .failed("The service failed to handle \(member).")
        }
        guard !message.noReplyExpected else { return }
        core.sendError(dbusError, to: message)
    }
}

extension ConnectionCore {
    /// Sends `error` as the reply to `call`, in wire format; an error whose
    /// message cannot be (it holds a NUL) goes through libdbus, which cuts
    /// the message there.
    func sendError(_ error: DBusError, to call: Message) {
        do {
            send(try WireMessage.error(error, to: call))
        } catch {
            send(call.makeError(error))
        }
    }
}

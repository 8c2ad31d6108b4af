import Reactor

/// How a connection flowd reads itself (``BusLink``) takes in messages
/// (docs/performance.md, R4): a read watch on the socket fills the framer,
/// and the dispatch round routes each whole message as libdbus' dispatch
/// did: `org.freedesktop.DBus.Peer` calls answered as libdbus answers them,
/// other method calls to the ``MethodCallHandler`` (and libdbus' unknown
/// method error when nothing takes them), signals to the subscriptions,
/// replies to the ``ReplyTable``. The ``OutgoingQueue`` rules hold: after
/// each message the bytes it queued are written, and while some wait for
/// the socket nothing is dispatched. Loop thread only (or the one thread of
/// a connection without a loop).
extension ConnectionCore {
    func attach(_ link: BusLink, to loop: any EventLoopProtocol) throws(DBusError) {
        outgoing.socket = link.socket.rawValue
        do {
            readWatch = try loop.watch(fd: link.socket.rawValue, events: .read) { [weak self] _ in
                self?.readReady()
            }
        } catch {
            outgoing.socket = nil
            throw .failed("the event loop refused the connection's socket: \(error.message)")
        }
        // What the bus sent after Hello (NameAcquired) may wait already.
        scheduleDispatchIfNeeded()
    }

    /// The socket has bytes (or its end): read them, and dispatch them
    /// here, in the watch's callback: a dispatch round queued as a loop job
    /// of its own (a closure, the loop's queue) cost 1.1 k instructions per
    /// read (docs/performance.md, H3). A round already queued (the rest of
    /// a busy connection's messages, or one resumed after a write) takes
    /// them instead, in order, after the other connections' work.
    private func readReady() {
        guard let link, !closed else { return }
        if !link.readAvailable() { readWatch?.cancel(); readWatch = nil }
        if link.bufferedBytes >= Self.readPauseBytes, !readPaused, let readWatch {
            // The dispatch resumes reading once it has taken what waits.
            readPaused = true
            try? readWatch.disable()
        }
        guard link.mayHaveMessages || link.ended != nil, !dispatchIsScheduled else { return }
        dispatchReceived(link)
    }

    /// Reading waits no longer (the dispatch took what was buffered, or
    /// needs more bytes to complete a message).
    func resumeReading() {
        guard readPaused, let link, link.bufferedBytes < Self.readPauseBytes || !link.mayHaveMessages else { return }
        readPaused = false
        try? readWatch?.enable()
    }

    /// One dispatch round of a connection flowd reads itself: up to 64
    /// messages, then it yields to other loop work and continues in a new job.
    func dispatchReceived(_ link: BusLink) {
        for _ in 0..<64 {
            guard outgoing.isEmpty else {
                outgoing.dispatchHeld = true
                return
            }
            guard let incoming = link.nextMessage() else {
                if link.ended != nil {
                    readWatch?.cancel()
                    readWatch = nil
                    noteDisconnected()
                } else if readPaused && !link.mayHaveMessages {
                    // Everything buffered was taken: read again. (Unless
                    // reading paused, the watch is enabled already, and
                    // enabling it again cost the loop's tables 1.5 k a round.)
                    readPaused = false
                    try? readWatch?.enable()
                }
                return
            }
            outgoing.dispatching = true
            routeReceived(incoming)
            outgoing.dispatching = false
            if !outgoing.isEmpty { flushOutgoing() }
            if closed { return }
        }
        resumeReading()
        scheduleDispatch()
    }

    /// Routes one received message (see the extension's comment).
    func routeReceived(_ incoming: IncomingMessage) {
        // libdbus' Peer answers need only the header: no Message is made.
        if incoming.header.type == .methodCall, incoming.header.interface == .peer {
            return answerPeer(incoming.header)
        }
        let message: Message
        do {
            message = try BusLink.message(from: incoming)
        } catch {
            // As libdbus' reader does: a message that cannot be read ends the connection.
            logger.log(.error, "the bus sent a message that cannot be read: \(error.message)")
            _ = link?.end(.disconnected("the bus sent a message that is not valid: \(error.message)"))
            return
        }
        switch incoming.header.type {
        case .methodReturn, .error:
            _ = replies.complete(with: message)
        case .signal:
            deliver(signal: message)
        case .methodCall:
            if methodHandler?.handleMethodCall(message) == true { return }
            answerUnknownMethod(message)
        case nil:
            break  // a type the specification may add later: ignored, as libdbus does
        }
    }

    /// libdbus answers every call naming `org.freedesktop.DBus.Peer` before
    /// any handler sees it, whatever its path, and whether or not the caller
    /// wants a reply: `Ping`, `GetMachineId`, and an error for any other member.
    private func answerPeer(_ call: IncomingHeader) {
        let reply: WireMessage?
        switch call.member?.rawValue {
        case "Ping":
            reply = try? WireMessage.methodReturn(replyingTo: call, signature: .empty, body: WireEncoder(capacity: 0))
        case "GetMachineId":
            if let id = LibDBus.machineID() {
                var body = WireEncoder(capacity: id.utf8.count + 5)
                body.string(id)
                reply = try? WireMessage.methodReturn(replyingTo: call, signature: .string, body: body)
            } else {
                reply = try? WireMessage.error(.failed("The machine id is not available."), replyingTo: call)
            }
        default:
            reply = try? WireMessage.error(.unknownMethod("Unknown method invoked on org.freedesktop.DBus.Peer interface"), replyingTo: call)
        }
        if let reply { send(reply) }
    }

    /// libdbus' reply to a call nothing handled.
    private func answerUnknownMethod(_ message: Message) {
        let text = "Method \"\(message.member?.rawValue ?? "(null)")\" with signature \"\(message.signature.rawValue)\" "
            + "on interface \"\(message.interface?.rawValue ?? "(null)")\" doesn't exist\n"
        // Like libdbus, whether or not the caller flagged the call no-reply-expected.
        if let reply = try? WireMessage.error(.unknownMethod(text), to: message) { send(reply) }
    }
}

extension WireMessage {
    /// A method return for the call whose header is `call`, for answers
    /// made without a ``Message``.
    static func methodReturn(replyingTo call: IncomingHeader, signature: Signature, body: WireEncoder) throws(DBusError) -> WireMessage {
        try methodReturn(replyingTo: call.serial, destination: call.sender, signature: signature, body: body)
    }

    /// An error reply to the call whose header is `call`.
    static func error(_ error: DBusError, replyingTo call: IncomingHeader) throws(DBusError) -> WireMessage {
        try self.error(error, replyingTo: call.serial, destination: call.sender)
    }
}

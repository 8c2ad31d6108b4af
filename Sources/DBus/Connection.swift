import Logging
import Reactor

/// A private connection to a message bus (`DBusConnection*`).
///
/// Two ways to use it:
/// - **Server mode**: ``attach(to:)`` a Reactor loop. libdbus is then driven by
///   watch and timeout functions and dispatched from the loop (no polling);
///   method calls reach an ``ObjectServer``, signals reach ``subscribe(_:_:)``
///   handlers, replies to ``sendWithReply(_:timeout:onReply:)`` arrive on the
///   loop. Use the connection on the loop thread; ``send(_:)`` alone may be
///   called from any thread (it hops to the loop).
/// - **Client mode** (tests, tools): no loop; ``call(_:timeout:)``
///   blocks for the reply and ``nextSignal(matching:timeout:)`` waits for
///   signals. Use it from one thread at a time.
///
/// ``close()`` is idempotent; deinit closes (private connections must be
/// closed before their last reference goes) and releases the connection.
package final class Connection: @unchecked Sendable {
    /// Which bus to connect to.
    package enum Bus: Sendable, Hashable {
        /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default socket).
        case system
        /// The session bus (`DBUS_SESSION_BUS_ADDRESS`).
        case session
        /// A bus at this address (`unix:path=…`).
        case address(String)
    }

    let core: ConnectionCore

    /// The unique name the bus gave this connection (nil when not registered).
    package let uniqueName: BusName?

    /// Connects and registers with the bus.
    ///
    /// A bus at a `unix:path=` or `unix:abstract=` address (the system bus's
    /// default socket among them) flowd connects to, authenticates with and
    /// reads itself (``BusLink``); libdbus only builds and marshals messages
    /// there. Any other address is libdbus' (`dbus_bus_get_private`, or
    /// `dbus_connection_open_private` + `dbus_bus_register`), and so is a
    /// peer-to-peer connection: `register: false` skips the `Hello` for a
    /// peer-to-peer address; the system and session buses always register.
    /// `libdbusReads: true` keeps libdbus reading a bus connection (for
    /// tests comparing the two). The connection never calls `_exit` on
    /// disconnection: register ``onDisconnect(_:)`` to learn about it.
    package init(
        _ bus: Bus, register: Bool = true, libdbusReads: Bool = false, logger: Logger = .standardError(identifier: "dbus")
    ) throws(DBusError) {
        let address: String?
        switch bus {
        case .system: address = BusAddress.of(system: true)
        case .session: address = BusAddress.of(system: false)
        case .address(let given): address = register ? given : nil
        }
        if !libdbusReads, let address, let sockets = BusAddress.unixSockets(address) {
            let link = try BusLink.open(sockets)
            core = ConnectionCore(link: link, logger: logger)
            uniqueName = link.uniqueName
            return
        }
        let opened: (OpaquePointer?, DBusError?)
        switch bus {
        case .system: opened = LibDBus.busGetPrivate(system: true)
        case .session: opened = LibDBus.busGetPrivate(system: false)
        case .address(let address): opened = LibDBus.openPrivate(address: address)
        }
        guard let raw = opened.0 else {
            throw opened.1 ?? .failed("cannot connect to the bus")
        }
        LibDBus.setExitOnDisconnect(raw, false)
        if case .address = bus, register, let error = LibDBus.busRegister(raw) {
            LibDBus.close(raw)
            LibDBus.unref(connection: raw)
            throw error
        }
        core = ConnectionCore(raw: raw, logger: logger)
        LibDBus.addFilter(raw, messageFilterFunction, data: core.retainedForLibDBus(), free: releaseDataFunction)
        uniqueName = LibDBus.uniqueName(raw).map { BusName(trusted: $0) }
    }

    deinit {
        let core = self.core
        if let loop = core.loop, !loop.inEventLoop, (loop as? EventLoop)?.isRunning == true {
            // libdbus calls the watch functions while closing: do it on the loop.
            loop.execute {
                Connection.close(core)
                if let raw = core.raw { LibDBus.unref(connection: raw) }
            }
        } else {
            Connection.close(core)
            if let raw = core.raw { LibDBus.unref(connection: raw) }
        }
    }

    /// The logger for what cannot be returned to a caller.
    package var logger: Logger { core.logger }

    /// True until the connection is closed or the bus goes away (`dbus_connection_get_is_connected`).
    package var isConnected: Bool {
        guard !core.closed else { return false }
        if let link = core.link { return link.ended == nil }
        return core.raw.map(LibDBus.isConnected) ?? false
    }

    /// Closes the connection (`dbus_connection_close`). Safe to call more than
    /// once. When attached, call it on the loop thread.
    package func close() {
        Connection.close(core)
    }

    private static func close(_ core: ConnectionCore) {
        guard core.markClosed() else { return }
        // What the socket takes now still goes; the rest is dropped.
        core.flushOutgoing()
        core.dropOutgoing()
        if let raw = core.raw { LibDBus.close(raw) }
        if core.loop != nil {
            // Deliver what closing queued (Disconnected, errors for pending
            // calls) before the loop lets go of the connection.
            core.drainAfterClose()
            core.detachFromLoop()
        }
        core.link?.close()
    }

    /// Calls `handler` once when the connection to the bus is lost (the bus
    /// went away, or ``close()``). On the loop thread when attached.
    package func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        core.addDisconnectHandler(handler)
    }

    // MARK: server mode

    /// Drives the connection from `loop` through libdbus' watch, timeout,
    /// wake-up and dispatch-status functions. Call it on the loop thread or
    /// before the loop runs, once.
    package func attach(to loop: any EventLoopProtocol) throws(DBusError) {
        guard core.loop == nil else { throw .failed("the connection is already attached to a loop") }
        guard !core.closed else { throw .disconnected("the connection is closed") }
        try core.attach(to: loop)
    }

    /// The loop the connection is attached to.
    package var loop: (any EventLoopProtocol)? { core.loop }

    /// Sends `reply` to `call` unless the caller asked for no reply.
    func replyIfWanted(to call: Message, with reply: Message) {
        if !call.noReplyExpected { send(reply) }
    }

    /// Sends an empty method return to `call` unless the caller asked for no reply.
    func returnIfWanted(to call: Message) {
        guard !call.noReplyExpected else { return }
        do {
            send(try WireMessage.methodReturn(to: call, signature: .empty, body: WireEncoder(capacity: 0)))
        } catch {
            send(call.makeReturn())
        }
    }

    /// Sends an error reply to `call` unless the caller asked for no reply.
    func replyIfWanted(to call: Message, error: DBusError) {
        if !call.noReplyExpected { core.sendError(error, to: call) }
    }

    /// Traps unless called where loop state may be touched: the loop thread,
    /// or anywhere while the loop is not running (set-up) or not attached.
    func requireLoopThread(_ function: StaticString = #function) {
        guard let loop = core.loop else { return }
        precondition(loop.inEventLoop || (loop as? EventLoop)?.isRunning == false,
                     "\(function) must be called on the connection's loop thread")
    }

    /// Queues `message` for sending (`dbus_connection_send`). Safe from any
    /// thread; messages sent from one thread keep their order. Dropped once
    /// the connection is closed.
    package func send(_ message: Message) {
        core.send(message)
    }

    /// Sends a message built in wire format: on the loop thread of an
    /// attached connection written to the socket by flowd itself, after
    /// whatever was sent before it (``OutgoingQueue``), otherwise loaded and
    /// sent by libdbus. Safe from any thread, like ``send(_:)-(Message)``.
    package func send(_ message: WireMessage) {
        core.send(message)
    }

    /// How many `send(2)` calls flowd's own send path made on this
    /// connection, and how often the socket took less than it was offered
    /// (for tests and the bench). Loop thread.
    package var ownSendCounts: (sends: Int, socketFull: Int) {
        requireLoopThread()
        return (core.outgoing.sendCalls, core.outgoing.socketFull)
    }

    /// Sends a call and delivers its reply (or a `NoReply` error after
    /// `timeout`, or the error reply as a ``DBusError``) to `onReply` on the
    /// loop thread (`dbus_connection_send_with_reply` + a pending-call notify).
    /// Attached connections only; safe from any thread. The returned handle
    /// can cancel the call, after which `onReply` is not called.
    @discardableResult
    package func sendWithReply(
        _ message: Message, timeout: Duration = .seconds(25),
        onReply: @escaping @Sendable (Result<Message, DBusError>) -> Void
    ) -> PendingReply {
        guard let loop = core.loop else {
            preconditionFailure("sendWithReply(_:timeout:onReply:) needs a connection attached to a loop")
        }
        let handle = PendingReply(loop: loop)
        if loop.inEventLoop {
            send(message, timeout: timeout, handle: handle, onReply: onReply)
        } else {
            loop.execute { [self] in send(message, timeout: timeout, handle: handle, onReply: onReply) }
        }
        return handle
    }

    /// The loop-thread half of ``sendWithReply(_:timeout:onReply:)``.
    private func send(
        _ message: Message, timeout: Duration, handle: PendingReply,
        onReply: @escaping @Sendable (Result<Message, DBusError>) -> Void
    ) {
        if let link = core.link { return send(message, on: link, timeout: timeout, handle: handle, onReply: onReply) }
        guard let raw = core.raw else { return }
        // After the own bytes queued before it, so the order holds.
        guard core.outgoing.isEmpty else {
            core.afterOwnBytes { [self] in send(message, timeout: timeout, handle: handle, onReply: onReply) }
            return
        }
        guard !handle.cancelled, let loop = core.loop else { return }
        guard !core.closed, let pending = LibDBus.sendWithReply(raw, message.raw, timeout: timeout.libdbusMilliseconds) else {
            loop.execute { onReply(.failure(.disconnected("not connected to the bus"))) }
            return
        }
        let call = PendingCall(pending: pending, loop: loop, core: core, onReply: onReply)
        handle.call = call
        core.track(call)
        LibDBus.setNotify(pending, pendingNotifyFunction, data: Unmanaged.passRetained(call).toOpaque(), free: releaseDataFunction)
        // A reply that completed the call before the notify was set would
        // never be announced: deliver it now.
        if LibDBus.pendingCompleted(pending) { call.complete() }
    }

    /// ``sendWithReply(_:timeout:onReply:)`` on a connection flowd reads
    /// itself: the call goes into the own queue, its serial into the
    /// ``ReplyTable``.
    private func send(
        _ message: Message, on link: BusLink, timeout: Duration, handle: PendingReply,
        onReply: @escaping @Sendable (Result<Message, DBusError>) -> Void
    ) {
        guard !handle.cancelled, let loop = core.loop else { return }
        guard !core.closed, link.ended == nil else {
            loop.execute { onReply(.failure(.disconnected("not connected to the bus"))) }
            return
        }
        let (bytes, fds) = link.marshal(message)
        handle.serial = (message.serial, core)
        core.replies.add(serial: message.serial, timeout: timeout, loop: loop, handler: onReply)
        core.enqueue(bytes, fds: fds)
    }

    /// Sends a call and waits, without blocking a thread, for its reply.
    /// Attached connections only.
    package func reply(to message: Message, timeout: Duration = .seconds(25)) async throws(DBusError) -> Message {
        let result = await withCheckedContinuation { continuation in
            sendWithReply(message, timeout: timeout) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    // MARK: client mode

    /// Sends a call and blocks until its reply (`dbus_connection_send_with_reply_and_block`).
    /// An error reply is thrown as its ``DBusError``; no reply within
    /// `timeout` throws `org.freedesktop.DBus.Error.NoReply`.
    ///
    /// Meant for client mode. On an attached connection it must run on the
    /// loop thread and stalls the loop meanwhile (fine at start-up).
    package func call(_ message: Message, timeout: Duration = .seconds(25)) throws(DBusError) -> Message {
        requireLoopThread()
        guard !core.closed else { throw .disconnected("the connection is closed") }
        core.writeOutgoingBlocking()
        if let link = core.link {
            // Messages read while waiting stay, in order, for the dispatch.
            defer { core.scheduleDispatchIfNeeded() }
            if let ended = link.ended { throw ended }
            let deadline = ContinuousClock.now.advanced(by: timeout)
            let (bytes, fds) = link.marshal(message)
            try link.writeBlocking(bytes, fds: fds, deadline: deadline)
            let reply = try link.awaitReply(to: message.serial, deadline: deadline)
            if let error = reply.error { throw error }
            return reply
        }
        guard let raw = core.raw else { throw .disconnected("the connection is closed") }
        let (reply, error) = LibDBus.sendWithReplyAndBlock(raw, message.raw, timeout: timeout.libdbusMilliseconds)
        if let error { throw error }
        guard let reply else { throw .failed("no reply and no error from libdbus") }
        return Message(adopting: reply)
    }

    /// Waits up to `timeout` for a signal matching `rule` (any signal when nil)
    /// and returns it; nil on timeout. Reads and dispatches meanwhile
    /// (`dbus_connection_read_write_dispatch`), so `Peer` calls to this client
    /// are answered. Subscribe first with ``addMatch(_:)``. Client mode only.
    package func nextSignal(matching rule: MatchRule? = nil, timeout: Duration) throws(DBusError) -> Message? {
        precondition(core.loop == nil, "nextSignal(matching:timeout:) is for connections not attached to a loop")
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let index = core.signalQueue.firstIndex(where: { rule?.matches($0) ?? true }) {
                return core.signalQueue.remove(at: index)
            }
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return nil }
            if let link = core.link {
                guard !core.closed else { throw .disconnected("the connection to the bus was lost") }
                if let incoming = link.nextMessage() {
                    core.routeReceived(incoming)
                    continue
                }
                if link.ended != nil { throw .disconnected("the connection to the bus was lost") }
                link.waitReadable(timeout: remaining)
                link.readAvailable()
                continue
            }
            guard !core.closed, let raw = core.raw, LibDBus.readWriteDispatch(raw, timeout: max(remaining.libdbusMilliseconds, 1)) else {
                throw .disconnected("the connection to the bus was lost")
            }
        }
    }

    /// Blocks until every queued message is written (`dbus_connection_flush`).
    package func flush() {
        guard !core.closed else { return }
        if core.loop?.inEventLoop ?? true { core.writeOutgoingBlocking() }
        if let raw = core.raw { LibDBus.flush(raw) }
    }
}

/// A call sent with ``Connection/sendWithReply(_:timeout:onReply:)``, to
/// cancel it. Its state is confined to the connection's loop thread.
package final class PendingReply: @unchecked Sendable {
    private let loop: any EventLoopProtocol
    fileprivate var call: PendingCall?
    /// The call's serial and connection, when flowd reads the connection itself.
    fileprivate var serial: (UInt32, ConnectionCore)?
    fileprivate var cancelled = false

    fileprivate init(loop: any EventLoopProtocol) {
        self.loop = loop
    }

    /// Stops waiting (`dbus_pending_call_cancel`): the reply handler is not
    /// called, and a reply that arrives later is dropped. The call may still
    /// have reached the peer. Safe from any thread; does nothing once the
    /// reply was delivered.
    package func cancel() {
        if loop.inEventLoop {
            cancelNow()
        } else {
            loop.execute { [self] in cancelNow() }
        }
    }

    private func cancelNow() {
        cancelled = true
        call?.cancel()
        call = nil
        if let (number, core) = serial { core.replies.remove(number) }
        serial = nil
    }
}

/// One call awaiting its reply; owned by libdbus as the notify's data.
final class PendingCall: @unchecked Sendable {
    private let pending: UncheckedPointer
    private let loop: any EventLoopProtocol
    private weak var core: ConnectionCore?
    private var onReply: (@Sendable (Result<Message, DBusError>) -> Void)?

    init(
        pending: OpaquePointer, loop: any EventLoopProtocol, core: ConnectionCore,
        onReply: @escaping @Sendable (Result<Message, DBusError>) -> Void
    ) {
        self.pending = UncheckedPointer(raw: pending)
        self.loop = loop
        self.core = core
        self.onReply = onReply
    }

    /// The connection went away first: cancel the call
    /// (`dbus_pending_call_cancel`) and answer `Disconnected`.
    func abandon() {
        guard let onReply else { return }
        self.onReply = nil
        LibDBus.cancel(pending: pending.raw)
        LibDBus.unref(pending: pending.raw)
        onReply(.failure(.disconnected("the connection was lost before the reply arrived")))
    }

    /// The caller stopped waiting: cancel the call without answering.
    func cancel() {
        guard onReply != nil else { return }
        onReply = nil
        core?.untrack(self)
        LibDBus.cancel(pending: pending.raw)
        LibDBus.unref(pending: pending.raw)
    }

    /// libdbus released the call without completing it (the connection was
    /// torn down): the caller still gets an answer, on the loop.
    deinit {
        guard let onReply else { return }
        loop.execute { onReply(.failure(.disconnected("the connection was closed before the reply arrived"))) }
    }

    /// Takes the reply (`dbus_pending_call_steal_reply`), drops our reference
    /// to the pending call and calls `onReply` once.
    func complete() {
        guard let onReply else { return }
        self.onReply = nil
        core?.untrack(self)
        let reply = LibDBus.stealReply(pending.raw)
        LibDBus.unref(pending: pending.raw)
        guard let reply else {
            onReply(.failure(.disconnected("the call ended without a reply")))
            return
        }
        let message = Message(adopting: reply)
        if let error = message.error {
            onReply(.failure(error))
        } else {
            onReply(.success(message))
        }
    }
}

private let pendingNotifyFunction: LibDBus.PendingCallNotifyFunction = { _, data in
    guard let data else { return }
    Unmanaged<PendingCall>.fromOpaque(data).takeUnretainedValue().complete()
}

extension Duration {
    /// Milliseconds for libdbus: at least 0, at most `Int32.max` (infinite).
    var libdbusMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        if milliseconds.overflow { return .max }
        let total = milliseconds.partialValue + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: total)
    }
}

import DBus
import FlowProtocol
import Reactor
import Synchronization

/// The typed client of flowd's D-Bus API (docs/dbus-api.md): every Manager
/// and Session method and property, the signals as ``FlowEvents``, and
/// errors as ``FlowClientError``.
///
/// **Threads.** The client is an actor whose executor is a Reactor
/// ``EventLoop``: by default one shared loop thread for every client of the
/// process (as GDBus runs its connections on one worker thread), or a loop
/// the caller gives and runs. Its methods can be awaited from any thread or
/// task, a GTK main loop's included; synchronous programs wrap a body of
/// calls in ``Blocking/run(_:)``. Code that runs many calls back to back
/// (flowd-bench) can run them on the loop itself with ``perform(_:)``.
///
/// **Connection.** The bus connection is made at the first call. When it is
/// lost, or flowd leaves the bus, event streams get
/// ``FlowEvent/serviceLost``; the client connects again (at once when a
/// call needs it, otherwise after a growing delay), resolves flowd's unique
/// name again, re-adds its match rules, calls each watched session again so
/// flowd sends it their signals, and yields ``FlowEvent/reconnected``.
/// Calls in flight when the connection goes fail with
/// ``FlowClientError/Kind/disconnected``; none is retried, since none is
/// known to be harmless to repeat.
///
/// **Timeouts.** Every call waits at most ``Configuration/callTimeout``,
/// except `Submit` and `Continue` (which may submit), which wait
/// ``Configuration/submitTimeout``; a client that allows interactive
/// authorization waits at least ``Configuration/interactiveCallTimeout``,
/// time for a person to type a password. Cancelling the task that awaits a call
/// stops the wait at once (``FlowClientError/Kind/cancelled``).
///
/// **Signals.** Only signals whose sender is flowd's current unique name
/// are believed: on the system bus another process could send a session's
/// path a signal of its own.
package actor FlowClient {
    /// Where the client connects and how long it waits.
    package struct Configuration: Sendable {
        /// The bus flowd is on.
        package var bus: Connection.Bus
        /// How long an ordinary call waits for its reply.
        package var callTimeout: Duration = .seconds(25)
        /// How long `Submit` and `Continue` wait: the longest submit action
        /// a flow may declare (`timeoutSeconds` is at most 3600), and a
        /// margin so that flowd's own `Timeout` reply arrives first.
        package var submitTimeout: Duration = .seconds(3600 + 30)
        /// The first wait before connecting again; it doubles up to ``maxReconnectDelay``.
        package var reconnectDelay: Duration = .milliseconds(50)
        /// The longest wait between attempts to connect again.
        package var maxReconnectDelay: Duration = .seconds(5)
        /// Every call to flowd carries the message flag
        /// `ALLOW_INTERACTIVE_AUTHORIZATION`: on the system bus flowd may then
        /// let polkit ask the person for a password (through an
        /// authentication agent) instead of refusing with
        /// `InteractiveAuthorizationRequired` (docs/dbus-api.md).
        package var allowsInteractiveAuthorization = false
        /// The least a call waits when it allows interactive authorization:
        /// flowd gives polkit 5 minutes while a person types a password.
        package var interactiveCallTimeout: Duration = .seconds(300 + 25)

        /// The defaults, on `bus`.
        package init(bus: Connection.Bus) {
            self.bus = bus
        }
    }

    /// Where the client connects and how long it waits.
    package nonisolated let configuration: Configuration
    /// The loop the client runs on.
    package nonisolated let loop: EventLoop
    /// The loop as a task executor: a task that prefers it resumes from
    /// every call on the loop thread, with no hop through another thread.
    nonisolated let taskExecutor: LoopTaskExecutor

    package nonisolated var unownedExecutor: UnownedSerialExecutor {
        loop.executor.asUnownedSerialExecutor()
    }

    /// The connection and what was subscribed on it; used on the client's
    /// loop only.
    private final class Link: @unchecked Sendable {
        let connection: Connection
        var nameWatch: SignalSubscription?
        var signalWatch: SignalSubscription?

        init(_ connection: Connection) {
            self.connection = connection
        }
    }

    /// A stream of ``events(for:)``, dropped once nobody holds it.
    private struct Subscriber {
        weak var events: FlowEvents?
        let session: String?
    }

    private var link: Link?
    /// flowd's unique name: the only sender whose signals are believed.
    private var owner: BusName?
    /// Counts `NameOwnerChanged`s: an answer to `GetNameOwner` older than the
    /// last one must not overwrite what it said (both can arrive in one
    /// dispatch, and the answer resumes its task after the signal ran).
    private var ownerGeneration: UInt64 = 0
    private var subscribers: [UInt64: Subscriber] = [:]
    private var nextSubscriber: UInt64 = 0
    /// Sessions called again after a reconnection, so flowd sends their signals here.
    var watched: Set<String> = []
    /// ``FlowEvent/serviceLost`` was announced and ``FlowEvent/reconnected`` is due.
    private var lost = false
    private var reconnectTimer: TimerHandle?
    private var nextReconnectDelay: Duration
    private var closed = false

    /// A client of flowd on `configuration.bus`, on `loop` (which the caller
    /// runs on a thread of its own) or on the process's shared client loop.
    /// Nothing is connected until the first call.
    package init(_ configuration: Configuration, loop: EventLoop? = nil) throws(FlowClientError) {
        let shared = loop == nil ? ClientLoop.taskExecutor : nil
        guard let taskExecutor = shared ?? loop.map(LoopTaskExecutor.init(loop:)) else {
            throw FlowClientError(.disconnected, "cannot start the client's event loop thread")
        }
        self.configuration = configuration
        self.loop = taskExecutor.loop
        self.taskExecutor = taskExecutor
        nextReconnectDelay = configuration.reconnectDelay
    }

    /// A client on `bus` with the default timeouts.
    package init(bus: Connection.Bus) throws(FlowClientError) {
        try self.init(Configuration(bus: bus))
    }

    /// Closes the connection and ends every event stream. Later calls fail
    /// with ``FlowClientError/Kind/disconnected``.
    package func close() {
        closed = true
        reconnectTimer?.cancel()
        reconnectTimer = nil
        dropLink()?.close()
        for subscriber in subscribers.values { subscriber.events?.finish() }
        subscribers = [:]
    }

    /// Runs `body` isolated to the client, on its loop thread, in a task
    /// that prefers the loop as its executor: a call made inside resumes on
    /// the loop thread when its reply arrives, with no thread hop.
    package func perform<T: Sendable, E: Error>(
        _ body: @Sendable (isolated FlowClient) async throws(E) -> T
    ) async throws(E) -> T {
        try await withTaskExecutorPreference(taskExecutor) { () async throws(E) -> T in try await body(self) }
    }

    // MARK: - Events

    /// A stream of flowd's events from now on: every session's, or those
    /// of `session` (with the Manager's `SessionRemoved` of it, and the
    /// client's own). Watching a session calls it once (`GetStep`), since
    /// the system service sends a session's signals only to connections
    /// that called it; after a reconnection it is called again.
    package func events(for session: String? = nil) async throws(FlowClientError) -> FlowEvents {
        let link = try currentLink()
        if link.signalWatch == nil {
            subscribeSignals(link)
            // The bus handles a connection's messages in order: once this
            // answers, the match rule is in place, and flowd's name is known.
            await resolveOwner(of: link)
        }
        if let session {
            watched.insert(session)
            _ = try await call(FlowMember.Session.getStep, session: session)
        }
        nextSubscriber += 1
        let id = nextSubscriber
        let loop = self.loop
        let events = FlowEvents { [weak self] in
            guard let client = self else { return }
            loop.execute { client.assumeIsolated { $0.subscribers[id] = nil } }
        }
        subscribers[id] = Subscriber(events: events, session: session)
        return events
    }

    /// This client's own unique name on the bus (connecting if need be).
    package func uniqueName() throws(FlowClientError) -> BusName? {
        try currentLink().connection.uniqueName
    }

    /// flowd's unique name on the bus, asked again (`GetNameOwner`); nil
    /// when flowd is not running.
    package func serviceOwner() async throws(FlowClientError) -> BusName? {
        await resolveOwner(of: try currentLink())
        return owner
    }

    private func yield(_ event: FlowEvent) {
        for (id, subscriber) in subscribers {
            guard let events = subscriber.events else {
                subscribers[id] = nil
                continue
            }
            if let session = subscriber.session {
                // A session's stream: its own events and the client's, not other sessions' or the count.
                if case .sessionCount = event { continue }
                if let about = event.sessionID, about != session { continue }
            }
            events.yield(event)
        }
    }

    /// A signal from flowd (or from anyone, unicast to this connection).
    private func received(_ message: Message) {
        guard let owner, message.sender == owner, let path = message.path, let member = message.member,
              let interface = message.interface, let arguments = try? message.readArguments() else { return }
        // A signal that does not have the contract's shape is dropped:
        // there is no caller to tell.
        do throws(WireError) {
            if let event = try Self.event(path: path, interface: interface, member: member, arguments: arguments) {
                yield(event)
            }
        } catch {}
    }

    /// The event of one of flowd's signals; nil for one the contract does not name.
    static func event(
        path: ObjectPath, interface: InterfaceName, member: MemberName, arguments: [DBusValue]
    ) throws(WireError) -> FlowEvent? {
        if interface == .properties, member == "PropertiesChanged" {
            guard arguments.count >= 2, case .string(let changedInterface) = arguments[0],
                  let changed = arguments[1].vardict else { return nil }
            if path == FlowBus.managerPath, changedInterface == FlowBus.managerInterface.rawValue {
                return changed[ManagerProperty.sessionCount.rawValue]?.uint32.map(FlowEvent.sessionCount)
            }
            guard changedInterface == FlowBus.sessionInterface.rawValue, let id = FlowBus.sessionID(of: path) else {
                return nil
            }
            return .propertiesChanged(session: id, SessionProperty.values(in: changed))
        }
        if path == FlowBus.managerPath, interface == FlowBus.managerInterface {
            return try ManagerSignal(member: member, arguments: arguments).map(FlowEvent.manager)
        }
        if interface == FlowBus.sessionInterface, let id = FlowBus.sessionID(of: path) {
            return try SessionSignal(member: member, arguments: arguments).map { .session(id, $0) }
        }
        return nil
    }

    // MARK: - The connection

    /// The current connection, made now when there is none.
    private func currentLink() throws(FlowClientError) -> Link {
        if let link { return link }
        guard !closed else { throw FlowClientError(.disconnected, "the client was closed") }
        let connection: Connection
        do {
            connection = try Connection(configuration.bus, logger: .discard)
            try connection.attach(to: loop)
        } catch {
            throw FlowClientError(.cannotConnect, "cannot connect to the bus: \(error.message)", underlying: error)
        }
        let link = Link(connection)
        self.link = link
        reconnectTimer?.cancel()
        reconnectTimer = nil
        nextReconnectDelay = configuration.reconnectDelay
        connection.onDisconnect { [weak self, weak connection] in
            guard let connection else { return }
            self?.assumeIsolated { $0.connectionLost(connection) }
        }
        link.nameWatch = connection.subscribe(.nameOwnerChanged(for: FlowBus.name)) { [weak self] message in
            self?.assumeIsolated { $0.ownerChanged(message) }
        }
        if !subscribers.isEmpty || !watched.isEmpty {
            subscribeSignals(link)
            Task { await self.resubscribe(link) }
        }
        return link
    }

    private func subscribeSignals(_ link: Link) {
        guard link.signalWatch == nil else { return }
        link.signalWatch = link.connection.subscribe(MatchRule(sender: FlowBus.name, pathNamespace: FlowBus.managerPath)) {
            [weak self] message in
            self?.assumeIsolated { $0.received(message) }
        }
    }

    /// Asks the bus who owns flowd's name now.
    private func resolveOwner(of link: Link) async {
        let message = Message.methodCall(
            destination: .bus, path: "/org/freedesktop/DBus", interface: .bus, member: "GetNameOwner")
        let generation = ownerGeneration
        var answer: BusName?
        do {
            try message.append(.string(FlowBus.name.rawValue))
            let reply = try await exchange(message, on: link.connection, member: "GetNameOwner", timeout: configuration.callTimeout)
            var reader = reply.arguments()
            answer = BusName(rawValue: try reader.next(String.self))
        } catch {
            // NameHasNoOwner: flowd is not running; NameOwnerChanged tells when it is.
            answer = nil
        }
        guard link === self.link, generation == ownerGeneration else { return }
        owner = answer
    }

    /// After a new connection: learn flowd's name, call the watched
    /// sessions, and say so.
    private func resubscribe(_ link: Link) async {
        await resolveOwner(of: link)
        guard link === self.link, owner != nil else { return }
        await callWatchedSessions()
        announceReturn()
    }

    private func callWatchedSessions() async {
        for session in watched.sorted() {
            do {
                _ = try await call(FlowMember.Session.getStep, session: session)
            } catch where error.flowdName == .notFound || error.flowdName == .accessDenied {
                watched.remove(session)
            } catch {
                // Tried again at the next reconnection.
            }
        }
    }

    private func announceReturn() {
        guard lost else { return }
        lost = false
        yield(.reconnected)
    }

    private func announceLoss() {
        guard !lost, !subscribers.isEmpty else { return }
        lost = true
        yield(.serviceLost)
    }

    /// `NameOwnerChanged` of flowd's name.
    private func ownerChanged(_ message: Message) {
        guard let arguments = try? message.readArguments(), arguments.count == 3,
              case .string(let name) = arguments[0], name == FlowBus.name.rawValue,
              case .string(let newOwner) = arguments[2] else { return }
        ownerGeneration &+= 1
        guard let link, !newOwner.isEmpty, let unique = BusName(rawValue: newOwner) else {
            owner = nil
            announceLoss()
            return
        }
        owner = unique
        Task {
            await callWatchedSessions()
            guard link === self.link else { return }
            announceReturn()
        }
    }

    private func connectionLost(_ connection: Connection) {
        guard let link, link.connection === connection else { return }
        _ = dropLink()
        owner = nil
        announceLoss()
        if !closed && (!subscribers.isEmpty || !watched.isEmpty) { scheduleReconnection() }
    }

    /// Forgets the current connection (its subscriptions go with it).
    private func dropLink() -> Connection? {
        guard let link else { return nil }
        self.link = nil
        link.nameWatch = nil
        link.signalWatch = nil
        return link.connection
    }

    private func scheduleReconnection() {
        guard reconnectTimer == nil else { return }
        let delay = nextReconnectDelay
        nextReconnectDelay = min(delay * 2, configuration.maxReconnectDelay)
        reconnectTimer = loop.schedule(after: delay) { [weak self] in
            self?.assumeIsolated { client in
                client.reconnectTimer = nil
                guard client.link == nil, !client.closed else { return }
                do {
                    _ = try client.currentLink()
                } catch {
                    client.scheduleReconnection()
                }
            }
        }
    }

    // MARK: - Calls

    /// Calls `member` of `interface` at `path` on flowd and returns the reply.
    func call(
        _ member: MemberName, path: ObjectPath, interface: InterfaceName, _ arguments: [DBusValue] = [],
        timeout: Duration? = nil
    ) async throws(FlowClientError) -> Message {
        let connection = try currentLink().connection
        let message = Message.methodCall(destination: FlowBus.name, path: path, interface: interface, member: member)
        do {
            try message.append(contentsOf: arguments)
        } catch {
            throw FlowClientError(error, member: member)
        }
        var limit = timeout ?? configuration.callTimeout
        if configuration.allowsInteractiveAuthorization {
            message.allowsInteractiveAuthorization = true
            limit = max(limit, configuration.interactiveCallTimeout)
        }
        return try await exchange(message, on: connection, member: member, timeout: limit)
    }

    /// Calls `member` of the Session interface on session `session`.
    func call(
        _ member: MemberName, session: String, _ arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(FlowClientError) -> Message {
        try await call(member, path: try Self.path(of: session), interface: FlowBus.sessionInterface, arguments, timeout: timeout)
    }

    /// Calls `member` of the Manager interface.
    func callManager(_ member: MemberName, _ arguments: [DBusValue] = []) async throws(FlowClientError) -> Message {
        try await call(member, path: FlowBus.managerPath, interface: FlowBus.managerInterface, arguments)
    }

    /// The path of session `id`, or a refusal before anything is sent.
    static func path(of id: String) throws(FlowClientError) -> ObjectPath {
        guard let path = FlowBus.sessionPath(of: id) else {
            throw FlowClientError(
                .flowd(.invalidArgs), "\"\(id.prefix(64))\" is not a session id (32 lowercase hex characters)")
        }
        return path
    }

    /// Sends `message` and waits for its reply. Cancelling the awaiting task
    /// stops the wait at once.
    private func exchange(
        _ message: Message, on connection: Connection, member: MemberName, timeout: Duration
    ) async throws(FlowClientError) -> Message {
        let waiter = ReplyWaiter()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard waiter.install(continuation) else { return }
                waiter.sent(connection.sendWithReply(message, timeout: timeout) { waiter.resume(with: $0) })
            }
        } onCancel: {
            waiter.cancel()
        }
        switch outcome {
        case .success(let reply)?: return reply
        case .failure(let error)?: throw FlowClientError(error, member: member)
        case nil: throw FlowClientError(.cancelled, "the \(member) call was cancelled while it waited for its reply")
        }
    }
}

/// One call's wait: the reply, or the cancellation, whichever comes first,
/// resumes it exactly once.
private final class ReplyWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<Message, DBusError>?, Never>?
        var pending: PendingReply?
        var cancelled = false
        var done = false
    }

    private let state = Mutex(State())

    /// Keeps the continuation; false (and resumed) when already cancelled.
    func install(_ continuation: CheckedContinuation<Result<Message, DBusError>?, Never>) -> Bool {
        let cancelled = state.withLock { state in
            if state.cancelled {
                state.done = true
                return true
            }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(returning: nil) }
        return !cancelled
    }

    /// Keeps the call's handle, or cancels it when the wait was cancelled meanwhile.
    func sent(_ pending: PendingReply) {
        let cancel = state.withLock { state in
            if state.cancelled { return true }
            state.pending = pending
            return false
        }
        if cancel { pending.cancel() }
    }

    func cancel() {
        let pending = state.withLock { state in
            state.cancelled = true
            return state.pending
        }
        pending?.cancel()
        resume(with: nil)
    }

    /// Resumes the wait with the reply, or with nil once cancelled; only the first counts.
    func resume(with outcome: Result<Message, DBusError>?) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<Message, DBusError>?, Never>? in
            guard !state.done else { return nil }
            state.done = state.continuation != nil
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }
}

/// The loop thread every client without a loop of its own runs on.
enum ClientLoop {
    /// Made at first use and kept for the process's life.
    static let shared: EventLoopThread? = try? EventLoopThread(name: "flowd-client")
    /// The shared loop as a task executor, for ``Blocking``.
    static let taskExecutor: LoopTaskExecutor? = shared.map { LoopTaskExecutor(loop: $0.loop) }
}

import Logging
import Reactor
import Synchronization

/// A C pointer handed to a closure that runs on the loop thread.
struct UncheckedPointer: @unchecked Sendable {
    let raw: OpaquePointer
}

/// Something that answers method calls: the ``ObjectServer``.
protocol MethodCallHandler: AnyObject {
    /// Handles a received method call; false lets libdbus answer (UnknownMethod).
    func handleMethodCall(_ message: Message) -> Bool
}

/// The state libdbus' callbacks share with a ``Connection``: the filter that
/// routes messages, the loop glue (watches, timeouts, dispatch), signal
/// subscriptions. It never references the `Connection`, so libdbus holding it
/// (as callback data, released through free functions) makes no cycle.
///
/// Confined to the loop thread when attached, to the caller's thread otherwise.
///
/// Closures it hands to the loop capture it weakly: the core holds the loop,
/// so a strong capture in a job or watch left behind would be a cycle.
final class ConnectionCore: @unchecked Sendable {
    /// The libdbus connection; nil when flowd reads the bus itself (``link``).
    let raw: OpaquePointer?
    /// The bus connection flowd reads and writes itself; nil when libdbus does.
    let link: BusLink?
    let logger: Logger
    private let isClosed = Atomic<Bool>(false)
    private let dispatchScheduled = Atomic<Bool>(false)
    private(set) var loop: (any EventLoopProtocol)?

    weak var methodHandler: (any MethodCallHandler)?
    private var subscriptions: [UInt64: (rule: MatchRule, handler: @Sendable (Message) -> Void)] = [:]
    private var nextSubscription: UInt64 = 0
    private var disconnectHandlers: [@Sendable () -> Void] = []
    private var disconnected = false
    /// Calls awaiting replies, answered with an error if the connection goes
    /// first (libdbus queues a timeout for them but detaches them from the
    /// connection, so their notify would never run).
    private var pendingCalls: [ObjectIdentifier: PendingCall] = [:]
    /// Calls awaiting replies on a connection flowd reads itself.
    let replies = ReplyTable()
    /// The read watch of a connection flowd reads itself, and whether it is
    /// paused (too many bytes wait for the dispatch).
    var readWatch: WatchHandle?
    var readPaused = false
    /// Bytes buffered past which reading waits for the dispatch.
    static let readPauseBytes = 4 << 20

    /// flowd's own replies and signals not yet written (``OutgoingQueue``).
    let outgoing = OutgoingQueue()

    /// Signals received in client mode, for ``Connection/nextSignal(matching:timeout:)``.
    var signalQueue: [Message] = []
    static let signalQueueLimit = 4096

    init(raw: OpaquePointer, logger: Logger) {
        self.raw = raw
        link = nil
        self.logger = logger
    }

    init(link: BusLink, logger: Logger) {
        raw = nil
        self.link = link
        self.logger = logger
    }

    var closed: Bool { isClosed.load(ordering: .acquiring) }

    /// Marks the connection closed; true for the first caller only.
    func markClosed() -> Bool {
        !isClosed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Passes one +1 reference to libdbus as callback data; `releaseData` drops it.
    func retainedForLibDBus() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    static func from(_ data: UnsafeMutableRawPointer) -> ConnectionCore {
        Unmanaged<ConnectionCore>.fromOpaque(data).takeUnretainedValue()
    }

    // MARK: routing (the filter)

    /// Routes one message; true when it was handled here.
    func route(_ message: Message) -> Bool {
        switch message.type {
        case .signal:
            if message.isSignal(interface: .local, member: "Disconnected") {
                noteDisconnected()
                return false
            }
            deliver(signal: message)
            return false
        case .methodCall:
            return methodHandler?.handleMethodCall(message) ?? false
        case .methodReturn, .error:
            return false
        }
    }

    func deliver(signal message: Message) {
        if loop == nil {
            if signalQueue.count >= Self.signalQueueLimit { signalQueue.removeFirst() }
            signalQueue.append(message)
        }
        guard !subscriptions.isEmpty else { return }
        // Handlers may subscribe or cancel: iterate over a snapshot, in order.
        for (id, entry) in subscriptions.sorted(by: { $0.key < $1.key }) where entry.rule.matches(message) {
            guard subscriptions[id] != nil else { continue }
            entry.handler(message)
        }
    }

    func addSubscription(_ rule: MatchRule, _ handler: @escaping @Sendable (Message) -> Void) -> UInt64 {
        nextSubscription += 1
        subscriptions[nextSubscription] = (rule, handler)
        return nextSubscription
    }

    func removeSubscription(_ id: UInt64) -> MatchRule? {
        subscriptions.removeValue(forKey: id)?.rule
    }

    func addDisconnectHandler(_ handler: @escaping @Sendable () -> Void) {
        if disconnected {
            handler()
        } else {
            disconnectHandlers.append(handler)
        }
    }

    func track(_ call: PendingCall) {
        pendingCalls[ObjectIdentifier(call)] = call
    }

    func untrack(_ call: PendingCall) {
        pendingCalls[ObjectIdentifier(call)] = nil
    }

    /// Answers every call still waiting with `Disconnected`.
    func failPendingCalls() {
        let calls = pendingCalls.values
        pendingCalls = [:]
        for call in calls { call.abandon() }
        replies.failAll(.disconnected("the connection was lost before the reply arrived"))
    }

    func noteDisconnected() {
        failPendingCalls()
        guard !disconnected else { return }
        disconnected = true
        let handlers = disconnectHandlers
        disconnectHandlers = []
        for handler in handlers { handler() }
    }

    // MARK: sending

    /// `dbus_connection_send` (after the own bytes queued before it), or
    /// nothing once closed.
    func sendNow(_ message: Message) {
        guard !closed else { return }
        if let link { return sendThroughLink(message, link) }
        guard let raw else { return }
        afterOwnBytes { [raw] in _ = LibDBus.send(raw, message.raw) }
        if loop == nil { LibDBus.flush(raw) }
    }

    /// A message libdbus built, on a connection flowd writes itself:
    /// numbered and marshalled, then queued behind the own bytes (attached)
    /// or written at once (not attached).
    func sendThroughLink(_ message: Message, _ link: BusLink) {
        let (bytes, fds) = link.marshal(message)
        if loop != nil, outgoing.socket != nil {
            enqueue(bytes, fds: fds)
            return
        }
        do throws(DBusError) {
            try link.writeBlocking(bytes, fds: fds, deadline: ContinuousClock.now.advanced(by: .seconds(25)))
        } catch {
            logger.log(.warning, "cannot write to the bus: \(error.message)")
        }
    }

    /// Sends from any thread: hops to the loop when attached and elsewhere.
    func send(_ message: Message) {
        if let loop, !loop.inEventLoop {
            loop.execute { [weak self] in self?.sendNow(message) }
        } else {
            sendNow(message)
        }
    }

    // MARK: the loop glue (bluez gdbus/mainloop.c is the model)

    func attach(to loop: any EventLoopProtocol) throws(DBusError) {
        self.loop = loop
        if let link { return try attach(link, to: loop) }
        guard let raw else { return }
        let watchesOK = LibDBus.setWatchFunctions(
            raw, add: addWatchFunction, remove: removeWatchFunction, toggled: toggleWatchFunction,
            data: retainedForLibDBus(), free: releaseDataFunction)
        let timeoutsOK = LibDBus.setTimeoutFunctions(
            raw, add: addTimeoutFunction, remove: removeTimeoutFunction, toggled: toggleTimeoutFunction,
            data: retainedForLibDBus(), free: releaseDataFunction)
        guard watchesOK && timeoutsOK else {
            detachFromLoop()
            throw .failed("the event loop refused the connection's socket")
        }
        LibDBus.setWakeupMain(raw, wakeupMainFunction, data: retainedForLibDBus(), free: releaseDataFunction)
        LibDBus.setDispatchStatus(raw, dispatchStatusFunction, data: retainedForLibDBus(), free: releaseDataFunction)
        outgoing.socket = LibDBus.unixFD(raw)
        // Messages may already wait (read while registering with the bus).
        scheduleDispatchIfNeeded()
    }

    /// Removes every callback; libdbus first removes the watches and timeouts
    /// it had added, which cancels them on the loop.
    func detachFromLoop() {
        dropOutgoing()
        outgoing.socket = nil
        readWatch?.cancel()
        readWatch = nil
        guard let raw else { return }
        _ = LibDBus.setWatchFunctions(raw, add: nil, remove: nil, toggled: nil, data: nil, free: nil)
        _ = LibDBus.setTimeoutFunctions(raw, add: nil, remove: nil, toggled: nil, data: nil, free: nil)
        LibDBus.setWakeupMain(raw, nil, data: nil, free: nil)
        LibDBus.setDispatchStatus(raw, nil, data: nil, free: nil)
    }

    /// A dispatch round is queued on the loop.
    var dispatchIsScheduled: Bool { dispatchScheduled.load(ordering: .acquiring) }

    /// Queues one dispatch round on the loop, unless one is queued already.
    func scheduleDispatch() {
        guard let loop, !dispatchScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.execute { [weak self] in self?.dispatchNow() }
    }

    /// Dispatches everything queued, once closed (bounded: closing queues a
    /// finite number of synthesized messages).
    func drainAfterClose() {
        var rounds = 0
        if let raw {
            while LibDBus.dispatch(raw) && rounds < 100_000 { rounds += 1 }
        }
        noteDisconnected()
    }

    func scheduleDispatchIfNeeded() {
        guard !closed else { return }
        if let link {
            if link.mayHaveMessages || link.ended != nil { scheduleDispatch() }
        } else if let raw, LibDBus.hasDataToDispatch(raw) {
            scheduleDispatch()
        }
    }

    /// Dispatches queued messages; after a batch it yields to other loop work
    /// and continues in a new job, so one busy client cannot starve the rest.
    /// After each message the own bytes it queued are written (a reply and
    /// its signals in one `send(2)`); while some wait for the socket, nothing
    /// is dispatched (``OutgoingQueue``), and writing them resumes it.
    private func dispatchNow() {
        dispatchScheduled.store(false, ordering: .releasing)
        guard !closed else { return }
        if let link { return dispatchReceived(link) }
        guard let raw else { return }
        for _ in 0..<64 {
            guard outgoing.isEmpty else {
                outgoing.dispatchHeld = true
                return
            }
            outgoing.dispatching = true
            let moreRemains = LibDBus.dispatch(raw)
            outgoing.dispatching = false
            if !outgoing.isEmpty { flushOutgoing() }
            if !moreRemains { return }
        }
        scheduleDispatch()
    }

    final class WatchBox {
        let watch: UncheckedPointer
        var handle: WatchHandle?
        init(_ watch: OpaquePointer) { self.watch = UncheckedPointer(raw: watch) }
    }

    final class TimeoutBox {
        let timeout: UncheckedPointer
        var handle: TimerHandle?
        init(_ timeout: OpaquePointer) { self.timeout = UncheckedPointer(raw: timeout) }
    }

    fileprivate func addWatch(_ watch: OpaquePointer) -> Bool {
        guard let loop else { return false }
        let box = WatchBox(watch)
        let flags = LibDBus.watchFlags(watch)
        var events: IOEvents = []
        if flags & LibDBus.watchReadable != 0 { events.insert(.read) }
        if flags & LibDBus.watchWritable != 0 { events.insert(.write) }
        let pointer = box.watch
        do {
            let handle = try loop.watch(fd: LibDBus.watchFD(watch), events: events) { [weak self] seen in
                guard let self else { return }
                var flags: UInt32 = 0
                if seen.contains(.read) { flags |= LibDBus.watchReadable }
                if seen.contains(.write) { flags |= LibDBus.watchWritable }
                if seen.contains(.hangUp) { flags |= LibDBus.watchHangUp }
                if seen.contains(.error) { flags |= LibDBus.watchError }
                LibDBus.watchHandle(pointer.raw, flags: flags)
                scheduleDispatchIfNeeded()
            }
            if !LibDBus.watchEnabled(watch) { try handle.disable() }
            box.handle = handle
        } catch {
            logger.log(.error, "cannot watch the D-Bus socket: \(error.message)")
            box.handle?.cancel()
            return false
        }
        LibDBus.setWatchData(watch, Unmanaged.passRetained(box).toOpaque(), free: releaseDataFunction)
        return true
    }

    fileprivate static func box(of watch: OpaquePointer) -> WatchBox? {
        LibDBus.watchData(watch).map { Unmanaged<WatchBox>.fromOpaque($0).takeUnretainedValue() }
    }

    fileprivate func removeWatch(_ watch: OpaquePointer) {
        guard let box = Self.box(of: watch) else { return }
        box.handle?.cancel()
        box.handle = nil
    }

    fileprivate func toggleWatch(_ watch: OpaquePointer) {
        guard let handle = Self.box(of: watch)?.handle else { return }
        do {
            if LibDBus.watchEnabled(watch) { try handle.enable() } else { try handle.disable() }
        } catch {
            logger.log(.error, "cannot change the D-Bus socket watch: \(error.message)")
        }
    }

    fileprivate func addTimeout(_ timeout: OpaquePointer) -> Bool {
        let box = TimeoutBox(timeout)
        arm(box)
        LibDBus.setTimeoutData(timeout, Unmanaged.passRetained(box).toOpaque(), free: releaseDataFunction)
        return true
    }

    /// libdbus timeouts repeat every interval until removed or disabled.
    private func arm(_ box: TimeoutBox) {
        box.handle?.cancel()
        box.handle = nil
        guard let loop, LibDBus.timeoutEnabled(box.timeout.raw) else { return }
        let interval = Duration.milliseconds(max(LibDBus.timeoutInterval(box.timeout.raw), 0))
        let pointer = box.timeout
        box.handle = loop.schedule(after: interval, repeating: interval) { [weak self] in
            guard let self else { return }
            LibDBus.timeoutHandle(pointer.raw)
            scheduleDispatchIfNeeded()
        }
    }

    fileprivate static func box(ofTimeout timeout: OpaquePointer) -> TimeoutBox? {
        LibDBus.timeoutData(timeout).map { Unmanaged<TimeoutBox>.fromOpaque($0).takeUnretainedValue() }
    }

    fileprivate func removeTimeout(_ timeout: OpaquePointer) {
        guard let box = Self.box(ofTimeout: timeout) else { return }
        box.handle?.cancel()
        box.handle = nil
    }

    fileprivate func toggleTimeout(_ timeout: OpaquePointer) {
        guard let box = Self.box(ofTimeout: timeout) else { return }
        arm(box)
    }
}

// MARK: - C callbacks

/// Releases a +1 reference passed to libdbus as callback data.
let releaseDataFunction: LibDBus.FreeFunction = { data in
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}

let messageFilterFunction: LibDBus.HandleMessageFunction = { _, message, data in
    guard let message, let data else { return LibDBus.handlerResult(handled: false) }
    let handled = ConnectionCore.from(data).route(Message(retaining: message))
    return LibDBus.handlerResult(handled: handled)
}

private let addWatchFunction: LibDBus.AddWatchFunction = { watch, data in
    guard let watch, let data else { return 0 }
    return ConnectionCore.from(data).addWatch(watch) ? 1 : 0
}

private let removeWatchFunction: LibDBus.RemoveWatchFunction = { watch, data in
    guard let watch, let data else { return }
    ConnectionCore.from(data).removeWatch(watch)
}

private let toggleWatchFunction: LibDBus.WatchToggledFunction = { watch, data in
    guard let watch, let data else { return }
    ConnectionCore.from(data).toggleWatch(watch)
}

private let addTimeoutFunction: LibDBus.AddTimeoutFunction = { timeout, data in
    guard let timeout, let data else { return 0 }
    return ConnectionCore.from(data).addTimeout(timeout) ? 1 : 0
}

private let removeTimeoutFunction: LibDBus.RemoveTimeoutFunction = { timeout, data in
    guard let timeout, let data else { return }
    ConnectionCore.from(data).removeTimeout(timeout)
}

private let toggleTimeoutFunction: LibDBus.TimeoutToggledFunction = { timeout, data in
    guard let timeout, let data else { return }
    ConnectionCore.from(data).toggleTimeout(timeout)
}

/// Called with libdbus' lock held: never dispatch here, only queue a round.
private let dispatchStatusFunction: LibDBus.DispatchStatusFunction = { _, status, data in
    guard let data, LibDBus.dataRemains(status) else { return }
    ConnectionCore.from(data).scheduleDispatch()
}

private let wakeupMainFunction: LibDBus.WakeupMainFunction = { data in
    guard let data else { return }
    let core = ConnectionCore.from(data)
    core.loop?.execute { [weak core] in core?.scheduleDispatchIfNeeded() }
}

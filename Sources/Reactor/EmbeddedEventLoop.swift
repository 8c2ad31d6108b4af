import FlowdSystem
/// A deterministic loop for unit tests, driven by hand (swift-nio's
/// `EmbeddedEventLoop` is the model).
///
/// Nothing happens on its own: ``runPendingJobs()`` runs queued work,
/// ``advanceTime(by:)`` moves a virtual clock and fires the timers it passes,
/// and ``fire(fd:events:)`` plays the part of epoll for watched descriptors.
/// The calling thread counts as the loop thread, so use one loop from one
/// thread; ``execute(_:)`` alone is safe from other threads.
public final class EmbeddedEventLoop: EventLoopProtocol, HandleOwner, @unchecked Sendable {
    private let queued = LockedValue<[@Sendable () -> Void]>([])
    private var nextID: UInt64 = 0
    private var watches = WatchTable()
    private var timers = TimerQueue()
    private var nanoseconds: UInt64 = 0

    /// A loop at virtual time zero, with nothing queued.
    public init() {}

    /// Always true: the test's thread is the loop thread.
    public var inEventLoop: Bool { true }

    /// Virtual time since the loop was created.
    public var now: Duration { .nanoseconds(Int64(clamping: nanoseconds)) }

    /// Queues `work` for ``runPendingJobs()``.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queued.withLock { $0.append(work) }
    }

    /// Runs queued work, including work queued meanwhile, until none is left.
    public func runPendingJobs() {
        while true {
            let batch = queued.withLock { jobs in
                let batch = jobs
                jobs = []
                return batch
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }

    /// Moves the virtual clock forward, firing due timers in deadline order and
    /// running queued work after each one.
    public func advanceTime(by delta: Duration) {
        runPendingJobs()
        let target = nanoseconds &+ delta.nonNegativeNanoseconds
        while let next = timers.nextDeadline(), next <= target {
            nanoseconds = max(nanoseconds, next)
            if let handler = timers.popDue(now: nanoseconds) { handler() }
            runPendingJobs()
        }
        nanoseconds = target
    }

    /// Reports `events` on `fd` to its enabled watches, as epoll would, then
    /// runs queued work. Returns how many handlers ran.
    @discardableResult
    public func fire(fd: Int32, events: IOEvents) -> Int {
        var calls = 0
        for (id, seen) in watches.handlers(for: fd, reported: events) {
            guard let watch = watches.watches[id], watch.enabled else { continue }
            watch.handler(seen)
            calls += 1
        }
        runPendingJobs()
        return calls
    }

    /// The union of what the enabled watches of `fd` ask for (empty when none).
    public func watchedEvents(fd: Int32) -> IOEvents {
        watches.interest(of: fd)
    }

    /// Every descriptor with at least one watch, enabled or not.
    public var watchedDescriptors: [Int32] {
        watches.byFD.keys.sorted()
    }

    /// How many timers are scheduled.
    public var scheduledTimerCount: Int { timers.count }

    /// When the next timer fires, in virtual time.
    public var nextTimerDeadline: Duration? {
        timers.nextDeadline().map { .nanoseconds(Int64(clamping: $0)) }
    }

    /// Registers a watch that only ``fire(fd:events:)`` triggers.
    package func watch(
        fd: Int32, events: IOEvents, _ handler: @escaping @Sendable (IOEvents) -> Void
    ) throws(ReactorError) -> WatchHandle {
        guard fd >= 0 else { throw .invalidArgument("cannot watch negative file descriptor \(fd)") }
        nextID &+= 1
        watches.add(nextID, .init(fd: fd, events: events.intersection([.read, .write]), enabled: true, handler: handler))
        return WatchHandle(owner: self, id: nextID, fd: fd)
    }

    /// Schedules a timer on the virtual clock; ``advanceTime(by:)`` fires it.
    public func schedule(
        after delay: Duration, repeating interval: Duration?, _ handler: @escaping @Sendable () -> Void
    ) -> TimerHandle {
        nextID &+= 1
        timers.add(
            nextID, deadline: nanoseconds &+ delay.nonNegativeNanoseconds,
            interval: interval.map { max($0.nonNegativeNanoseconds, 1) }, handler: handler)
        return TimerHandle(owner: self, id: nextID)
    }

    func watchState(_ id: UInt64) -> (events: IOEvents, enabled: Bool)? {
        watches.watches[id].map { ($0.events, $0.enabled) }
    }

    func updateWatch(_ id: UInt64, events: IOEvents?, enabled: Bool?) throws(ReactorError) {
        _ = watches.update(id, events: events, enabled: enabled)
    }

    func cancelWatch(_ id: UInt64) { watches.remove(id) }
    func timerIsActive(_ id: UInt64) -> Bool { timers.timers[id] != nil }
    func cancelTimer(_ id: UInt64) { timers.cancel(id) }
    func cancelSignalHandler(_ id: UInt64) {}
}

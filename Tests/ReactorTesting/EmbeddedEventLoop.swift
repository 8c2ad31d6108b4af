import FlowdSystem
import Reactor

/// A deterministic loop for unit tests, driven by hand (swift-nio's
/// `EmbeddedEventLoop` and `NIOAsyncTestingEventLoop` are the models).
///
/// Nothing happens on its own: ``runPendingJobs()`` runs queued work and
/// actor jobs, ``advanceTime(by:)`` moves a virtual clock and fires the
/// timers it passes, and ``fire(fd:events:)`` plays the part of epoll for
/// watched descriptors. The calling thread counts as the loop thread, so use
/// one loop from one thread; ``execute(_:)`` and the executor's `enqueue`
/// alone are safe from other threads.
///
/// It is a `SerialExecutor` too: an actor whose `unownedExecutor` is the
/// loop's runs its jobs in ``runPendingJobs()``, so a test can drive an
/// actor pinned to a loop (the daemon's `FlowService`) step by step.
package final class EmbeddedEventLoop: EventLoopProtocol, HandleOwner, @unchecked Sendable {
    private let queued = LockedValue<[@Sendable () -> Void]>([])
    private var nextID: UInt64 = 0
    private var watches = WatchTable()
    private var timers = TimerQueue()
    private var nanoseconds: UInt64 = 0
    private let executor: Executor

    /// A loop at virtual time zero, with nothing queued.
    package init() {
        executor = Executor(queue: queued)
    }

    /// Always true: the test's thread is the loop thread.
    package var inEventLoop: Bool { true }

    /// Virtual time since the loop was created.
    package var now: Duration { .nanoseconds(Int64(clamping: nanoseconds)) }

    /// Queues `work` for ``runPendingJobs()``.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        queued.withLock { $0.append(work) }
    }

    /// The loop as an actor's executor: jobs run in ``runPendingJobs()``.
    package var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// True when work or actor jobs wait for ``runPendingJobs()``.
    package var hasPendingJobs: Bool { queued.withLock { !$0.isEmpty } }

    /// Runs queued work, including work queued meanwhile, until none is left.
    package func runPendingJobs() {
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
    package func advanceTime(by delta: Duration) {
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
    package func fire(fd: Int32, events: IOEvents) -> Int {
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
    package func watchedEvents(fd: Int32) -> IOEvents {
        watches.interest(of: fd)
    }

    /// Every descriptor with at least one watch, enabled or not.
    package var watchedDescriptors: [Int32] {
        watches.byFD.keys.sorted()
    }

    /// How many timers are scheduled.
    package var scheduledTimerCount: Int { timers.count }

    /// When the next timer fires, in virtual time.
    package var nextTimerDeadline: Duration? {
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
    package func schedule(
        after delay: Duration, repeating interval: Duration?, _ handler: @escaping @Sendable () -> Void
    ) -> TimerHandle {
        nextID &+= 1
        timers.add(
            nextID, deadline: nanoseconds &+ delay.nonNegativeNanoseconds,
            interval: interval.map { max($0.nonNegativeNanoseconds, 1) }, handler: handler)
        return TimerHandle(owner: self, id: nextID)
    }

    package func watchState(_ id: UInt64) -> (events: IOEvents, enabled: Bool)? {
        watches.watches[id].map { ($0.events, $0.enabled) }
    }

    package func updateWatch(_ id: UInt64, events: IOEvents?, enabled: Bool?) throws(ReactorError) {
        _ = watches.update(id, events: events, enabled: enabled)
    }

    package func cancelWatch(_ id: UInt64) { watches.remove(id) }
    package func timerIsActive(_ id: UInt64) -> Bool { timers.timers[id] != nil }
    package func cancelTimer(_ id: UInt64) { timers.cancel(id) }
    package func cancelSignalHandler(_ id: UInt64) {}

    /// The loop's `SerialExecutor`: a job is queued work like any other.
    private final class Executor: SerialExecutor {
        let queue: LockedValue<[@Sendable () -> Void]>

        init(queue: LockedValue<[@Sendable () -> Void]>) {
            self.queue = queue
        }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedSerialExecutor()
            queue.withLock { $0.append { job.runSynchronously(on: executor) } }
        }

        func asUnownedSerialExecutor() -> UnownedSerialExecutor {
            UnownedSerialExecutor(ordinary: self)
        }

        /// The test's thread is the loop's: `assumeIsolated` always holds.
        func checkIsolated() {}

        func isIsolatingCurrentContext() -> Bool? { true }
    }
}

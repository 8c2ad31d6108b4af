import FlowdSystem
import Synchronization

/// An event loop on `epoll`: one thread runs ``run()`` until ``stop()``.
///
/// - Work from other threads arrives through ``execute(_:)``, which wakes the
///   loop with an `eventfd` write (skipped when already on the loop thread).
/// - Timers share one `timerfd`, armed for the earliest deadline.
/// - Signals registered with ``onSignals(_:_:)`` are blocked and read from a
///   `signalfd`, so their handlers run as ordinary loop callbacks.
///
/// The loop never polls: between events it blocks in `epoll_wait`.
///
/// Threading: ``execute(_:)``, ``stop()`` and ``inEventLoop`` are safe from any
/// thread. Everything else (watches, timers, signals and their handles) must be
/// used on the loop thread, or before ``run()`` starts.
package final class EventLoop: EventLoopProtocol, HandleOwner, @unchecked Sendable {
    private let epoll: FileDescriptor
    private let timer: FileDescriptor
    private let wake: FileDescriptor
    private var signalFD: FileDescriptor?
    private let core: LoopCore
    private let stopRequested = Atomic<Bool>(false)

    private var nextID: UInt64 = 0
    private var watches = WatchTable()
    /// The interest each descriptor is registered with in epoll (absent: not registered).
    private var registered: [Int32: IOEvents] = [:]
    private var timers = TimerQueue()
    private var armedDeadline: UInt64?
    private var signalHandlers: [UInt64: (signals: Set<Signal>, handler: @Sendable (Signal) -> Void)] = [:]
    private var blockedSignals: Set<Signal> = []

    /// The executor that runs jobs on this loop; see ``LoopExecutor``.
    package let executor: LoopExecutor

    package var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Creates the epoll set, the wake-up eventfd and the timerfd.
    package init() throws(ReactorError) {
        let epoll = try Syscall.epollCreate()
        let wake = try Syscall.eventFD()
        let timer = try Syscall.timerFD()
        try Syscall.epollSet(epoll, fd: wake.rawValue, events: .read, add: true)
        try Syscall.epollSet(epoll, fd: timer.rawValue, events: .read, add: true)
        self.epoll = epoll
        self.timer = timer
        self.wake = wake
        let core = LoopCore(wakeFD: wake.rawValue)
        self.core = core
        self.executor = LoopExecutor(core: core)
    }

    // MARK: running

    /// True on the thread currently inside ``run()``.
    package var inEventLoop: Bool { core.inLoop }

    /// How many eventfd wake-ups `execute` has written so far.
    var wakeUpsWritten: Int { core.wakeUpsWritten.load(ordering: .relaxed) }

    /// True while a thread is inside ``run()``.
    package var isRunning: Bool { core.isRunning }

    /// Runs the loop on the calling thread until ``stop()``.
    ///
    /// Blocks the registered signals in this thread first. Jobs still queued
    /// when it returns stay queued for the next `run()`.
    package func run() throws(ReactorError) {
        precondition(core.enter(), "EventLoop.run() called while the loop is already running")
        defer {
            core.leave()
            stopRequested.store(false, ordering: .relaxed)
        }
        if !blockedSignals.isEmpty { try Self.block(blockedSignals) }

        let events = Syscall.EventBuffer(capacity: 64)
        defer { events.deallocate() }

        while true {
            core.drainRemote()
            core.runLocalJobs()
            if stopRequested.load(ordering: .relaxed) { return }
            let timeout: Int32 = core.hasLocalJobs ? 0 : -1
            let count = try Syscall.epollWait(epoll, into: events, timeout: timeout)
            for index in 0..<count {
                let (fd, reported) = events[index]
                if fd == wake.rawValue {
                    _ = Syscall.readCounter(wake)
                } else if fd == timer.rawValue {
                    _ = Syscall.readCounter(timer)
                    fireDueTimers()
                } else if let signalFD, fd == signalFD.rawValue {
                    deliverSignals(signalFD)
                } else {
                    dispatch(fd: fd, reported: reported)
                }
            }
        }
    }

    /// Makes the running (or next) ``run()`` return after its current round.
    /// Safe from any thread.
    package func stop() {
        stopRequested.store(true, ordering: .relaxed)
        core.enqueue(.work {})  // wakes epoll_wait when called from another thread
    }

    /// Runs `work` on the loop thread. Safe from any thread; from the loop
    /// thread itself it costs an array append and no system call.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        core.enqueue(.work(work))
    }

    private func requireLoopState(_ function: StaticString = #function) {
        precondition(core.mayTouchLoopState, "EventLoop.\(function) must be called on the loop thread")
    }

    private func makeID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    // MARK: watches

    /// Calls `handler` on the loop thread whenever `fd` is ready for `events`
    /// (level-triggered). Throws when epoll refuses the descriptor (for
    /// example a regular file). Loop thread only.
    package func watch(
        fd: Int32, events: IOEvents, _ handler: @escaping @Sendable (IOEvents) -> Void
    ) throws(ReactorError) -> WatchHandle {
        requireLoopState()
        guard fd >= 0 else { throw .invalidArgument("cannot watch negative file descriptor \(fd)") }
        let id = makeID()
        watches.add(id, .init(fd: fd, events: events.intersection([.read, .write]), enabled: true, handler: handler))
        do {
            try syncInterest(of: fd)
        } catch {
            watches.remove(id)
            throw error
        }
        return WatchHandle(owner: self, id: id, fd: fd)
    }

    /// Mirrors the union of enabled interests of `fd` into epoll.
    private func syncInterest(of fd: Int32) throws(ReactorError) {
        let wanted = watches.interest(of: fd)
        let current = registered[fd]
        if wanted.isEmpty {
            // Nothing asked for: leave the epoll set, or hang-ups would still be
            // reported for a descriptor nobody reads.
            if current != nil {
                registered[fd] = nil
                try Syscall.epollRemove(epoll, fd: fd)
            }
            return
        }
        if current == wanted { return }
        do {
            try Syscall.epollSet(epoll, fd: fd, events: wanted, add: current == nil)
        } catch .systemCall(_, let errno) where current == nil && errno == .fileExists {
            // A descriptor number reused before its old watch was cancelled.
            try Syscall.epollSet(epoll, fd: fd, events: wanted, add: false)
        } catch .systemCall(_, let errno) where current != nil && errno == .noSuchFileOrDirectory {
            // The descriptor was closed and re-opened under the watch.
            try Syscall.epollSet(epoll, fd: fd, events: wanted, add: true)
        }
        registered[fd] = wanted
    }

    private func dispatch(fd: Int32, reported: IOEvents) {
        for (id, seen) in watches.handlers(for: fd, reported: reported) {
            // An earlier handler of this round may have cancelled or disabled it.
            guard let watch = watches.watches[id], watch.enabled else { continue }
            watch.handler(seen)
        }
    }

    package func watchState(_ id: UInt64) -> (events: IOEvents, enabled: Bool)? {
        requireLoopState()
        return watches.watches[id].map { ($0.events, $0.enabled) }
    }

    package func updateWatch(_ id: UInt64, events: IOEvents?, enabled: Bool?) throws(ReactorError) {
        requireLoopState()
        guard let fd = watches.update(id, events: events, enabled: enabled) else { return }
        try syncInterest(of: fd)
    }

    package func cancelWatch(_ id: UInt64) {
        requireLoopState()
        guard let watch = watches.remove(id) else { return }
        // Removing interest cannot fail in a way the caller could act on.
        try? syncInterest(of: watch.fd)
    }

    // MARK: timers

    /// Calls `handler` on the loop thread after `delay`, then every `interval`
    /// if given. Loop thread only.
    package func schedule(
        after delay: Duration, repeating interval: Duration?, _ handler: @escaping @Sendable () -> Void
    ) -> TimerHandle {
        requireLoopState()
        let id = makeID()
        let deadline = MonotonicClock.now().advanced(by: delay).nanoseconds
        timers.add(id, deadline: deadline, interval: interval.map { max($0.nonNegativeNanoseconds, 1) }, handler: handler)
        rearmTimer()
        return TimerHandle(owner: self, id: id)
    }

    package func timerIsActive(_ id: UInt64) -> Bool {
        requireLoopState()
        return timers.timers[id] != nil
    }

    package func cancelTimer(_ id: UInt64) {
        requireLoopState()
        timers.cancel(id)
        // The timerfd stays armed for a stale deadline at worst: one spurious wake.
    }

    private func fireDueTimers() {
        armedDeadline = nil
        let now = MonotonicClock.now().nanoseconds
        while let handler = timers.popDue(now: now) { handler() }
        rearmTimer()
    }

    private func rearmTimer() {
        let next = timers.nextDeadline()
        guard next != armedDeadline else { return }
        do {
            try Syscall.timerFDArm(timer, deadline: next)
            armedDeadline = next
        } catch {
            // timerfd_settime fails only for invalid arguments, which we never
            // pass; make it loud in debug builds rather than lose timers silently.
            assertionFailure("\(error)")
        }
    }

    // MARK: signals

    /// Runs `handler` on the loop thread when one of `signals` arrives.
    ///
    /// The signals are blocked in the calling thread (and in the loop thread
    /// when ``run()`` starts) and read from a `signalfd`. Block them before any
    /// other thread exists, typically first thing in `main`, because a thread
    /// that does not block a signal may receive it with its default action.
    /// Loop thread only.
    @discardableResult
    package func onSignals(
        _ signals: [Signal], _ handler: @escaping @Sendable (Signal) -> Void
    ) throws(ReactorError) -> SignalHandle {
        requireLoopState()
        guard !signals.isEmpty else { throw .invalidArgument("no signals given") }
        for signal in signals where signal.rawValue <= 0 || signal.rawValue >= 65 || signal == .kill || signal == .stop {
            throw .invalidArgument("\(signal) cannot be handled")
        }
        let newSet = blockedSignals.union(signals)
        try Self.block(newSet)
        if newSet != blockedSignals || signalFD == nil {
            let fd = try Syscall.signalFD(signalFD, mask: newSet)
            if signalFD == nil {
                try Syscall.epollSet(epoll, fd: fd.rawValue, events: .read, add: true)
                signalFD = fd
            }
            blockedSignals = newSet
        }
        let id = makeID()
        signalHandlers[id] = (Set(signals), handler)
        return SignalHandle(owner: self, id: id)
    }

    /// Blocks `signals` in the calling thread, so they reach only the signalfd.
    private static func block(_ signals: Set<Signal>) throws(ReactorError) {
        do {
            try Signal.block(Array(signals))
        } catch {
            throw .systemCall(error.call, error.errno)
        }
    }

    package func cancelSignalHandler(_ id: UInt64) {
        requireLoopState()
        signalHandlers[id] = nil
    }

    private func deliverSignals(_ signalFD: FileDescriptor) {
        while let signal = Syscall.readSignal(signalFD) {
            // Registration order, so the effect does not depend on hashing.
            for (_, entry) in signalHandlers.sorted(by: { $0.key < $1.key }) where entry.signals.contains(signal) {
                entry.handler(signal)
            }
        }
    }
}

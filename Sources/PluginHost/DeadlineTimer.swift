import FlowdSystem

/// Runs actions at deadlines, on one thread of its own.
///
/// The call path's timeouts live here rather than in a `Task.sleep` per call:
/// a timer thread costs nothing per call but a heap insertion, and a timeout
/// still fires when Swift's cooperative pool is busy or blocked.
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private let lock = Lock()
    private var timers = TimerQueue()
    private var nextID: UInt64 = 1
    private var started = false

    /// The timer every ``PluginCaller`` uses.
    static let shared = DeadlineTimer()

    /// Runs `action` on the timer thread after `delay`, unless cancelled first.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = MonotonicClock.now().advanced(by: delay).nanoseconds
        var startThread = false
        let id: UInt64 = lock.withLock {
            let id = nextID
            nextID += 1
            timers.add(id, deadline: deadline, interval: nil, handler: action)
            if !started {
                started = true
                startThread = true
            }
            // The thread may be sleeping toward a later deadline.
            if timers.nextDeadline() == deadline { lock.signal() }
            return id
        }
        if startThread {
            do {
                try SystemThread.detach(name: "flowd-timeouts") { [self] in self.run() }
            } catch {
                lock.withLock { started = false }
                FileDescriptor.printError("flowd: cannot start the plugin timeout thread (\(error))")
            }
        }
        return id
    }

    /// Forgets the action `id` if it has not run yet.
    func cancel(_ id: UInt64) {
        lock.withLock { timers.cancel(id) }
    }

    private func run() {
        lock.lock()
        while true {
            let now = MonotonicClock.now().nanoseconds
            if let action = timers.popDue(now: now) {
                lock.unlock()
                action()
                lock.lock()
                continue
            }
            let wait = timers.nextDeadline().map { min($0 - now, 3_600_000_000_000) } ?? 3_600_000_000_000
            _ = lock.wait(timeout: .nanoseconds(Int64(wait)))
        }
    }
}

import FlowdSystem

/// Runs actions at deadlines, on one thread of its own.
///
/// The call path's timeouts live here rather than in a `Task.sleep` per call:
/// a timer thread costs nothing per call but a heap insertion, and a timeout
/// still fires when Swift's cooperative pool is busy or blocked.
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
    }

    private let lock = Lock()
    private var heap: [Entry] = []
    private var actions: [UInt64: @Sendable () -> Void] = [:]
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
            actions[id] = action
            push(Entry(deadline: deadline, id: id))
            if !started {
                started = true
                startThread = true
            }
            // The thread may be sleeping toward a later deadline.
            if heap.first?.id == id { lock.signal() }
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
        lock.withLock { _ = actions.removeValue(forKey: id) }
    }

    private func run() {
        lock.lock()
        while true {
            // Drop cancelled entries from the top.
            while let top = heap.first, actions[top.id] == nil {
                pop()
            }
            guard let top = heap.first else {
                _ = lock.wait(timeout: .seconds(3600))
                continue
            }
            let now = MonotonicClock.now().nanoseconds
            if top.deadline > now {
                _ = lock.wait(timeout: .nanoseconds(Int64(min(top.deadline - now, 3_600_000_000_000))))
                continue
            }
            pop()
            let action = actions.removeValue(forKey: top.id)
            lock.unlock()
            action?()
            lock.lock()
        }
    }

    // A binary min-heap on `deadline`.

    private func push(_ entry: Entry) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].deadline < heap[parent].deadline else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var i = 0
        while true {
            let left = 2 * i + 1
            let right = left + 1
            var smallest = i
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == i { return }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }
}

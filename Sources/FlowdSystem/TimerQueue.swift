/// Timers in a binary min-heap keyed by deadline (nanoseconds on some clock),
/// ties broken by scheduling order. Cancelled entries are dropped lazily.
/// The one timer queue of the package: the Reactor's loops, the plugin
/// timeout thread and the child-process watcher keep their timers here.
package struct TimerQueue {
    package struct Timer {
        var deadline: UInt64
        var interval: UInt64?
        var sequence: UInt64
        let handler: @Sendable () -> Void
    }

    private struct Slot {
        let deadline: UInt64
        let sequence: UInt64
        let id: UInt64
        func before(_ other: Slot) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    package private(set) var timers: [UInt64: Timer] = [:]
    private var heap: [Slot] = []
    private var sequence: UInt64 = 0

    package init() {}

    package var count: Int { timers.count }

    package mutating func add(_ id: UInt64, deadline: UInt64, interval: UInt64?, handler: @escaping @Sendable () -> Void) {
        sequence &+= 1
        timers[id] = Timer(deadline: deadline, interval: interval, sequence: sequence, handler: handler)
        push(Slot(deadline: deadline, sequence: sequence, id: id))
    }

    package mutating func cancel(_ id: UInt64) {
        timers[id] = nil
        // Rebuild when stale slots dominate, so cancel-heavy users (libdbus
        // timeouts per pending call) do not grow the heap without bound.
        if heap.count > 64 && heap.count > 4 * timers.count { rebuild() }
    }

    /// The earliest live deadline.
    package mutating func nextDeadline() -> UInt64? {
        dropStaleTop()
        return heap.first?.deadline
    }

    /// Removes the earliest timer if it is due at `now`, re-queues it if it
    /// repeats, and returns its handler.
    package mutating func popDue(now: UInt64) -> (@Sendable () -> Void)? {
        dropStaleTop()
        guard let top = heap.first, top.deadline <= now, var timer = timers[top.id] else { return nil }
        popTop()
        if let interval = timer.interval {
            // Drift-free: the next deadline follows the previous one, unless the
            // loop fell more than an interval behind.
            var next = timer.deadline &+ interval
            if next <= now { next = now &+ interval }
            sequence &+= 1
            timer.deadline = next
            timer.sequence = sequence
            timers[top.id] = timer
            push(Slot(deadline: next, sequence: sequence, id: top.id))
        } else {
            timers[top.id] = nil
        }
        return timer.handler
    }

    private mutating func dropStaleTop() {
        while let top = heap.first, timers[top.id]?.sequence != top.sequence { popTop() }
    }

    private mutating func rebuild() {
        heap = timers.map { Slot(deadline: $0.value.deadline, sequence: $0.value.sequence, id: $0.key) }
        heap.sort { $0.before($1) }  // a sorted array is a valid heap
    }

    private mutating func push(_ slot: Slot) {
        heap.append(slot)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].before(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].before(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].before(heap[smallest]) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

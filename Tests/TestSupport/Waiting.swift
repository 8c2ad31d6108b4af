import Foundation

extension Duration {
    /// The duration in seconds, as Foundation wants it.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// A count-down latch: threads ``countDown()``, a test ``wait(timeout:)``s for
/// zero. The timeout is an upper bound for a broken test, not a measurement.
package final class Latch: Sendable {
    private let remaining: LockedValue<Int>

    package init(count: Int = 1) {
        remaining = LockedValue(count)
    }

    /// Decrements the count; at zero, wakes the waiters.
    package func countDown() {
        remaining.withLockNotifying { $0 -= 1 }
    }

    /// True when the count reached zero before `timeout` passed.
    package func wait(timeout: Duration = .seconds(20)) -> Bool {
        remaining.wait(timeout: timeout) { $0 <= 0 }
    }
}

/// A thread-safe queue that a test reads with a timeout: loop callbacks
/// ``put(_:)`` what they see, the test ``take(timeout:)``s it.
package final class Mailbox<Item: Sendable>: Sendable {
    private let items = LockedValue<[Item]>([])

    package init() {}

    /// Adds an item and wakes a waiting reader.
    package func put(_ item: Item) {
        items.withLockNotifying { $0.append(item) }
    }

    /// The oldest item, waiting up to `timeout` for one; nil on timeout.
    package func take(timeout: Duration = .seconds(20)) -> Item? {
        let deadline = MonotonicClock.now().advanced(by: timeout)
        while true {
            if let item = items.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return item }
            let left = deadline.duration(since: MonotonicClock.now())
            guard left > .zero, items.wait(timeout: left, until: { !$0.isEmpty }) else {
                return items.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            }
        }
    }

    /// Everything received so far, without waiting.
    package var snapshot: [Item] { items.withLock { $0 } }
}

/// A value shared between a test and loop callbacks, behind a lock.
package final class Locked<Value: Sendable>: Sendable {
    private let stored: LockedValue<Value>

    package init(_ value: Value) {
        stored = LockedValue(value)
    }

    /// The current value.
    package var value: Value { stored.withLock { $0 } }

    /// Mutates the value under the lock and returns what `body` returns.
    @discardableResult
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try stored.withLock { (value: inout Value) throws -> T in try body(&value) }
    }
}

/// Waits, without holding a thread, until `condition` holds; false when
/// `timeout` passed first (an upper bound for a broken test, not a
/// measurement). For async tests whose other tasks make the condition true.
package func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while !condition() {
        guard clock.now < deadline else { return condition() }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

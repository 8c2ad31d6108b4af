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
public final class Latch: @unchecked Sendable {
    private let condition = NSCondition()
    private var remaining: Int

    public init(count: Int = 1) {
        remaining = count
    }

    /// Decrements the count; at zero, wakes the waiters.
    public func countDown() {
        condition.lock()
        remaining -= 1
        if remaining <= 0 { condition.broadcast() }
        condition.unlock()
    }

    /// True when the count reached zero before `timeout` passed.
    public func wait(timeout: Duration = .seconds(20)) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while remaining > 0 {
            if !condition.wait(until: deadline) { return remaining <= 0 }
        }
        return true
    }
}

/// A thread-safe queue that a test reads with a timeout: loop callbacks
/// ``put(_:)`` what they see, the test ``take(timeout:)``s it.
public final class Mailbox<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Item] = []

    public init() {}

    /// Adds an item and wakes a waiting reader.
    public func put(_ item: Item) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// The oldest item, waiting up to `timeout` for one; nil on timeout.
    public func take(timeout: Duration = .seconds(20)) -> Item? {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty {
            if !condition.wait(until: deadline) && items.isEmpty { return nil }
        }
        return items.removeFirst()
    }

    /// Everything received so far, without waiting.
    public var snapshot: [Item] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }
}

/// A value shared between a test and loop callbacks, behind a lock.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    public init(_ value: Value) {
        stored = value
    }

    /// The current value.
    public var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Mutates the value under the lock and returns what `body` returns.
    @discardableResult
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }
}

/// Waits, without holding a thread, until `condition` holds; false when
/// `timeout` passed first (an upper bound for a broken test, not a
/// measurement). For async tests whose other tasks make the condition true.
public func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while !condition() {
        guard clock.now < deadline else { return condition() }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

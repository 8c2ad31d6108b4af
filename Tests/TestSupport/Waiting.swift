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

/// Waits up to `timeout` (looking at `/proc/PID/stat`) until process `pid` is
/// gone or a zombie (dead, waiting for whoever reaps orphans here); false
/// when it still runs then.
package func waitUntilGone(_ pid: Int32, timeout: Duration = .seconds(20)) -> Bool {
    let deadline = MonotonicClock.now().advanced(by: timeout)
    while MonotonicClock.now() < deadline {
        guard let bytes = try? FileSystem.readFile("/proc/\(pid)/stat", limit: 4096) else { return true }
        let text = String(decoding: bytes, as: UTF8.self)
        if let close = text.lastIndex(of: ")"), text[text.index(after: close)...].hasPrefix(" Z") { return true }
        MonotonicClock.sleep(for: .milliseconds(20))
    }
    return false
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

/// Runs `body`, which blocks its thread (a wait for a child, a socket, a
/// latch), on a thread of its own and suspends until it returns. Swift's
/// cooperative pool has one thread per core (two here): a test that blocks
/// one of them holds up every other test's tasks meanwhile, and those whose
/// checks need a task to resume within seconds miss them.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let result: Result<T, any Error> = await withCheckedContinuation { continuation in
        let run: @Sendable () -> Void = { continuation.resume(returning: Result { try body() }) }
        do {
            try SystemThread.detach(name: "test-blocking", run)
        } catch {
            continuation.resume(returning: .failure(error))
        }
    }
    return try result.get()
}

/// ``offThePool(_:)`` for a body that does not throw.
package func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        do {
            try SystemThread.detach(name: "test-blocking") { continuation.resume(returning: body()) }
        } catch {
            // No thread to be had: block this one rather than fail the test.
            continuation.resume(returning: body())
        }
    }
}

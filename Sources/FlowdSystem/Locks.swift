import Glibc

// The package's one lock choice: a pthread mutex with a condition variable.
//
// Why not `Synchronization.Mutex`: it is built on raw futex calls, which
// ThreadSanitizer cannot see, so a TSan run reports every hand-over between
// threads as a race (false positives hide real ones). TSan intercepts the
// pthread functions. And plugin threads need timed condition waits, which
// `Synchronization` does not have. Atomics (`Synchronization.Atomic`) are
// still used for single words: TSan understands atomic instructions.

/// A mutual-exclusion lock (`pthread_mutex_t`) with a condition variable
/// (`pthread_cond_t` on `CLOCK_MONOTONIC`) for waiting until state guarded
/// by the lock changes.
package final class Lock: @unchecked Sendable {
    // @unchecked: the pthread objects are what makes sharing safe.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// `pthread_mutex_init`, `pthread_cond_init` with `CLOCK_MONOTONIC`.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// `pthread_mutex_lock`.
    package func lock() { pthread_mutex_lock(mutex) }

    /// `pthread_mutex_unlock`.
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    @inline(__always)
    package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// `pthread_cond_signal`: wakes one waiter. Call with the lock held.
    package func signal() { pthread_cond_signal(condition) }

    /// `pthread_cond_broadcast`: wakes every waiter. Call with the lock held.
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// `pthread_cond_wait` (nil `deadline`) or `pthread_cond_timedwait` until
    /// `deadline` on ``MonotonicClock``, with the lock held. False when the
    /// deadline passed; a spurious wake-up returns true, so re-check the state.
    @discardableResult
    package func wait(until deadline: MonotonicClock.Instant?) -> Bool {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return true
        }
        var spec = deadline.timespec
        return pthread_cond_timedwait(condition, mutex, &spec) != ETIMEDOUT
    }

    /// ``wait(until:)`` for at most `timeout` from now.
    @discardableResult
    package func wait(timeout: Duration) -> Bool {
        wait(until: MonotonicClock.now().advanced(by: timeout))
    }
}

/// A value guarded by a ``Lock``: the only way to it is ``withLock(_:)``.
package final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is only reached with `lock` held.
    private let lock = Lock()
    private var value: Value

    /// Guards `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock.
    @inline(__always)
    package func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// ``withLock(_:)``, then wakes every thread waiting in
    /// ``wait(until:timeout:)`` to look at the value again.
    package func withLockNotifying<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer {
            lock.broadcast()
            lock.unlock()
        }
        return body(&value)
    }

    /// Waits until `predicate` holds for the value (it is checked under the
    /// lock after each ``withLockNotifying(_:)``), or until `timeout` passed
    /// (nil: no limit). Returns whether it holds.
    @discardableResult
    package func wait(timeout: Duration?, until predicate: (Value) -> Bool) -> Bool {
        let deadline = timeout.map { MonotonicClock.now().advanced(by: $0) }
        lock.lock()
        defer { lock.unlock() }
        while !predicate(value) {
            if !lock.wait(until: deadline) { return predicate(value) }
        }
        return true
    }
}

/// A counting semaphore: ``signal()`` adds one, ``wait()`` takes one,
/// blocking until there is one.
package final class Semaphore: @unchecked Sendable {
    // @unchecked: `count` is only touched with `lock` held.
    private let lock = Lock()
    private var count: Int

    /// A semaphore holding `value`.
    package init(value: Int = 0) {
        count = value
    }

    /// Adds one and wakes a waiter.
    package func signal() {
        lock.withLock {
            count += 1
            lock.signal()
        }
    }

    /// Takes one, waiting as long as it takes.
    package func wait() {
        _ = wait(timeout: nil)
    }

    /// Takes one, waiting at most `timeout` (nil: no limit); false when none came.
    package func wait(timeout: Duration?) -> Bool {
        let deadline = timeout.map { MonotonicClock.now().advanced(by: $0) }
        return lock.withLock {
            while count == 0 {
                if !lock.wait(until: deadline) && count == 0 { return false }
            }
            count -= 1
            return true
        }
    }
}

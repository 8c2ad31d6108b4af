import FlowdSystem
import Synchronization

/// An ``EventLoop`` running on a thread of its own, for tests, benchmarks and
/// clients that keep their main thread. (The daemon runs its loop on the main
/// thread instead.)
///
/// The thread is running the loop when `init` returns. ``stop()`` (or deinit)
/// stops the loop and joins the thread.
package final class EventLoopThread: Sendable {
    /// The loop this thread runs.
    package let loop: EventLoop
    private let thread: SystemThread
    private let stopped = Atomic<Bool>(false)
    private let failure = LockedValue<ReactorError?>(nil)

    /// Creates a loop and starts a thread named `name` running it.
    package init(name: String = "reactor") throws(ReactorError) {
        let loop = try EventLoop()
        let started = Semaphore()
        let failure = self.failure
        self.loop = loop
        do {
            thread = try SystemThread.spawn(name: name) {
                loop.execute { started.signal() }
                do throws(ReactorError) {
                    try loop.run()
                } catch {
                    failure.withLock { $0 = error }
                    started.signal()
                }
            }
        } catch {
            throw .systemCall(error.call, error.errno)
        }
        started.wait()
    }

    deinit {
        stop()
    }

    /// The error that ended the loop early, if any.
    package var error: ReactorError? { failure.withLock { $0 } }

    /// Sends `signal` to the loop thread (`pthread_kill`).
    package func send(signal: Signal) throws(ReactorError) {
        do {
            try thread.send(signal)
        } catch {
            throw .systemCall(error.call, error.errno)
        }
    }

    /// Runs `body` on the loop thread and waits for its result. Runs it inline
    /// when called on the loop thread. Never call it from a loop callback of a
    /// different loop that this loop waits on.
    @discardableResult
    package func sync<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) throws(E) -> T {
        if loop.inEventLoop { return try body() }
        let loop = self.loop
        let result: Result<T, E> = waitForCompletion { complete in
            loop.execute { complete(Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    /// Stops the loop and joins the thread. Safe to call more than once; must
    /// not be called from the loop thread itself.
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        precondition(!loop.inEventLoop, "EventLoopThread.stop() called from its own loop thread")
        loop.stop()
        thread.join()
    }
}

/// Blocks the calling thread until `start` calls the completion it is
/// handed (once, from any thread), and returns what it was given: how a
/// synchronous program (flowctl, flowd-bench) waits for work that runs on a
/// loop or as a task. Never call it on a thread that work needs, such as
/// the loop thread the work runs on.
package func waitForCompletion<T: Sendable>(_ start: (_ complete: @escaping @Sendable (T) -> Void) -> Void) -> T {
    let done = Semaphore()
    let result = LockedValue<T?>(nil)
    start { value in
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    // The completion stores the value before it signals.
    guard let value = result.withLock({ $0 }) else { preconditionFailure("completion signalled without a value") }
    return value
}


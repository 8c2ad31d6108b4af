import CReactor
import Glibc
import Synchronization

/// An ``EventLoop`` running on a thread of its own, for tests, benchmarks and
/// clients that keep their main thread. (The daemon runs its loop on the main
/// thread instead.)
///
/// The thread is running the loop when `init` returns. ``stop()`` (or deinit)
/// stops the loop and joins the thread.
public final class EventLoopThread: Sendable {
    /// The loop this thread runs.
    public let loop: EventLoop
    private let thread: pthread_t
    private let stopped = Atomic<Bool>(false)
    private let failure: FailureBox

    private final class FailureBox: Sendable {
        let error = MutexBox<ReactorError?>(nil)
    }

    /// Creates a loop and starts a thread named `name` running it.
    public init(name: String = "reactor") throws(ReactorError) {
        let loop = try EventLoop()
        let started = Semaphore()
        let failure = FailureBox()
        self.loop = loop
        self.failure = failure
        thread = try Syscall.spawnThread(name: name) {
            loop.execute { started.signal() }
            do throws(ReactorError) {
                try loop.run()
            } catch {
                failure.error.withLock { $0 = error }
                started.signal()
            }
        }
        started.wait()
    }

    deinit {
        stop()
    }

    /// The error that ended the loop early, if any.
    public var error: ReactorError? { failure.error.withLock { $0 } }

    /// The thread's `pthread_t`, for sending it a signal in tests.
    public var pthread: pthread_t { thread }

    /// Sends `signal` to the loop thread (`pthread_kill`).
    public func send(signal: Int32) throws(ReactorError) {
        try Syscall.signalThread(thread, signal)
    }

    /// Runs `body` on the loop thread and waits for its result. Runs it inline
    /// when called on the loop thread. Never call it from a loop callback of a
    /// different loop that this loop waits on.
    @discardableResult
    public func sync<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) throws(E) -> T {
        if loop.inEventLoop { return try body() }
        let done = Semaphore()
        let result = ResultBox<T, E>()
        loop.execute {
            let value = Result { () throws(E) -> T in try body() }
            result.value.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        // The job always stores a result before signalling.
        guard let value = result.value.withLock({ $0 }) else { preconditionFailure("loop job ended without a result") }
        return try value.get()
    }

    private final class ResultBox<T: Sendable, E: Error>: Sendable {
        let value = MutexBox<Result<T, E>?>(nil)
    }

    /// Stops the loop and joins the thread. Safe to call more than once; must
    /// not be called from the loop thread itself.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        precondition(!loop.inEventLoop, "EventLoopThread.stop() called from its own loop thread")
        loop.stop()
        Syscall.joinThread(thread)
    }
}

/// Blocks the calling thread until `start` calls the completion it is
/// handed (once, from any thread), and returns what it was given: how a
/// synchronous program (flowctl, flowd-bench) waits for work that runs on a
/// loop or as a task. Never call it on a thread that work needs, such as
/// the loop thread the work runs on.
package func waitForCompletion<T: Sendable>(_ start: (_ complete: @escaping @Sendable (T) -> Void) -> Void) -> T {
    let done = Semaphore()
    let result = CompletionBox<T>()
    start { value in
        result.value.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    // The completion stores the value before it signals.
    guard let value = result.value.withLock({ $0 }) else { preconditionFailure("completion signalled without a value") }
    return value
}

private final class CompletionBox<T: Sendable>: Sendable {
    let value = MutexBox<T?>(nil)
}


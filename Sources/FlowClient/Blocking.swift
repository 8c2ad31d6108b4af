import Reactor

/// Runs async work from synchronous code (flowctl's commands, flowd-bench's
/// set-up): the calling thread blocks until the work ends.
///
/// The work runs on the clients' shared loop thread (its task prefers that
/// loop as its executor), never on Swift's cooperative pool: a thread of the
/// pool that blocks here (a synchronous test, say) cannot starve the work
/// it waits for.
package enum Blocking {
    /// Runs `body` as a task and blocks the calling thread until it ends.
    /// Never call it on the clients' shared loop thread: the work needs it.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        guard let shared = ClientLoop.shared, let executor = ClientLoop.taskExecutor else {
            preconditionFailure("the clients' event loop thread could not be started")
        }
        precondition(!shared.loop.inEventLoop, "Blocking.run on the client loop thread would never end")
        return waitForCompletion { complete in
            Task(executorPreference: executor) { complete(await body()) }
        }
    }

    /// Runs `body` as a task and blocks the calling thread until it ends.
    package static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () async throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = run { () async -> Result<T, E> in
            do throws(E) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// A task executor that runs jobs on an event loop's thread: tasks that
/// prefer it run their nonisolated code there instead of on the
/// cooperative pool.
final class LoopTaskExecutor: TaskExecutor {
    let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}

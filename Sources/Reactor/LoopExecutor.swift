/// A `SerialExecutor` that runs jobs on an ``EventLoop``'s thread.
///
/// Pin an actor to the loop so its state can be touched from loop callbacks:
///
/// ```swift
/// actor Service {
///     let loop: EventLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor {
///         loop.executor.asUnownedSerialExecutor()
///     }
/// }
/// // In a watch, timer or D-Bus handler (which run on the loop thread):
/// service.assumeIsolated { $0.handle(...) }
/// ```
///
/// Tasks created from the actor's methods inherit its isolation and therefore
/// run on the loop thread too.
package final class LoopExecutor: SerialExecutor, @unchecked Sendable {
    private let core: LoopCore

    init(core: LoopCore) {
        self.core = core
    }

    /// Queues `job` on the loop (no wake-up write when already on the loop thread).
    package func enqueue(_ job: consuming ExecutorJob) {
        core.enqueue(.task(UnownedJob(job), asUnownedSerialExecutor()))
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` succeed in loop callbacks that are not executor jobs.
    package func checkIsolated() {
        precondition(core.inLoop, "not on the event loop thread")
    }

    /// The same check as ``checkIsolated()``, without trapping.
    package func isIsolatingCurrentContext() -> Bool? {
        core.inLoop
    }
}

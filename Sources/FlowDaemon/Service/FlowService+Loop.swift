import Reactor

extension FlowService {
    /// Runs `operation` isolated to the actor, synchronously, from code that
    /// runs on the loop thread (a watch, a timer, a D-Bus handler): what
    /// `assumeIsolated` does, with the loop's own check instead of the
    /// runtime's.
    ///
    /// Why: `assumeIsolated` asks the concurrency runtime for the current
    /// executor, which on a loop callback (not an executor job) ends in the
    /// main-executor checks and the executor's `checkIsolated`: about 370
    /// instructions per entry, six entries per `SetAnswers`. Here the check
    /// is ``EventLoopProtocol/inEventLoop`` (the thread's id compared with
    /// the loop's), the very condition `LoopExecutor.checkIsolated` asserts:
    /// the loop thread runs one job or callback at a time, so being on it is
    /// being isolated to every actor the loop executes. The closure is then
    /// called as a non-isolated one, the way the standard library's
    /// `assumeIsolated` calls it.
    ///
    /// Traps off the loop thread, as `assumeIsolated` does.
    @inline(__always)
    nonisolated func assumeIsolatedOnLoop<T: Sendable, Failure: Error>(
        _ operation: (isolated FlowService) throws(Failure) -> T
    ) throws(Failure) -> T {
        precondition(loop.inEventLoop, "an actor of the event loop was entered off the loop's thread")
        typealias Isolated = (isolated FlowService) throws(Failure) -> T
        typealias Plain = (FlowService) throws(Failure) -> T
        return try withoutActuallyEscaping(operation) { (isolated: @escaping Isolated) throws(Failure) -> T in
            try unsafeBitCast(isolated, to: Plain.self)(self)
        }
    }
}

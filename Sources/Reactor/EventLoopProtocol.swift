/// What the D-Bus connection and the daemon need from an event loop: run work on
/// the loop thread, watch file descriptors and schedule timers.
///
/// Two loops implement it: ``EventLoop`` (epoll, the real one) and
/// `ReactorTesting`'s `EmbeddedEventLoop` (deterministic, driven by hand in
/// unit tests).
///
/// Threading: ``execute(_:)`` and ``inEventLoop`` are safe from any thread.
/// ``watch(fd:events:_:)``, ``schedule(after:repeating:_:)`` and the methods of
/// the handles they return must be called on the loop thread (or before the
/// loop starts running); handlers always run on the loop thread.
package protocol EventLoopProtocol: AnyObject, Sendable {
    /// True when the calling thread is the one running the loop.
    var inEventLoop: Bool { get }

    /// Runs `work` on the loop thread, after the work already queued.
    func execute(_ work: @escaping @Sendable () -> Void)

    /// The loop as a `SerialExecutor`: an actor whose `unownedExecutor` is
    /// this runs on the loop thread, and loop callbacks enter it with
    /// `assumeIsolated`.
    var unownedExecutor: UnownedSerialExecutor { get }

    /// Calls `handler` whenever `fd` is ready for one of `events` (level-triggered).
    ///
    /// Several watches may share one descriptor (libdbus adds separate read and
    /// write watches for its socket). Cancel the watch before closing `fd`.
    func watch(
        fd: Int32, events: IOEvents, _ handler: @escaping @Sendable (IOEvents) -> Void
    ) throws(ReactorError) -> WatchHandle

    /// Calls `handler` once after `delay`, then every `interval` if one is given.
    func schedule(
        after delay: Duration, repeating interval: Duration?, _ handler: @escaping @Sendable () -> Void
    ) -> TimerHandle
}

extension EventLoopProtocol {
    /// Calls `handler` once after `delay`.
    @discardableResult
    package func schedule(after delay: Duration, _ handler: @escaping @Sendable () -> Void) -> TimerHandle {
        schedule(after: delay, repeating: nil, handler)
    }
}

/// The loop side of a handle: implemented by each loop, called by the handles.
package protocol HandleOwner: AnyObject {
    func watchState(_ id: UInt64) -> (events: IOEvents, enabled: Bool)?
    func updateWatch(_ id: UInt64, events: IOEvents?, enabled: Bool?) throws(ReactorError)
    func cancelWatch(_ id: UInt64)
    func timerIsActive(_ id: UInt64) -> Bool
    func cancelTimer(_ id: UInt64)
    func cancelSignalHandler(_ id: UInt64)
}

/// A registered file-descriptor watch. Loop thread only.
///
/// The handle does not keep the watch alive and dropping it does not cancel
/// it: call ``cancel()``.
package final class WatchHandle: @unchecked Sendable {
    private weak var owner: (any HandleOwner)?
    let id: UInt64
    /// The watched descriptor.
    package let fd: Int32

    package init(owner: any HandleOwner, id: UInt64, fd: Int32) {
        self.owner = owner
        self.id = id
        self.fd = fd
    }

    /// False once cancelled (or once the loop is gone).
    package var isActive: Bool { owner?.watchState(id) != nil }

    /// The readiness the watch asks for.
    package var events: IOEvents { owner?.watchState(id)?.events ?? [] }

    /// Whether the handler is currently called.
    package var isEnabled: Bool { owner?.watchState(id)?.enabled ?? false }

    /// Starts calling the handler again.
    package func enable() throws(ReactorError) { try owner?.updateWatch(id, events: nil, enabled: true) }

    /// Stops calling the handler until ``enable()``; the registration stays.
    package func disable() throws(ReactorError) { try owner?.updateWatch(id, events: nil, enabled: false) }

    /// Changes the readiness the watch asks for.
    package func setEvents(_ events: IOEvents) throws(ReactorError) {
        try owner?.updateWatch(id, events: events, enabled: nil)
    }

    /// Removes the watch for good. Safe to call more than once.
    package func cancel() { owner?.cancelWatch(id) }
}

/// A scheduled timer. Loop thread only.
///
/// Dropping the handle does not cancel the timer: call ``cancel()``.
package final class TimerHandle: @unchecked Sendable {
    private weak var owner: (any HandleOwner)?
    let id: UInt64

    package init(owner: any HandleOwner, id: UInt64) {
        self.owner = owner
        self.id = id
    }

    /// True until a one-shot timer fired or the timer was cancelled.
    package var isActive: Bool { owner?.timerIsActive(id) ?? false }

    /// Stops the timer; its handler is not called again. Safe to call more than once.
    package func cancel() { owner?.cancelTimer(id) }
}

/// A registered signal handler. Loop thread only.
package final class SignalHandle: @unchecked Sendable {
    private weak var owner: (any HandleOwner)?
    let id: UInt64

    init(owner: any HandleOwner, id: UInt64) {
        self.owner = owner
        self.id = id
    }

    /// Removes the handler. The signals stay blocked (unblocking a pending
    /// signal could run its default action and end the process).
    package func cancel() { owner?.cancelSignalHandler(id) }
}

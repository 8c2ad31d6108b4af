import FlowdSystem

/// A part of the daemon that the composition root (``Daemon``) starts in
/// order and stops in reverse order, both on the loop thread
/// (swift-service-lifecycle's `Service`, without a task per part).
///
/// A component gets everything it needs in its `init`, as values or as the
/// parts built before it; it holds no reference to the parts built after it
/// and is never configured after `init`.
protocol DaemonComponent: AnyObject {
    /// Starts serving. When it throws, the root stops the parts started
    /// before, in reverse order, and exits with the failure's status.
    func start() throws(StartFailure)
    /// Stops: answers or cancels what is running, and releases what
    /// ``start()`` took. Called once, only after a successful start.
    func stop()
}

/// Why a part of the daemon could not start, with the exit status
/// (``SysExits``, documented in flowd(8)).
struct StartFailure: Error {
    var status: SysExits
    var message: String
}

import FlowdSystem
import Synchronization

/// Ctrl-C, SIGTERM and SIGHUP, handled on a thread of their own.
///
/// The signals are blocked in every thread and taken with `sigwait`, so the
/// handler is ordinary Swift code, not a signal handler: it may restore the
/// terminal, print a message and end the process, even while the main thread
/// is blocked in a D-Bus call or in a `read` of the terminal.
package enum Interrupts {
    /// What runs when a signal arrives, before the process ends. It returns
    /// the exit status; the default prints nothing and returns 128 + the signal.
    package typealias Handler = @Sendable (_ signal: Int32) -> Int32

    private static let handler = LockedValue<Handler?>(nil)
    private static let started = Atomic<Bool>(false)

    /// Blocks the signals and starts the signal thread. Call once, early in
    /// `main`, before any other thread exists.
    package static func install() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let signals: [Signal] = [.interrupt, .terminate, .hangUp]
        // Blocking cannot fail for these signals; without the thread, they
        // keep their default action, which also ends the process.
        try? Signal.block(signals)
        try? SystemThread.detach(name: "flowctl-signals") {
            let signal = Signal.wait(for: signals).rawValue
            TerminalGuard.shared.restore()
            let status = handler.withLock { $0 }?(signal) ?? 128 + signal
            CurrentProcess.exitImmediately(status)
        }
    }

    /// Runs `body` with `onInterrupt` as the handler, then puts the previous one back.
    package static func whileHandling<T, E: Error>(
        _ onInterrupt: @escaping Handler, _ body: () throws(E) -> T
    ) throws(E) -> T {
        let previous = handler.withLock { current in
            defer { current = onInterrupt }
            return current
        }
        defer { handler.withLock { $0 = previous } }
        return try body()
    }
}

import FlowdSystem
import Synchronization

/// Ctrl-C, SIGTERM and SIGHUP, handled on a thread of their own.
///
/// The signals are blocked in every thread and taken with `sigwait`, so the
/// handler is ordinary Swift code, not a signal handler: it may decide to
/// end the process (then the terminal is restored, its message printed, and
/// the process ends) or to let it run on, even while the main thread is
/// blocked in a D-Bus call or in a `read` of the terminal.
package enum Interrupts {
    /// What to do about a signal.
    package enum Response: Sendable {
        /// Restore the terminal, write `message` (if any) to standard output,
        /// and end the process with `status`.
        case exit(status: Int32, message: String?)
        /// Do nothing more: the program goes on (the handler told it what happened).
        case keepRunning
    }

    /// Decides what a signal (its number) means now. Without one, the process
    /// ends with 128 + the signal and no message.
    package typealias Handler = @Sendable (_ signal: Int32) -> Response

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
            while true {
                let signal = Signal.wait(for: signals).rawValue
                let response = handler.withLock { $0 }?(signal) ?? .exit(status: 128 + signal, message: nil)
                guard case .exit(let status, let message) = response else { continue }
                TerminalGuard.shared.restore()
                if let message { try? FileDescriptor.writeAll(1, message.utf8) }
                CurrentProcess.exitImmediately(status)
            }
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

import CFlowdSystem
import Glibc

/// A POSIX signal number, named by meaning like ``Errno``.
package struct Signal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The signal number.
    package let rawValue: Int32

    /// Wraps a signal number.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Hang up, also "reload the configuration". The C signal is `SIGHUP`.
    package static let hangUp = Signal(rawValue: SIGHUP)
    /// Ctrl-C. The C signal is `SIGINT`.
    package static let interrupt = Signal(rawValue: SIGINT)
    /// Illegal instruction. The C signal is `SIGILL`.
    package static let illegalInstruction = Signal(rawValue: SIGILL)
    /// Trace or breakpoint trap (Swift's `fatalError` on some paths). The C signal is `SIGTRAP`.
    package static let trap = Signal(rawValue: SIGTRAP)
    /// `abort(3)`. The C signal is `SIGABRT`.
    package static let abort = Signal(rawValue: SIGABRT)
    /// Bus error (a bad memory access). The C signal is `SIGBUS`.
    package static let busError = Signal(rawValue: SIGBUS)
    /// Arithmetic fault. The C signal is `SIGFPE`.
    package static let floatingPointError = Signal(rawValue: SIGFPE)
    /// Killed; cannot be caught, blocked or ignored. The C signal is `SIGKILL`.
    package static let kill = Signal(rawValue: SIGKILL)
    /// User-defined signal 1. The C signal is `SIGUSR1`.
    package static let user1 = Signal(rawValue: SIGUSR1)
    /// Invalid memory reference. The C signal is `SIGSEGV`.
    package static let segmentationFault = Signal(rawValue: SIGSEGV)
    /// User-defined signal 2. The C signal is `SIGUSR2`.
    package static let user2 = Signal(rawValue: SIGUSR2)
    /// A write to a pipe nobody reads. The C signal is `SIGPIPE`.
    package static let brokenPipe = Signal(rawValue: SIGPIPE)
    /// Please stop. The C signal is `SIGTERM`.
    package static let terminate = Signal(rawValue: SIGTERM)
    /// Stop; cannot be caught, blocked or ignored. The C signal is `SIGSTOP`.
    package static let stop = Signal(rawValue: SIGSTOP)
    /// Profiling timer (the Swift runtime's backtracer uses it to pause
    /// threads). The C signal is `SIGPROF`.
    package static let profilingTimer = Signal(rawValue: SIGPROF)
    /// Bad system call (a seccomp filter's verdict). The C signal is `SIGSYS`.
    package static let badSystemCall = Signal(rawValue: SIGSYS)

    /// `SIGTERM`, …, or `signal 42` for one without a name (`sigabbrev_np`).
    package var description: String {
        sigabbrev_np(rawValue).map { "SIG" + String(cString: $0) } ?? "signal \(rawValue)"
    }

    // MARK: this process's signal handling

    /// `pthread_sigmask(SIG_BLOCK)`: blocks `signals` in the calling thread
    /// and in every thread it starts afterwards.
    package static func block(_ signals: [Signal]) throws(SystemCallError) {
        var set = makeSet(signals)
        try SystemCall.checkReturned("pthread_sigmask") { pthread_sigmask(SIG_BLOCK, &set, nil) }
    }

    /// `pthread_sigmask(SIG_SETMASK)`: blocks every signal in the calling
    /// thread except `unblocked`.
    package static func blockAll(except unblocked: [Signal]) throws(SystemCallError) {
        var mask = sigset_t()
        sigfillset(&mask)
        for signal in unblocked { sigdelset(&mask, signal.rawValue) }
        try SystemCall.checkReturned("pthread_sigmask") { pthread_sigmask(SIG_SETMASK, &mask, nil) }
    }

    /// Lets `signals` neither end this process nor reach it as anything: a
    /// handler that does nothing (`SA_RESTART`). Unlike `SIG_IGN` it does not
    /// outlive `execve`, so the programs this process starts get the
    /// default actions.
    package static func disregard(_ signals: [Signal]) throws(SystemCallError) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = disregarding
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        for signal in signals {
            let result: Int32 = sigaction(signal.rawValue, &action, nil)
            guard result == 0 else { throw SystemCallError("sigaction", errno: Errno.current) }
        }
    }

    /// `sigwait(3)`: waits for one of `signals`, which must be blocked in
    /// every thread, and returns it.
    package static func wait(for signals: [Signal]) -> Signal {
        var set = makeSet(signals)
        var received: Int32 = 0
        // sigwait returns an error number only for an invalid set.
        while sigwait(&set, &received) != 0 {}
        return Signal(rawValue: received)
    }

    /// `signal(SIGPIPE, SIG_IGN)` for a process that writes to sockets and
    /// pipes: a reader that went away is an `EPIPE`, not the end of the process.
    package static func ignoreBrokenPipe() {
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
    }

    /// `kill(2)`: sends this signal to process `pid`, or with `group` to every
    /// process in the process group `pid`. A process that is gone is not an error.
    package func send(to pid: Int32, group: Bool = false) {
        _ = Glibc.kill(group ? -pid : pid, rawValue)
    }

    static func makeSet(_ signals: [Signal]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal.rawValue) }
        return set
    }
}

/// The handler of ``Signal/disregard(_:)``: async-signal-safe, as it does nothing.
private let disregarding: @convention(c) (Int32) -> Void = { _ in }

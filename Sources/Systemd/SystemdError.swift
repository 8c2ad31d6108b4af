import FlowdSystem

/// Why a message to systemd or the journal failed.
package enum SystemdError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `sd_notify` failed; `state` is what was being sent.
    case notifyFailed(Errno, state: String)
    /// A notification assignment was malformed (a bad name, or a value with
    /// a newline or NUL that would smuggle in another assignment).
    case invalidAssignment(String)
    /// `sd_journal_sendv` failed, for example because journald is not running.
    case journalFailed(Errno)
    /// The watchdog variables are malformed (`sd_watchdog_enabled` failed).
    case watchdogMisconfigured(Errno)

    /// A human sentence describing the failure.
    package var message: String {
        switch self {
        case .notifyFailed(let errno, let state):
            let first = state.split(separator: "\n").first.map(String.init) ?? state
            return "cannot notify systemd (\(first)): \("\(errno) (errno \(errno.rawValue))")"
        case .invalidAssignment(let text):
            return "invalid notification for systemd: \(text)"
        case .journalFailed(let errno):
            return "cannot write to the journal: \("\(errno) (errno \(errno.rawValue))")"
        case .watchdogMisconfigured(let errno):
            return "WATCHDOG_USEC or WATCHDOG_PID is malformed: \("\(errno) (errno \(errno.rawValue))")"
        }
    }

    package var description: String { message }
}

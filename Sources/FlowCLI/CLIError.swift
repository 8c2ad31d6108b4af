/// flowctl's exit statuses, based on `sysexits.h`. Documented in flowctl(1)
/// and docs/flowctl.md; scripts rely on them, so they never change meaning.
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Done.
    case success = 0
    /// The request was understood but did not succeed: field errors (`set`,
    /// `continue`), a failed, timed-out or cancelled submit, a step that is not
    /// finished, a call the session's state refuses, a limit, a bad flow file.
    case failure = 1
    /// `EX_USAGE`: a bad command line.
    case usage = 64
    /// `EX_DATAERR`: a value the field cannot take, refused before any call
    /// or by the daemon (`InvalidArgs`).
    case dataError = 65
    /// `EX_NOINPUT`: no such flow, session or step.
    case notFound = 66
    /// `EX_UNAVAILABLE`: flowd is not running or not reachable, or a plugin
    /// a session needs failed.
    case unavailable = 69
    /// `EX_SOFTWARE`: the daemon answered something this flowctl does not understand.
    case software = 70
    /// `EX_IOERR`: standard input or output failed.
    case ioError = 74
    /// `EX_NOPERM`: the session belongs to someone else, or the call is for root only.
    case accessDenied = 77
    /// Interrupted with Ctrl-C (128 + SIGINT); the wizard's session is kept.
    case interrupted = 130
}

/// A failure that ends a flowctl command: one line on standard error and an exit status.
public struct CLIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The exit status.
    public var code: ExitCode
    /// One human line, without the `flowctl: ` prefix.
    public var message: String

    /// An error that exits with `code` and says `message`.
    public init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A usage error (exit 64).
    public static func usage(_ message: String) -> CLIError { CLIError(.usage, message) }

    public var description: String { message }
}

import FlowdSystem

/// flowctl's exit status: sysexits.h's codes (``SysExits``, shared with
/// flowd), named for what they mean to flowctl, plus 130 for Ctrl-C.
package struct ExitCode: RawRepresentable, Hashable, Sendable {
    /// The process exit status.
    package let rawValue: Int32

    /// The exit status `rawValue`.
    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    init(_ code: SysExits) {
        rawValue = code.rawValue
    }

    /// Done.
    package static let success = ExitCode(SysExits.ok)
    /// The request was understood but did not succeed: field errors (`set`,
    /// `continue`), a failed, timed-out or cancelled submit, a step that is not
    /// finished, a call the session's state refuses, a limit, a bad flow file.
    package static let failure = ExitCode(SysExits.failure)
    /// `EX_USAGE`: a bad command line.
    package static let usage = ExitCode(SysExits.usage)
    /// `EX_DATAERR`: a value the field cannot take, refused before any call
    /// or by the daemon (`InvalidArgs`).
    package static let dataError = ExitCode(SysExits.dataError)
    /// `EX_NOINPUT`: no such flow, session or step.
    package static let notFound = ExitCode(SysExits.noInput)
    /// `EX_UNAVAILABLE`: flowd is not running or not reachable, or a plugin
    /// a session needs failed.
    package static let unavailable = ExitCode(SysExits.unavailable)
    /// `EX_SOFTWARE`: the daemon answered something this flowctl does not understand.
    package static let software = ExitCode(SysExits.software)
    /// `EX_IOERR`: standard input or output failed.
    package static let ioError = ExitCode(SysExits.ioError)
    /// `EX_NOPERM`: the session belongs to someone else, or the call is for root only.
    package static let accessDenied = ExitCode(SysExits.noPermission)
    /// Interrupted with Ctrl-C (128 + SIGINT); the wizard's session is kept.
    package static let interrupted = ExitCode(rawValue: 128 + Signal.interrupt.rawValue)
}

/// A failure that ends a flowctl command: one line on standard error and an exit status.
package struct CLIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The exit status.
    package var code: ExitCode
    /// One human line, without the `flowctl: ` prefix.
    package var message: String

    /// An error that exits with `code` and says `message`.
    package init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A usage error (exit 64).
    package static func usage(_ message: String) -> CLIError { CLIError(.usage, message) }

    package var description: String { message }
}

import Glibc

/// A terminal's settings, as `tcgetattr(3)` returns them.
package struct TerminalSettings: @unchecked Sendable {
    // @unchecked: a plain C struct of numbers, copied by value.
    fileprivate var raw: termios

    /// These settings with local echo (`ECHO`) off. `ICANON` and `ISIG` stay,
    /// so the terminal still edits the line and Ctrl-C still interrupts.
    package var withoutEcho: TerminalSettings {
        var copy = self
        copy.raw.c_lflag &= ~tcflag_t(ECHO)
        return copy
    }

    /// Whether typed characters are echoed.
    package var echoes: Bool { raw.c_lflag & tcflag_t(ECHO) != 0 }
}

/// The terminal on a descriptor: flowctl's password prompts switch echo off.
package enum Terminal {
    /// `tcgetattr(3)`; nil when `fd` is not a terminal.
    package static func settings(of fd: Int32) -> TerminalSettings? {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { return nil }
        return TerminalSettings(raw: settings)
    }

    /// `tcsetattr(3)` with `TCSANOW`: applies `settings` at once. False when
    /// `fd` is not a terminal (any more).
    @discardableResult
    package static func apply(_ settings: TerminalSettings, to fd: Int32) -> Bool {
        var raw = settings.raw
        return tcsetattr(fd, TCSANOW, &raw) == 0
    }

    /// `isatty(3)`.
    package static func isTerminal(_ fd: Int32) -> Bool {
        isatty(fd) == 1
    }

    /// Whether this process has a controlling terminal (`/dev/tty` opens).
    /// `su -c` and `runuser -c` detach a command from it while its standard
    /// input may still be the terminal.
    package static func hasControllingTerminal() -> Bool {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// The terminal's width in columns (`TIOCGWINSZ`); nil when `fd` is not
    /// a terminal or it does not say.
    package static func columns(of fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

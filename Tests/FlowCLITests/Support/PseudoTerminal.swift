import Foundation
import Glibc
import TestSupport

/// A program running on a pseudo-terminal, as a person at a terminal runs it:
/// its standard input, output and error are the terminal, it is a session
/// leader with the terminal as its controlling terminal, so Ctrl-C (``interrupt()``)
/// reaches it as SIGINT and it can switch echo off.
///
/// The test reads what the program draws (``waitFor(_:timeout:)``) and types
/// answers (``type(_:)``) only after the prompt is there, as a person would.
final class PseudoTerminal: Sendable {
    let pid: pid_t
    private let master: FileDescriptor
    private let child: ChildProcess
    private let screen = LockedValue(Screen())

    private struct Screen {
        var bytes = Data()
        /// The reader saw the end (EIO once nothing holds the other side).
        var closed = false
        /// Where the next ``waitFor(_:timeout:)`` starts looking.
        var mark = 0
    }

    /// Starts `executable` with `arguments` on a new terminal: the master
    /// through `/dev/ptmx`, the program a session leader (FlowdSystem's
    /// `ChildProcess` with `newSession`) that opens the terminal as its
    /// standard input, which makes it its controlling terminal.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        // posix_openpt, unlockpt and ptsname are not imported into Swift's
        // Glibc module: the same through /dev/ptmx and its ioctls.
        master = try FileDescriptor.open("/dev/ptmx", [.readWrite, .noControllingTerminal])
        var unlock: Int32 = 0
        var number: UInt32 = 0
        let setLock: UInt = 0x4004_5431  // TIOCSPTLCK = _IOW('T', 0x31, int)
        let getNumber: UInt = 0x8004_5430  // TIOCGPTN = _IOR('T', 0x30, unsigned int)
        guard ioctl(master.rawValue, setLock, &unlock) == 0, ioctl(master.rawValue, getNumber, &number) == 0 else {
            throw TestSupportError("cannot set up the pseudo-terminal: \(Errno.current)")
        }
        var size = winsize(ws_row: 40, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master.rawValue, UInt(TIOCSWINSZ), &size)

        var env = CurrentProcess.environment()
        env.merge(environment) { _, new in new }
        env["TERM"] = env["TERM"].flatMap { $0.isEmpty || $0 == "dumb" ? nil : $0 } ?? "xterm"
        var options = ChildProcess.Options(executable, arguments, environment: env)
        options.newSession = true
        // After setsid, opening the terminal makes it the controlling terminal.
        options.standardInput = .path("/dev/pts/\(number)", .readWrite)
        options.standardOutput = .sameAs(0)
        options.standardError = .sameAs(0)
        child = try ChildProcess(options)
        pid = child.pid
        let master = self.master
        let screen = self.screen
        try SystemThread.detach(name: "pty-reader") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = (try? master.read(into: &buffer)) ?? 0
                screen.withLockNotifying { screen in
                    if count > 0 { screen.bytes.append(contentsOf: buffer[0..<count]) } else { screen.closed = true }
                }
                // EIO once the last holder of the terminal's other side is gone.
                if count <= 0 { break }
            }
        }
    }

    /// Everything drawn so far, escape codes removed and `\r\n` as `\n`.
    var text: String {
        screen.withLock { Self.clean($0.bytes) }
    }

    /// What was drawn after the text the last ``waitFor(_:timeout:)`` matched.
    var unread: String {
        screen.withLock { screen in
            let cleaned = Self.clean(screen.bytes)
            return String(cleaned.dropFirst(min(screen.mark, cleaned.count)))
        }
    }

    /// What is drawn from the last match up to and including the next
    /// `needle` (which it waits for, and moves past); nil when `needle` does not come.
    func drawn(until needle: String, timeout: TimeInterval = 30) -> String? {
        let from = screen.withLock { $0.mark }
        guard waitFor(needle, timeout: timeout) else { return nil }
        return screen.withLock { screen in
            let cleaned = Array(Self.clean(screen.bytes))
            return String(cleaned[min(from, cleaned.count)..<min(screen.mark, cleaned.count)])
        }
    }

    /// Everything written so far, escape codes included.
    var rawText: String {
        screen.withLock { String(decoding: $0.bytes, as: UTF8.self) }
    }

    private static func clean(_ data: Data) -> String {
        strip(String(decoding: data, as: UTF8.self)).replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// Waits until `needle` appears after what the last wait matched, and
    /// moves past it; false (with the screen in `text`) on timeout or exit.
    @discardableResult
    func waitFor(_ needle: String, timeout: TimeInterval = 30) -> Bool {
        var found = false
        screen.wait(timeout: .milliseconds(Int64(timeout * 1000))) { screen in
            let cleaned = Self.clean(screen.bytes)
            let from = cleaned.index(cleaned.startIndex, offsetBy: min(screen.mark, cleaned.count))
            found = cleaned.range(of: needle, range: from..<cleaned.endIndex) != nil
            return found || (screen.closed && child.hasExited)
        }
        guard found else { return false }
        // Move the mark past the match (what was found is still there).
        return screen.withLock { screen in
            let cleaned = Self.clean(screen.bytes)
            let from = cleaned.index(cleaned.startIndex, offsetBy: min(screen.mark, cleaned.count))
            guard let range = cleaned.range(of: needle, range: from..<cleaned.endIndex) else { return false }
            screen.mark = cleaned.distance(from: cleaned.startIndex, to: range.upperBound)
            return true
        }
    }

    /// Types `line` and Enter.
    func type(_ line: String) {
        send(line + "\r")
    }

    /// Writes raw bytes to the terminal, as keys.
    func send(_ keys: String) {
        try? master.writeAll(Array(keys.utf8))
    }

    /// Ctrl-C.
    func interrupt() { send("\u{03}") }

    /// Waits for the program to end and for everything it drew to be read
    /// (the reader sees EIO once the program's side of the terminal is
    /// closed); nil if the program has not ended after `timeout`.
    func wait(timeout: TimeInterval = 30) -> Termination? {
        let limit = Duration.milliseconds(Int64(timeout * 1000))
        guard let status = child.wait(timeout: limit) else { return nil }
        screen.wait(timeout: limit) { $0.closed }
        return status
    }

    /// Whether the terminal echoes typed characters now (`tcgetattr`, `ECHO`).
    var echoes: Bool {
        Terminal.settings(of: master.rawValue)?.echoes ?? true
    }
}

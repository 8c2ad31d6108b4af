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
final class PseudoTerminal: @unchecked Sendable {
    let pid: pid_t
    private let master: Int32
    private let condition = NSCondition()
    private var screen = Data()
    private var closed = false
    private var status: ExitStatus?
    /// Where the next ``waitFor(_:timeout:)`` starts looking.
    private var mark = 0

    /// Starts `executable` with `arguments` on a new terminal (`posix_openpt`,
    /// `posix_spawn` with `POSIX_SPAWN_SETSID`).
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        // posix_openpt, unlockpt and ptsname are not imported into Swift's
        // Glibc module: the same through /dev/ptmx and its ioctls.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw TestSupportError("cannot open /dev/ptmx: \(String(cString: strerror(errno)))") }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        let setLock: UInt = 0x4004_5431  // TIOCSPTLCK = _IOW('T', 0x31, int)
        let getNumber: UInt = 0x8004_5430  // TIOCGPTN = _IOR('T', 0x30, unsigned int)
        guard ioctl(master, setLock, &unlock) == 0, ioctl(master, getNumber, &number) == 0 else {
            close(master)
            throw TestSupportError("cannot set up the pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let slavePath = "/dev/pts/\(number)"

        var size = winsize(ws_row: 40, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // After setsid, opening the terminal makes it the controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)

        var attributes = posix_spawnattr_t()
        let setsid: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc ≥ 2.26)
        initSpawnAttributes(&attributes, extraFlags: setsid)
        defer { posix_spawnattr_destroy(&attributes) }

        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        env["TERM"] = env["TERM"].flatMap { $0.isEmpty || $0 == "dumb" ? nil : $0 } ?? "xterm"
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            close(master)
            throw TestSupportError("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        startReader()
        startReaper()
    }

    deinit {
        if status == nil { kill(pid, SIGKILL) }
        close(master)
    }

    private func startReader() {
        let fd = master
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                condition.lock()
                if count > 0 { screen.append(contentsOf: buffer[0..<count]) } else { closed = true }
                condition.broadcast()
                condition.unlock()
                // EIO once the last holder of the terminal's other side is gone.
                if count <= 0 { break }
            }
        }.start()
    }

    private func startReaper() {
        let child = pid
        Thread { [self] in
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) == -1 && errno == EINTR {}
            let ended: ExitStatus = raw & 0x7f == 0 ? .exited((raw >> 8) & 0xff) : .signaled(raw & 0x7f)
            condition.lock()
            status = ended
            condition.broadcast()
            condition.unlock()
        }.start()
    }

    /// Everything drawn so far, escape codes removed and `\r\n` as `\n`.
    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return Self.clean(screen)
    }

    /// Everything written so far, escape codes included.
    var rawText: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: screen, as: UTF8.self)
    }

    private static func clean(_ data: Data) -> String {
        strip(String(decoding: data, as: UTF8.self)).replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// Waits until `needle` appears after what the last wait matched, and
    /// moves past it; false (with the screen in `text`) on timeout or exit.
    @discardableResult
    func waitFor(_ needle: String, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let cleaned = Self.clean(screen)
            let from = cleaned.index(cleaned.startIndex, offsetBy: min(mark, cleaned.count))
            if let range = cleaned.range(of: needle, range: from..<cleaned.endIndex) {
                mark = cleaned.distance(from: cleaned.startIndex, to: range.upperBound)
                return true
            }
            if closed && status != nil { return false }
            if !condition.wait(until: deadline) { return false }
        }
    }

    /// Types `line` and Enter.
    func type(_ line: String) {
        send(line + "\r")
    }

    /// Writes raw bytes to the terminal, as keys.
    func send(_ keys: String) {
        let bytes = Array(keys.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Ctrl-C.
    func interrupt() { send("\u{03}") }

    /// Waits for the program to end and for everything it drew to be read
    /// (the reader sees EIO once the program's side of the terminal is
    /// closed); nil if the program has not ended after `timeout`.
    func wait(timeout: TimeInterval = 30) -> ExitStatus? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while status == nil || !closed {
            if !condition.wait(until: deadline) { break }
        }
        return status
    }

    /// Whether the terminal echoes typed characters now (`tcgetattr`, `ECHO`).
    var echoes: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return true }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }
}

import Glibc

/// The one seam through which FlowCLI calls the C library. Everything that
/// touches a file descriptor, the terminal, signals, threads or the clock goes
/// through here, so the rest of the module is plain Swift.
enum Posix {
    /// An `errno` value with its `strerror` text.
    struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
        let code: Int32
        /// `strerror(code)`.
        var description: String { String(cString: strerror(code)) }
        static var current: Errno { Errno(code: errno) }
    }

    // MARK: file descriptors

    /// `isatty(3)`.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Writes all of `bytes` to `fd` (`write(2)`), retrying on `EINTR` and
    /// short writes. Errors (a closed pipe) are dropped: there is nobody left
    /// to tell.
    static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) {
        var buffer = Array(bytes)
        buffer.withUnsafeMutableBytes { raw in
            guard var base = raw.baseAddress else { return }
            var remaining = raw.count
            while remaining > 0 {
                let written = Glibc.write(fd, base, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                remaining -= written
                base += written
            }
        }
    }

    /// Reads one byte from `fd` (`read(2)`), retrying on `EINTR`; nil at end of input.
    static func readByte(_ fd: Int32) throws(Errno) -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count == 1 { return byte }
            if count == 0 { return nil }
            if errno == EINTR { continue }
            throw .current
        }
    }

    /// The whole content of the file at `path` (`open(2)` with `O_CLOEXEC`,
    /// `read(2)`), at most `limit` bytes plus one so a caller can tell it is over.
    static func readFile(_ path: String, limit: Int) throws(Errno) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .current }
        defer { _ = Glibc.close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { throw Errno(code: EISDIR) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while result.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .current
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// `getenv(3)`.
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Every variable of the process environment (`environ`).
    static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            pointer += 1
        }
        return result
    }

    // MARK: files

    /// This process's executable, from `readlink(2)` of `/proc/self/exe`; nil when unreadable.
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` is a regular file this process may execute (`stat(2)`, `access(2)` with `X_OK`).
    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    // MARK: terminal

    /// A terminal's settings, as `tcgetattr(3)` returns them.
    struct TerminalSettings: @unchecked Sendable {
        fileprivate var raw: termios
    }

    /// `tcgetattr(3)`; nil when `fd` is not a terminal.
    static func terminalSettings(_ fd: Int32) -> TerminalSettings? {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { return nil }
        return TerminalSettings(raw: settings)
    }

    /// `tcsetattr(3)` with `TCSAFLUSH`-free `TCSANOW`: applies `settings` now.
    @discardableResult
    static func setTerminalSettings(_ fd: Int32, _ settings: TerminalSettings) -> Bool {
        var raw = settings.raw
        return tcsetattr(fd, TCSANOW, &raw) == 0
    }

    /// `settings` with local echo (`ECHO`) switched off; `ICANON` and `ISIG`
    /// stay, so the line is still edited by the terminal and Ctrl-C still works.
    static func withoutEcho(_ settings: TerminalSettings) -> TerminalSettings {
        var copy = settings
        copy.raw.c_lflag &= ~tcflag_t(ECHO)
        return copy
    }

    /// The number of columns of the terminal on `fd` (`ioctl(TIOCGWINSZ)`), nil when unknown.
    static func terminalColumns(_ fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    // MARK: signals and threads

    /// The signals flowctl handles on its signal thread.
    static let handledSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Blocks `signals` in the calling thread and every thread it starts
    /// afterwards (`pthread_sigmask(SIG_BLOCK)`), so only a `sigwait(3)` sees them.
    static func blockSignals(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits for one of `signals` (`sigwait(3)`); they must be blocked.
    static func waitForSignal(_ signals: [Int32]) -> Int32 {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// Runs `body` on a new detached thread (`pthread_create`, `pthread_detach`).
    static func startThread(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
            return nil
        }, context)
        if result == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(context).release()
        }
    }

    /// Sleeps for `milliseconds` (`nanosleep(2)`).
    static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Ends the process now with `status` (`_exit(2)`): no atexit handlers and
    /// no stdio flushing, so it is safe while another thread is inside a call.
    static func exitNow(_ status: Int32) -> Never {
        _exit(status)
    }

    // MARK: time

    /// The local wall-clock time as `HH:MM:SS` (`clock_gettime`, `localtime_r`, `strftime`).
    static func localTimeOfDay() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "" }
        var buffer = [CChar](repeating: 0, count: 16)
        let count = strftime(&buffer, buffer.count, "%H:%M:%S", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import Glibc

/// The few system calls the benchmark makes, each turning a failure into a
/// ``BenchError`` with the C function's name and `strerror`.
enum Posix {
    /// `strerror(errno)` for the current `errno`.
    static var lastError: String { String(cString: strerror(errno)) }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Sleeps for `milliseconds` (`nanosleep`).
    static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Creates `DIR/PREFIX.XXXXXX` (`mkdtemp`).
    static func makeTemporaryDirectory(in directory: String, prefix: String) throws(BenchError) -> String {
        var template = Array("\(directory)/\(prefix).XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
        guard let made else { throw .setup("mkdtemp in \(directory): \(lastError)") }
        return String(cString: made)
    }

    /// Creates a directory with `mode` (`mkdir`).
    static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(BenchError) {
        guard mkdir(path, mode) == 0 || errno == EEXIST else { throw .setup("mkdir \(path): \(lastError)") }
    }

    /// Writes `bytes` to a new file at `path` with `mode` (`open`, `write`, `fchmod`).
    static func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws(BenchError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .setup("open \(path): \(lastError)") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .setup("write \(path): \(lastError)") }
            offset += n
        }
        guard fchmod(fd, mode) == 0 else { throw .setup("chmod \(path): \(lastError)") }
    }

    /// Writes `text` to a new file.
    static func writeFile(_ path: String, text: String, mode: mode_t = 0o600) throws(BenchError) {
        try writeFile(path, Array(text.utf8), mode: mode)
    }

    /// Reads a whole (small) file; nil when it cannot be opened.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }

    /// True when `path` exists.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The names in a directory (`opendir`/`readdir`).
    static func listDirectory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Deletes `path` and everything below it (`unlink`, `rmdir`); does not follow symbolic links.
    static func removeTree(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            for name in listDirectory(path) { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// Copies `source` to `destination` with `mode`.
    static func copyFile(_ source: String, to destination: String, mode: mode_t) throws(BenchError) {
        guard let bytes = readFile(source) else { throw .setup("cannot read \(source): \(lastError)") }
        try writeFile(destination, bytes, mode: mode)
    }

    /// The running executable's path (`readlink /proc/self/exe`).
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The current directory (`getcwd`).
    static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` made absolute against the current directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : currentDirectory() + "/" + path
    }

    /// A process's resident memory in bytes (`VmRSS` in `/proc/PID/status`); nil when unreadable.
    static func residentBytes(of pid: pid_t) -> Int? {
        guard let bytes = readFile("/proc/\(pid)/status") else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst(6).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// CPU time a process has used (user + system, `/proc/PID/stat` fields
    /// 14 and 15), in microseconds; nil when unreadable. Resolution: one
    /// clock tick (10 ms), fine over a run of seconds.
    static func cpuMicroseconds(of pid: pid_t) -> Int? {
        cpuSplit(of: pid).map { $0.user + $0.system }
    }

    /// User and system CPU time of a process in microseconds (`/proc/PID/stat`).
    static func cpuSplit(of pid: pid_t) -> (user: Int, system: Int)? {
        guard let bytes = readFile("/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        // The command name (field 2) may hold spaces: count fields after its ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so utime (14) and stime (15) are 11 and 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        let ticks = max(1, sysconf(Int32(_SC_CLK_TCK)))
        return (user * 1_000_000 / ticks, system * 1_000_000 / ticks)
    }

    /// This process's CPU time (user + system, `getrusage`), in microseconds.
    static func ownCPUMicroseconds() -> Int {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000
            + Int(usage.ru_utime.tv_usec) + Int(usage.ru_stime.tv_usec)
    }

    /// Writes a line to stderr.
    static func printError(_ line: String) {
        let text = line + "\n"
        _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    }
}

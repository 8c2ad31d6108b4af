import Glibc

/// This process: its environment, executable, directory, ids, CPU time and end.
package enum CurrentProcess {
    /// Every variable of the environment (`environ`).
    package static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            pointer += 1
        }
        return result
    }

    /// One variable of the environment (`getenv(3)`).
    package static func environmentVariable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The running executable (`/proc/self/exe`); nil when unreadable.
    package static func executablePath() -> String? {
        FileSystem.symbolicLinkTarget("/proc/self/exe")
    }

    /// The working directory (`getcwd(3)`); nil when it has been removed.
    package static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `getpid(2)`.
    package static var id: Int32 { getpid() }

    /// `getuid(2)`.
    package static var userID: UInt32 { UInt32(getuid()) }

    /// `geteuid(2)`.
    package static var effectiveUserID: UInt32 { UInt32(geteuid()) }

    /// User plus system CPU time this process used (`getrusage(RUSAGE_SELF)`).
    package static func cpuTime() -> Duration {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        let microseconds = (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
            + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
        return .microseconds(microseconds)
    }

    /// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of the CPU
    /// times in `/proc/PID/stat`.
    package static var clockTicksPerSecond: Int { max(1, sysconf(Int32(_SC_CLK_TCK))) }

    /// `exit(3)`: ends the process with `status` after the `atexit` handlers
    /// and flushing stdio.
    package static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }

    /// `_exit(2)`: ends the process now, without `atexit` handlers or stdio
    /// flushing, so it is safe while another thread is inside a call.
    package static func exitImmediately(_ status: Int32) -> Never {
        _exit(status)
    }
}
